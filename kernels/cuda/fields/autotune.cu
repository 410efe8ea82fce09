#include "kernels/cuda/fields/autotune.cuh"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <utility>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/event_timer.cuh"
#include "kernels/cuda/steps/variant_table.cuh"

namespace rtm::cuda {

std::unique_ptr<CudaWavefield> make_fastest(const PropagatorSetup& setup,
                                             const MemoryOptions& options, int device,
                                             std::ostream* log) {
  constexpr int kWarmupSteps = 2, kTimedSteps = 5;
  std::vector<const VariantRow*> candidates;
  for (const VariantInfo* kernel : auto_candidates(compute_capability(query_device(device))))
    candidates.push_back(&row_of(*kernel));
  auto propagator = std::make_unique<CudaWavefield>(setup, *candidates.front(), options, device);
  propagator->fill_random_state(0x5eed);
  EventTimer timer;
  std::vector<std::pair<float, const VariantRow*>> timings;
  for (const VariantRow* row : candidates) {
    propagator->use_kernel(*row);
    for (int s = 0; s < kWarmupSteps; ++s) propagator->step();
    const double ms = timer.time(propagator->stream(), [&] {
      for (int s = 0; s < kTimedSteps; ++s) propagator->step();
    });
    timings.emplace_back(float(ms) / kTimedSteps, row);
  }
  const auto best = std::min_element(timings.begin(), timings.end(),
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
  propagator->use_kernel(*best->second);
  propagator->zero_state();
  if (log) {
    const GridLayout& g = setup.layout;
    *log << "rtm: --variant auto chose " << best->second->info.name << " on " << g.nx << "x" << g.ny
         << "x" << g.nz << " (ms/step:";
    for (const auto& [ms, row] : timings) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.3f", row->info.name.c_str(), double(ms));
      *log << buf;
    }
    *log << ")\n";
  }
  return propagator;
}

} // namespace rtm::cuda
