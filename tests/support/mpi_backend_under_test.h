// The backend the MPI tests run on (label mpi; tests/CMakeLists.txt): the CPU reference unless
// RTM_TEST_BACKEND says cuda, with RTM_TEST_VARIANT and RTM_TEST_HALO_TRANSPORT, one GPU per rank
// of a node; and the environment that skips every test on all ranks together when a GPU run
// lacks a usable GPU on any of them.
#pragma once

#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "solvers/drivers/backend.h"
#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/util/device_info.h"
#endif

namespace rtm::test {

inline std::string test_backend() {
  const char* b = std::getenv("RTM_TEST_BACKEND");
  return b ? b : "cpu";
}

// The options under test; the device is this rank's index among the ranks of its node.
inline BackendOptions backend_options() {
  BackendOptions options;
  options.backend = test_backend();
  if (const char* v = std::getenv("RTM_TEST_VARIANT")) options.variant = v;
  if (const char* t = std::getenv("RTM_TEST_HALO_TRANSPORT")) options.halo_transport = t;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &options.device);
  MPI_Comm_free(&node);
  return options;
}

// GPU runs need one usable GPU per rank; elsewhere every test skips itself.
class GpuPerRank : public ::testing::Environment {
public:
  void SetUp() override {
    if (test_backend() == "cpu") return;
#ifdef RTM_HAVE_CUDA
    // Decided together: a rank that skipped while the others ran would leave them waiting in
    // the propagators' collective calls (e.g. two ranks on a machine with one GPU).
    const cuda::DeviceInfo info = cuda::query_device(backend_options().device);
    int usable = info.available ? 1 : 0, all_usable = 0;
    MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_usable)
      GTEST_SKIP() << "not every rank has a usable GPU"
                   << (info.available ? "" : " (this one: " + info.why_unavailable + ")");
#else
    GTEST_SKIP() << "this build has no CUDA kernels";
#endif
  }
};

} // namespace rtm::test
