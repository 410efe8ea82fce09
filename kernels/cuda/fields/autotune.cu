#include "kernels/cuda/fields/autotune.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/event_timer.cuh"
#include "kernels/cuda/steps/variant_table.cuh"

namespace rtm::cuda {

namespace {

std::mutex tuning_mutex;             // guards the two below
TuningCache* tuning_cache = nullptr; // use_tuning_cache
AutotuneTotals totals;

// The variant table's rows as auto sees them: a new, renamed or changed row changes the key.
std::string table_fingerprint() {
  std::string rows;
  for (const VariantInfo& v : variant_table())
    rows += v.name + "|" + v.storage + "|" + std::to_string(v.element_bytes) + "|" +
            std::to_string(v.model_bytes) + "|" + std::to_string(v.min_compute_capability) + "|" +
            variant_role_name(v.role) + "\n";
  return tuning_fingerprint(rows);
}

TuningKey key_of(const PropagatorSetup& setup, const MemoryOptions& options, const DeviceInfo& gpu,
                 const std::vector<const VariantRow*>& candidates) {
  TuningKey key;
  key.device = gpu.name;
  key.compute_capability = compute_capability(gpu);
  key.nx = setup.layout.nx;
  key.ny = setup.layout.ny;
  key.nz = setup.layout.nz;
  key.storage = "float32";
  key.memory = memory_options_name(options);
  key.boundary = !setup.cpml.empty() ? "cpml" : !setup.damping.empty() ? "sponge" : "none";
  if (setup.free_surface) key.boundary += "+free_surface";
  for (const VariantRow* row : candidates) key.candidates.push_back(row->info.name);
  key.table = table_fingerprint();
  return key;
}

std::string times_text(const std::vector<std::pair<std::string, double>>& ms_per_step) {
  std::string text = "(ms/step:";
  for (const auto& [name, ms] : ms_per_step) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s %.3f", name.c_str(), ms);
    text += buf;
  }
  return text + ")";
}

void count(double seconds, bool from_cache) {
  const std::lock_guard<std::mutex> lock(tuning_mutex);
  ++totals.choices;
  totals.from_cache += from_cache ? 1 : 0;
  totals.seconds += seconds;
}

} // namespace

void use_tuning_cache(TuningCache* cache) {
  const std::lock_guard<std::mutex> lock(tuning_mutex);
  tuning_cache = cache;
}

AutotuneTotals autotune_totals() {
  const std::lock_guard<std::mutex> lock(tuning_mutex);
  return totals;
}

std::unique_ptr<CudaWavefield> make_fastest(const PropagatorSetup& setup,
                                             const MemoryOptions& options, int device,
                                             std::ostream* log) {
  constexpr int kWarmupSteps = 2, kTimedSteps = 5;
  const auto began = std::chrono::steady_clock::now();
  auto seconds = [&began] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  };
  const DeviceInfo gpu = query_device(device);
  std::vector<const VariantRow*> candidates;
  for (const VariantInfo* kernel : auto_candidates(compute_capability(gpu)))
    candidates.push_back(&row_of(*kernel));
  const GridLayout& g = setup.layout;
  char grid[64];
  std::snprintf(grid, sizeof grid, "%dx%dx%d", g.nx, g.ny, g.nz);

  TuningCache* cache = nullptr;
  {
    const std::lock_guard<std::mutex> lock(tuning_mutex);
    cache = tuning_cache;
  }
  const TuningKey key = key_of(setup, options, gpu, candidates);
  std::string note;
  TuningChoice remembered;
  if (cache && cache->find(key, remembered, note)) {
    // Only a candidate of this very table: an entry naming another is not trusted.
    const auto row = std::find_if(candidates.begin(), candidates.end(), [&](const VariantRow* r) {
      return r->info.name == remembered.variant;
    });
    if (row != candidates.end()) {
      auto propagator = std::make_unique<CudaWavefield>(setup, **row, options, device);
      count(seconds(), true);
      if (log)
        *log << "rtm: --variant auto chose " << remembered.variant << " on " << grid << " from "
             << cache->describe() << ", as timed before " << times_text(remembered.ms_per_step)
             << "; RTM_TUNING_CACHE=off times the kernels again\n";
      return propagator;
    }
  }
  if (log && !note.empty()) *log << "rtm: --variant auto: " << note << "; timing the kernels\n";

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
  TuningChoice choice;
  choice.variant = best->second->info.name;
  for (const auto& [ms, row] : timings) choice.ms_per_step.emplace_back(row->info.name, double(ms));
  note.clear();
  if (cache) cache->remember(key, choice, note);
  count(seconds(), false);
  if (log) {
    *log << "rtm: --variant auto chose " << choice.variant << " on " << grid << " "
         << times_text(choice.ms_per_step);
    // Why it timed: no cache, or none of its choices for this key (device, grid, options, table).
    if (!cache) *log << "; no tuning cache";
    else if (note.empty())
      *log << "; timed (no choice for this device, grid and kernels in " << cache->describe()
           << "), remembered there";
    else *log << "; not remembered: " << note;
    *log << "\n";
  }
  return propagator;
}

} // namespace rtm::cuda
