// The CUDA TTI kernels as host code sees them (plain C++, no CUDA types): a few steps from host
// state, for the GPU tests against the CPU reference, and the benchmark of `rtm bench --physics tti`.
// (Not yet a Wavefield: `rtm model/migrate --physics tti` step on the CPU reference; docs/physics.md.)
#pragma once

#include <string>
#include <vector>

#include "kernels/cuda/bench.h"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

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
