// The main() of the GoogleTest programs run under the MPI launcher (rtm_add_mpi_gtest in
// tests/CMakeLists.txt): every rank runs every test, rank 0 alone prints the report.
#pragma once

#include <mpi.h>

#include <gtest/gtest.h>

#include "kernels/mpi/mpi_context.h"

namespace rtm::test {

// One report, rank 0's: the other ranks' printers removed (their failures still set the exit
// status). After InitGoogleTest.
inline void report_on_rank_0_only() {
  if (world_rank() == 0) return;
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
}

// MPI_Init_thread (funneled), the tests with `environment` (owned by GoogleTest; none if null),
// MPI_Finalize; the tests' exit status.
inline int run_mpi_tests(int argc, char** argv, ::testing::Environment* environment = nullptr) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  if (environment) ::testing::AddGlobalTestEnvironment(environment);
  report_on_rank_0_only();
  const int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}

} // namespace rtm::test
