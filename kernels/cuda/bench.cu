#include "kernels/cuda/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_propagator.cuh"
#include "solvers/contracts/median.h"
#include "kernels/cuda/device_buffer.cuh"
#include "kernels/cuda/field_ops.cuh"
#include "kernels/cuda/variant_table.cuh"

namespace rtm::cuda {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSpacing = 10.0; // m, all axes
constexpr double kCourant = 0.4;  // v_max dt / h, under the 0.4529 limit of this stencil

// A device event that destroys itself.
class Event {
public:
  Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(event_, stream)); }
  float ms_since(const Event& start) const {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(event_)); }

private:
  cudaEvent_t event_ = nullptr;
};

class Stream {
public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

private:
  cudaStream_t stream_ = nullptr;
};

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

uint64_t host_hash(uint64_t z) { // splitmix64, as on the device
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Random workload setup: velocities uniform in [1500, 4500] m/s, dt at Courant kCourant.
PropagatorSetup random_setup(int nx, int ny, int nz) {
  PropagatorSetup setup;
  setup.layout = make_layout(nx, ny, nz);
  setup.weights = make_laplacian_weights(kSpacing, kSpacing, kSpacing);
  const double v_min = 1500.0, v_max = 4500.0;
  const double dt = kCourant * kSpacing / v_max;
  setup.v2dt2.resize(size_t(setup.layout.interior_cells()));
  for (size_t n = 0; n < setup.v2dt2.size(); ++n) {
    const double unit = double(host_hash(n ^ 0xA5A5A5A5ull) >> 11) * (1.0 / 9007199254740992.0);
    const double v = v_min + (v_max - v_min) * unit;
    setup.v2dt2[n] = float(v * v * dt * dt);
  }
  return setup;
}

struct PointSetupInfo {
  PropagatorSetup setup;
  double dt = 0, f0 = 0, t0 = 0;
};

// Point workload setup: a homogeneous 2000 m/s medium; the Ricker peak frequency gives 5 cells per
// shortest wavelength (f_max = 2.5 f0).
PointSetupInfo point_setup(int nx, int ny, int nz) {
  PointSetupInfo p;
  const double v = 2000.0;
  p.setup.layout = make_layout(nx, ny, nz);
  p.setup.weights = make_laplacian_weights(kSpacing, kSpacing, kSpacing);
  p.dt = kCourant * kSpacing / v;
  p.f0 = v / (5.0 * kSpacing * 2.5);
  p.t0 = 1.2 / p.f0;
  p.setup.v2dt2.assign(size_t(p.setup.layout.interior_cells()), float(v * v * p.dt * p.dt));
  return p;
}

std::unique_ptr<CudaWavefield> make_bench_propagator(const PropagatorSetup& setup,
                                                     const std::string& variant,
                                                     const BenchConfig& config) {
  const VariantSelection chosen = find_variant(variant);
  return std::make_unique<CudaWavefield>(setup, row_of(*chosen.kernel),
                                         combined(chosen.memory, config.memory), config.device);
}

void check_config(const BenchConfig& c, const std::vector<std::string>& variants) {
  if (c.nx < 1 || c.ny < 1 || c.nz < 1) throw std::invalid_argument("bench: grid must be positive");
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
  DeviceBuffer src(bytes, AllocationKind::plain, device), dst(bytes, AllocationKind::plain, device);
  Stream stream;
  CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, stream));
  std::vector<double> ms;
  Event start, stop;
  for (int r = 0; r < 12; ++r) {
    start.record(stream);
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    stop.record(stream);
    stop.synchronize();
    if (r >= 2) ms.push_back(stop.ms_since(start)); // the first two are warm-up
  }
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
  auto pass = [&](int r) {
    auto array = [&](int role) { return arrays[size_t((r + role) % 4)].as<float4>(); };
    streaming_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(array(0), array(1), array(2),
                                                                 array(3), n4);
    CUDA_CHECK_LAUNCH("streaming_kernel");
  };
  for (int r = 0; r < 3; ++r) pass(r); // warm-up
  std::vector<double> ms;
  Event start, stop;
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    pass(r);
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.ms_since(start));
  }
  StreamingLimit limit;
  limit.cells = cells;
  limit.ms_median = median(ms);
  limit.gcells_per_s = double(cells) / (limit.ms_median * 1e-3) / 1e9;
  limit.gbs = 16.0 * limit.gcells_per_s;
  return limit;
}

std::vector<RandomRun> run_random_workload(const BenchConfig& config,
                                           const std::vector<std::string>& variants,
                                           std::ostream& progress) {
  check_config(config, variants);
  const PropagatorSetup setup = random_setup(config.nx, config.ny, config.nz);
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
    Event start, stop;
    for (int r = 0; r < config.repeats; ++r) {
      start.record(propagator->stream());
      for (int s = 0; s < config.steps; ++s) propagator->step();
      stop.record(propagator->stream());
      stop.synchronize();
      run.ms_per_step.push_back(stop.ms_since(start) / config.steps);
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

std::vector<PointRun> run_point_workload(const BenchConfig& config, int steps,
                                         const std::vector<std::string>& variants,
                                         std::ostream& progress) {
  check_config(config, variants);
  if (steps < 1) throw std::invalid_argument("bench: point workload needs at least one step");
  const PointSetupInfo info = point_setup(config.nx, config.ny, config.nz);
  const GridLayout& g = info.setup.layout;
  const PointStencil source = point_at_cell(g.nx / 2, g.ny / 2, g.nz / 2);
  std::vector<float> wavelet(static_cast<size_t>(steps));
  for (int n = 0; n < steps; ++n) {
    const double a = kPi * info.f0 * (n * info.dt - info.t0);
    wavelet[size_t(n)] = float((1.0 - 2.0 * a * a) * std::exp(-a * a));
  }
  // f = w(t) / (hx hy hz) at the source cell (docs/physics.md); inject() multiplies by v2dt2.
  const float scale = float(1.0 / (kSpacing * kSpacing * kSpacing));

  std::unique_ptr<CudaWavefield> reference;
  std::vector<PointRun> runs;
  for (const std::string& variant : variants) {
    auto propagator = make_bench_propagator(info.setup, variant, config);
    const std::unique_ptr<PointSet> set = propagator->add_points({source}, steps);
    set->upload_series(wavelet);
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

int default_point_steps(int nx, int ny, int nz) {
  const double half_width = 0.5 * std::min({nx, ny, nz});
  const double dt = kCourant * kSpacing / 2000.0;
  const double t0 = 1.2 / (2000.0 / (5.0 * kSpacing * 2.5));
  // The front moves kCourant cells per step and leaves the source at t0.
  return int(std::ceil(half_width / kCourant + t0 / dt));
}

} // namespace rtm::cuda
