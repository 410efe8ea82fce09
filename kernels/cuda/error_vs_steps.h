// The error of storage schemes against step count (`rtm bench --error-vs-steps`,
// docs/variants.md): the point workload run by a reference variant and every other variant side
// by side, from rest, the same source injected into each; every `every` steps each variant's
// current wavefield is compared with the reference's on the device. Plain C++, no CUDA types.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "kernels/cuda/bench.h"

namespace rtm::cuda {

struct ErrorVsSteps {
  std::string reference;             // the variant every other is compared with
  std::vector<std::string> variants; // the compared variants, in the order asked
  std::vector<int> steps;            // steps done at each sample
  std::vector<std::vector<double>> error; // [variant][sample]: relative L2 over the interior
};

// `series[n]` is injected at `source` with `scale` before step n, as in run_point_workload; all
// wavefields are alive at once (the caller's GPU must hold 1 + variants.size() of them). Samples
// every `every` steps and after the last one. Progress lines go to `progress`.
ErrorVsSteps run_error_vs_steps(const BenchConfig& config, const PropagatorSetup& setup,
                                const PointStencil& source, const std::vector<float>& series,
                                float scale, const std::string& reference,
                                const std::vector<std::string>& variants, int every,
                                std::ostream& progress);

} // namespace rtm::cuda
