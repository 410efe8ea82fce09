#include "kernels/cuda/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/util/cuda_stream.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/util/event_timer.cuh"
#include "solvers/contracts/median.h"
#include "kernels/cuda/fields/field_ops.cuh"
#include "kernels/cuda/steps/variant_table.cuh"

namespace rtm::cuda {
namespace {

// The streaming kernel: per cell, read three arrays and write a fourth (16 bytes), with the
// step's own arithmetic shape (2a - b + c a) and 16-byte accesses.
__global__ void streaming_kernel(const float4* __restrict__ a, const float4* __restrict__ b,
                                 const float4* __restrict__ c, float4* __restrict__ d, int64_t n4) {
  const int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (n >= n4) return;
  const float4 va = __ldcs(a + n), vb = __ldcs(b + n), vc = __ldcs(c + n);
  float4 r;
  r.x = 2.0f * va.x - vb.x + vc.x * va.x;
  r.y = 2.0f * va.y - vb.y + vc.y * va.y;
  r.z = 2.0f * va.z - vb.z + vc.z * va.z;
  r.w = 2.0f * va.w - vb.w + vc.w * va.w;
  d[n] = r;
}

std::unique_ptr<CudaWavefield> make_bench_propagator(const PropagatorSetup& setup,
                                                     const std::string& variant,
                                                     const BenchConfig& config) {
  const VariantSelection chosen = find_variant(variant);
  return std::make_unique<CudaWavefield>(setup, row_of(*chosen.kernel),
                                         combined(chosen.memory, config.memory), config.device);
}

void check_config(const BenchConfig& c, const PropagatorSetup& setup,
                  const std::vector<std::string>& variants) {
  const GridLayout& g = setup.layout;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1) throw std::invalid_argument("bench: grid must be positive");
  if (c.steps < 1 || c.repeats < 1 || c.warmup_steps < 0)
    throw std::invalid_argument("bench: steps and repeats must be positive");
  if (variants.empty()) throw std::invalid_argument("bench: no variant to run");
  for (const std::string& v : variants) find_variant(v, {}); // throws for unknown names
}

} // namespace

double measure_device_copy_gbs(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // 1 GiB each way (far beyond any L2), less where memory is short.
  const size_t bytes = std::min<size_t>(size_t(1) << 30, free_bytes / 4) & ~size_t(255);
  if (bytes == 0) throw std::runtime_error("measure_device_copy_gbs: no free device memory");
  DeviceBuffer src(bytes, AllocationKind::plain, device, "the copy source"),
      dst(bytes, AllocationKind::plain, device, "the copy destination");
  Stream stream;
  CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, stream));
  const std::vector<double> ms = time_launches(stream, {2, 10}, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  return 2.0 * double(bytes) / (median(ms) * 1e-3) / 1e9;
}

StreamingLimit measure_streaming_limit(int64_t cells, int repeats, int device) {
  if (cells < 1 || repeats < 1) throw std::invalid_argument("measure_streaming_limit: bad size");
  CUDA_CHECK(cudaSetDevice(device));
  const int64_t n4 = (cells + 3) / 4;
  const size_t bytes = size_t(n4) * sizeof(float4);
  // Four arrays whose roles rotate every pass, like the wave step's buffers, so that a pass
  // never reads what the previous pass left in L2 under the same role.
  std::vector<DeviceBuffer> arrays;
  for (int a = 0; a < 4; ++a) arrays.emplace_back(bytes, AllocationKind::plain, device);
  Stream stream;
  for (int a = 0; a < 4; ++a)
    fill_random(arrays[size_t(a)].data(), Storage::fp32, 4 * n4, 100 + a, stream);
  constexpr int kThreads = 256;
  const int64_t blocks = (n4 + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffff) throw std::invalid_argument("measure_streaming_limit: grid too large");
  int pass = 0; // each pass shifts the roles by one
  const std::vector<double> ms = time_launches(stream, {3, repeats}, [&] {
    auto array = [&](int role) { return arrays[size_t((pass + role) % 4)].as<float4>(); };
    streaming_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(array(0), array(1), array(2),
                                                                 array(3), n4);
    CUDA_CHECK_LAUNCH("streaming_kernel");
    ++pass;
  });
  StreamingLimit limit;
  limit.cells = cells;
  limit.ms_median = median(ms);
  limit.gcells_per_s = double(cells) / (limit.ms_median * 1e-3) / 1e9;
  limit.gbs = 16.0 * limit.gcells_per_s;
  return limit;
}

