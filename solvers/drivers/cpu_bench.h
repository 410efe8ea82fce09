// `rtm bench --backend cpu`: the CPU wave step against the memory bandwidth of the same cores,
// both measured in the same run (docs/variants.md, "The CPU backend").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"

namespace rtm {

// STREAM's triad a[i] = b[i] + s * c[i] over three float arrays far larger than the caches,
// OpenMP over the elements, each array first touched by the thread that later streams it.
// Bandwidth by STREAM's convention: 12 bytes per element (two reads, one write; the write-allocate
// read of a[] is not counted, so the DRAM traffic is 16 bytes and the figure is conservative).
struct CpuTriad {
  int64_t elements = 0;      // per array
  double ms_median = 0;      // one pass
  double gbs = 0;            // 12 bytes x elements / ms_median
};
CpuTriad measure_cpu_triad(int64_t elements, int repeats);

// Elements per array for the triad: at least 4x the largest cache per array (sysfs), at least
// 2^25 (128 MiB per array), and at least `cells`.
int64_t cpu_triad_elements(int64_t cells);

// The undamped CPU step (kernels/cpu/cpu_propagator.h) on random wavefields and a random stable v2dt2
// (1500-4500 m/s), as the GPU bench's random workload: for each instruction set, `repeats`
// batches of `steps` steps after `warmup_steps`; ms per step of each batch.
struct CpuStepRun {
  CpuStepIsa isa = CpuStepIsa::baseline;
  std::vector<double> ms_per_step;   // one per repeat
  double ms_per_step_median = 0;
  float max_abs_diff = 0;            // against the first run, same start, same steps (0: bitwise)
};
std::vector<CpuStepRun> run_cpu_step_bench(int nx, int ny, int nz, int steps, int repeats,
                                           int warmup_steps, const std::vector<CpuStepIsa>& isas,
                                           std::ostream& progress);

// The CPU's model name (/proc/cpuinfo, "model name"; "unknown CPU" elsewhere).
std::string cpu_model_name();

} // namespace rtm
