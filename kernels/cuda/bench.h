// Benchmark building blocks for `rtm bench` and `rtm info`: plain C++, no CUDA types.
//
// Every figure is timed with device events around the measured work, after warm-up, and reported
// as a median of repeats (docs/variants.md says how to read the table).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"

namespace rtm::cuda {

// Device-to-device cudaMemcpy of a large buffer: (bytes read + bytes written) / time, in GB/s.
double measure_device_copy_gbs(int device = 0);

// The streaming limit of one float32 wave step: a kernel with the step's ideal traffic (reads
// three arrays and writes a fourth, 16 bytes per cell, no neighbours) with 16-byte accesses.
struct StreamingLimit {
  int64_t cells = 0;
  double ms_median = 0;     // one pass over `cells`
  double gbs = 0;           // 16 bytes x cells / ms_median
  double gcells_per_s = 0;  // cells / ms_median
};
StreamingLimit measure_streaming_limit(int64_t cells, int repeats, int device = 0);

// How the workloads are run; the workloads themselves (grid, medium, time step, source) come from
// the caller as plain setups (solvers/drivers/bench_workloads.h builds the ones `rtm bench` uses).
struct BenchConfig {
  int steps = 100;        // random workload: steps per timed repeat
  int repeats = 5;        // random workload: timed repeats (the median is reported)
  int warmup_steps = 5;   // untimed steps before the timed ones
  MemoryOptions memory;   // combined with the options each variant name turns on (presets)
  int device = 0;
};

// One variant on the random workload: random wavefields (non-zero everywhere) on the caller's
// setup (a random v2dt2 of a stable medium); steady throughput.
struct RandomRun {
  std::string variant;
  std::string propagator;            // the propagator's name, memory options included
  std::vector<double> ms_per_step;   // one per repeat: batch time / steps
  double ms_per_step_median = 0;
  double error = 0;                  // relative L2 against the first variant, same steps
  std::string memory_note;           // a requested memory option that is not in effect, and why
};

// One variant on the physical workload: a point source from a zero wavefield (the wavefield is
// mostly zero early on), one step per value of the source series.
struct PointRun {
  std::string variant;
  std::string propagator;
  std::vector<double> step_ms;       // every step: source injection + wave step
  double error = 0;                  // relative L2 against the first variant, same steps
  std::string memory_note;
};

// The first variant is the reference: it runs first and every variant's final wavefield is
// compared with its final wavefield (same grid, same steps, same start). Progress lines go to
// `progress`.
std::vector<RandomRun> run_random_workload(const BenchConfig& config, const PropagatorSetup& setup,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress);
// `series[n]` is injected at `source` with `scale` before step n (PointSet::inject).
std::vector<PointRun> run_point_workload(const BenchConfig& config, const PropagatorSetup& setup,
                                         const PointStencil& source,
                                         const std::vector<float>& series, float scale,
                                         const std::vector<std::string>& variants,
                                         std::ostream& progress);

} // namespace rtm::cuda