std::vector<RandomRun> run_random_workload(const BenchConfig& config, const PropagatorSetup& setup,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress) {
  check_config(config, setup, variants);
  std::unique_ptr<CudaWavefield> reference; // the first variant, kept for the comparisons
  std::vector<RandomRun> runs;
  for (const std::string& variant : variants) {
    auto propagator = make_bench_propagator(setup, variant, config);
    propagator->fill_random_state(2024); // the same start for every variant
    for (int s = 0; s < config.warmup_steps; ++s) propagator->step();
    RandomRun run;
    run.variant = variant;
    run.propagator = propagator->name();
    run.memory_note = propagator->memory_note();
    EventTimer timer;
    for (int r = 0; r < config.repeats; ++r) {
      const double ms = timer.time(propagator->stream(), [&] {
        for (int s = 0; s < config.steps; ++s) propagator->step();
      });
      run.ms_per_step.push_back(ms / config.steps);
    }
    run.ms_per_step_median = median(run.ms_per_step);
    if (!reference) {
      reference = std::move(propagator);
      run.error = 0.0;
    } else {
      run.error = relative_l2_difference(setup.layout, propagator->current_field(),
                                         reference->current_field(), propagator->stream());
    }
    char line[256];
    std::snprintf(line, sizeof line, "bench: random  %-16s %8.3f ms/step  error %.2e\n",
                  variant.c_str(), run.ms_per_step_median, run.error);
    progress << line << std::flush;
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<PointRun> run_point_workload(const BenchConfig& config, const PropagatorSetup& setup,
                                         const PointStencil& source,
                                         const std::vector<float>& series, float scale,
                                         const std::vector<std::string>& variants,
                                         std::ostream& progress) {
  check_config(config, setup, variants);
  if (series.empty()) throw std::invalid_argument("bench: point workload needs at least one step");
  const int steps = int(series.size());
  const GridLayout& g = setup.layout;

  std::unique_ptr<CudaWavefield> reference;
  std::vector<PointRun> runs;
  for (const std::string& variant : variants) {
    auto propagator = make_bench_propagator(setup, variant, config);
    const std::unique_ptr<PointSet> set = propagator->add_points({source}, steps);
    set->upload_series(series);
    // Warm-up: load the kernels and touch the buffers, then start from rest.
    for (int s = 0; s < 2; ++s) {
      set->inject(0, scale);
      propagator->step();
    }
    propagator->zero_state();
    PointRun run;
    run.variant = variant;
    run.propagator = propagator->name();
    run.memory_note = propagator->memory_note();
    std::vector<Event> marks(size_t(steps) + 1);
    marks[0].record(propagator->stream());
    for (int s = 0; s < steps; ++s) {
      set->inject(s, scale);
      propagator->step();
      marks[size_t(s) + 1].record(propagator->stream());
    }
    marks.back().synchronize();
    run.step_ms.reserve(size_t(steps));
    for (int s = 0; s < steps; ++s)
      run.step_ms.push_back(marks[size_t(s) + 1].ms_since(marks[size_t(s)]));
    if (!reference) {
      reference = std::move(propagator);
      run.error = 0.0;
    } else {
      run.error = relative_l2_difference(g, propagator->current_field(),
                                         reference->current_field(), propagator->stream());
    }
    char line[256];
    std::snprintf(line, sizeof line, "bench: point   %-16s %8.3f ms/step (median)  error %.2e\n",
                  variant.c_str(), median(run.step_ms), run.error);
    progress << line << std::flush;
    runs.push_back(std::move(run));
  }
  return runs;
}

} // namespace rtm::cuda
