// The CUDA TTI kernels as host code sees them (plain C++, no CUDA types): the TTI wavefield and
// shot fields of `rtm model/migrate --physics tti` on a GPU (kernels/cuda/tti/cuda_tti_wavefield.cuh),
// a few steps from host state for the GPU tests against the CPU reference, and the benchmark of
// `rtm bench --physics tti`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/bench.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"

namespace rtm::cuda {

// The TTI variants' names ("tti-naive", "tti-pipelined"), and whether `name` is one of them.
std::vector<std::string> tti_variant_names();
bool is_tti_variant(const std::string& name);
// The variant a TTI run takes when none is named ("auto"): the cp.async pipeline.
constexpr const char* kDefaultTtiVariant = "tti-pipelined";

// A TTI wavefield (solvers/contracts/wavefield.h) running `variant` (a TTI variant name) on GPU
// `device`, for a setup with TTI coefficients and the sponge: the CPU reference's contract
// (kernels/cpu/tti_propagator.h). std::invalid_argument for another name, std::runtime_error with
// both numbers when it does not fit in free device memory.
std::unique_ptr<Wavefield> make_cuda_tti_wavefield(const PropagatorSetup& setup, const std::string& variant,
                                                   int device = 0);
// A shot's source and receiver TTI fields running `variant` on GPU `device`, with the image
// S_p R_p and the Born source C (m S_p, 0) in device memory.
std::unique_ptr<ShotFields> make_cuda_tti_shot_fields(const PropagatorSetup& setup, const std::string& variant,
                                                      int device = 0);

// The fields of a TTI step in tti_layout(setup.layout): prev = (p[n-1], q[n-1]), cur = (p[n], q[n]).
struct TtiState {
  std::vector<float> prev, cur;
};

// `steps` steps of `variant` ("tti-naive", "tti-pipelined") on planes [k_begin, k_end) of the
// setup's grid (k_end < 0: all), from `start`, on GPU `device`: the final state, every float of the
// arrays (halo and padding as the kernels left them). The setup needs TTI coefficients.
TtiState run_tti_steps(const PropagatorSetup& setup, const std::string& variant, const TtiState& start,
                       int steps, int k_begin = 0, int k_end = -1, int device = 0);

struct TtiBenchRun {
  std::string variant;
  double ms_per_step = 0;  // median over repeats
  double gcells_per_s = 0;
  double error = 0;        // relative L2 of the final state against the first variant's
};
struct TtiBench {
  std::vector<TtiBenchRun> runs;
  StreamingLimit streaming;        // measured in the same run: the memory roofline (GB/s)
  double peak_fp32_gflops = 0;     // SMs x 128 FP32 lanes x 2 flops x boost clock (0: unknown)
  double flops_per_cell = 0;       // kTtiFlopsPerCell
  double bytes_per_cell = 0;       // ideal DRAM traffic of both passes (docs/variants.md, TTI)
};
TtiBench run_tti_bench(const PropagatorSetup& setup, int steps, int repeats, int device = 0);

} // namespace rtm::cuda
