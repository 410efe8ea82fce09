#include "kernels/cuda/cuda_propagator.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/event_timer.cuh"
#include "kernels/cuda/rtm_ops.cuh"

namespace rtm::cuda {
namespace {

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void add_to(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void add_to(__half* p, float v) { atomicAdd(p, __float2half_rn(v)); }

// Point sets (solvers/contracts/propagator.h, PointStencil): one block per point, one thread per row of
// its box, thread t taking plane c = t / kMaxPointTaps and row b = t % kMaxPointTaps. The float
// arithmetic is PointStencil's order, written with __fmul_rn / __fadd_rn so that the compiler
// does not contract it into fused multiply-adds the CPU reference does not use: traces then
// agree with the CPU's to the bit where the wavefields do.
constexpr int kPointThreads = kMaxPointTaps * kMaxPointTaps;

// p_cur[cell] += (((wz * wy) * wx) * v2dt2[cell]) * amp, amp = scale * series[point]; points may
// share cells, hence the atomic add.
template <class T>
__global__ void __launch_bounds__(kPointThreads)
    inject_kernel(T* p_cur, const T* v2dt2, GridLayout g, const PointStencil* points,
                  const float* series_row, float scale) {
  const PointStencil& s = points[blockIdx.x]; // read in place: a local copy would go to local memory
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c >= s.nz || b >= s.ny) return;
  const float amp = __fmul_rn(scale, series_row[blockIdx.x]);
  const float wzy = __fmul_rn(s.wz[c], s.wy[b]);
  const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
  for (int a = 0; a < s.nx; ++a) {
    const float w = __fmul_rn(__fmul_rn(wzy, s.wx[a]), to_float(v2dt2[row + a]));
    add_to(p_cur + row + a, __fmul_rn(w, amp));
  }
}

// series_row[point] = sum_c wz[c] * sum_b wy[b] * sum_a wx[a] * p_cur[cell], each sum in
// increasing index order: row sums in parallel, then one thread per plane, then one for the point.
template <class T>
__global__ void __launch_bounds__(kPointThreads)
    record_kernel(const T* p_cur, GridLayout g, const PointStencil* points, float* series_row) {
  __shared__ float rows[kPointThreads];
  __shared__ float planes[kMaxPointTaps];
  const PointStencil& s = points[blockIdx.x];
  const int c = threadIdx.x / kMaxPointTaps, b = threadIdx.x % kMaxPointTaps;
  if (c < s.nz && b < s.ny) {
    const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
    float sum = 0.0f;
    for (int a = 0; a < s.nx; ++a) sum = __fadd_rn(sum, __fmul_rn(s.wx[a], to_float(p_cur[row + a])));
    rows[threadIdx.x] = sum;
  }
  __syncthreads();
  if (threadIdx.x < s.nz) {
    float plane = 0.0f;
    for (int r = 0; r < s.ny; ++r)
      plane = __fadd_rn(plane, __fmul_rn(s.wy[r], rows[threadIdx.x * kMaxPointTaps + r]));
    planes[threadIdx.x] = plane;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int k = 0; k < s.nz; ++k) v = __fadd_rn(v, __fmul_rn(s.wz[k], planes[k]));
    series_row[blockIdx.x] = v;
  }
}

MemoryOptions merged(const MemoryOptions& a, const MemoryOptions& b) {
  return {a.compressible || b.compressible, a.l2_persist || b.l2_persist};
}

// Times every float32 kernel for a few steps on this grid, on random wavefields, and leaves the
// propagator running the fastest.
std::unique_ptr<CudaPropagator> make_fastest(const PropagatorSetup& setup,
                                             const MemoryOptions& options, int device,
                                             std::ostream* log) {
  constexpr int kWarmupSteps = 2, kTimedSteps = 5;
  const std::vector<const VariantRow*> candidates = auto_candidates();
  auto propagator = std::make_unique<CudaPropagator>(setup, *candidates.front(), options, device);
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

} // namespace

// ---- the propagator --------------------------------------------------------------------------

CudaPropagator::CudaPropagator(const PropagatorSetup& setup, const VariantRow& row,
                               const MemoryOptions& memory, int device)
    : device_(device), row_(&row), memory_(memory), layout_(setup.layout),
      weights_(setup.weights), timer_(device, int(TimedOp::count)) {
  const GridLayout& g = layout_;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1)
    throw std::invalid_argument("cuda/" + row.info.name + ": grid must have at least one cell per axis");
  const GridLayout expected = make_layout(g.nx, g.ny, g.nz);
  if (g.pitch != expected.pitch || g.plane != expected.plane || g.offset != expected.offset ||
      g.size != expected.size)
    throw std::invalid_argument("cuda/" + row.info.name +
                                ": the CUDA kernels need the padded layout of make_layout()");
  if (int64_t(setup.v2dt2.size()) != g.interior_cells())
    throw std::invalid_argument("cuda/" + row.info.name + ": v2dt2 has " +
                                std::to_string(setup.v2dt2.size()) + " values, the grid " +
                                std::to_string(g.interior_cells()) + " cells");
  const DampingProfiles& d = setup.damping;
  if (!d.empty() && (int(d.x.size()) != g.nx || int(d.y.size()) != g.ny || int(d.z.size()) != g.nz))
    throw std::invalid_argument("cuda/" + row.info.name +
                                ": damping profiles must have nx, ny, nz entries");

  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));

  // Refuse before allocating anything when the grid cannot fit: three padded arrays plus the
  // float staging buffer that uploads use, and the C-PML's memory variables.
  const size_t field_bytes = size_t(g.size) * element_bytes();
  const size_t staging_bytes = size_t(std::max<int64_t>(g.size, g.interior_cells())) * sizeof(float);
  const size_t needed = 3 * field_bytes + staging_bytes + DeviceCpml::bytes(setup.cpml, g);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw std::runtime_error("cuda/" + row.info.name + ": a " + std::to_string(g.nx) + "x" +
                             std::to_string(g.ny) + "x" + std::to_string(g.nz) + " grid needs " +
                             mib(needed) + " of device memory, only " + mib(free_bytes) +
                             " of " + mib(total_bytes) + " are free");

  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    const AllocationKind field_kind =
        memory_.compressible ? AllocationKind::compressible : AllocationKind::plain;
    field_a_ = DeviceBuffer(field_bytes, field_kind, device_);
    field_b_ = DeviceBuffer(field_bytes, field_kind, device_);
    if (memory_.compressible && !field_a_.compressed()) {
      memory_note_ = "compressible memory unavailable (" + field_a_.fallback_reason() +
                     "); the wavefields use ordinary device memory";
      memory_.compressible = false;
    }
    v2dt2_ = DeviceBuffer(field_bytes, AllocationKind::plain, device_);
    cur_ = field_a_.data();
    prev_ = field_b_.data();
    CUDA_CHECK(cudaMemsetAsync(field_a_.data(), 0, field_bytes, stream_));
    CUDA_CHECK(cudaMemsetAsync(field_b_.data(), 0, field_bytes, stream_));
    CUDA_CHECK(cudaMemsetAsync(v2dt2_.data(), 0, field_bytes, stream_));
    {
      DeviceBuffer dense(size_t(g.interior_cells()) * sizeof(float), AllocationKind::plain, device_);
      CUDA_CHECK(cudaMemcpyAsync(dense.data(), setup.v2dt2.data(), dense.bytes(),
                                 cudaMemcpyHostToDevice, stream_));
      scatter_interior(g, dense.as<float>(), v2dt2_.data(), row_->storage, stream_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    if (!d.empty()) {
      auto upload_profile = [&](const std::vector<float>& profile) {
        // kRowAlignFloats more than the kernels' own reach: step_planes() shifts the z profile
        // by its first plane, and a kernel reading four at a time must still stay inside.
        std::vector<float> padded(
            size_t(damping_profile_length(int(profile.size())) + kRowAlignFloats), 0.0f);
        std::copy(profile.begin(), profile.end(), padded.begin());
        DeviceBuffer buffer(padded.size() * sizeof(float), AllocationKind::plain, device_);
        // On stream_ and waited for, like every upload here (stream_ is non-blocking).
        CUDA_CHECK(cudaMemcpyAsync(buffer.data(), padded.data(), buffer.bytes(),
                                   cudaMemcpyHostToDevice, stream_));
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        return buffer;
      };
      damp_x_ = upload_profile(d.x);
      damp_y_ = upload_profile(d.y);
      damp_z_ = upload_profile(d.z);
    }
    if (!setup.cpml.empty()) {
      if (!d.empty())
        throw std::invalid_argument("cuda/" + row.info.name +
                                    ": a grid has the sponge or the C-PML, not both");
      cpml_ = DeviceCpml(setup.cpml, g, device_, stream_);
    }
    if (memory_.l2_persist) enable_l2_window();
  } catch (...) {
    disable_l2_window();
    cudaStreamDestroy(stream_);
    throw;
  }
  if (!memory_note_.empty()) std::cerr << "rtm: " << name() << ": " << memory_note_ << "\n";
}

CudaPropagator::~CudaPropagator() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  if (other_ready_) cudaEventDestroy(other_ready_);
  if (this_done_) cudaEventDestroy(this_done_);
  disable_l2_window();
  cudaStreamDestroy(stream_);
  sets_.clear();
}

size_t CudaPropagator::element_bytes() const {
  return row_->storage == Storage::fp32 ? sizeof(float) : sizeof(__half);
}

std::string CudaPropagator::name() const {
  std::string n = "cuda/" + row_->info.name;
  if (memory_.compressible && !row_->info.preset.compressible) n += "+compressible";
  if (memory_.l2_persist && !row_->info.preset.l2_persist) n += "+l2_persist";
  return n;
}

// The L2 persisting window covers v2dt2: the one array read every step and never written, so the
// lines kept in L2 serve every later step (the wavefields change roles each step and are rewritten).
// Window size: all of v2dt2 up to the device's largest window; hit ratio: the share of the window
// that fits in the persisting carve-out, so persisting lines do not evict each other.
// Carve-out: at most a quarter of L2 (and no more than v2dt2 needs). Measured on an H200 at 512^3
// (docs/variants.md): the device's maximum (37.5 of 60 MB) leaves too little normal L2 for the
// neighbour reuse between tiles, and the step ran 2.2x slower; 4 or 16 MB cost nothing there and
// gave +2% at 192^3, where v2dt2 (28 MB) nearly fits.
void CudaPropagator::enable_l2_window() {
  int max_persisting = 0, max_window = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device_));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device_));
  if (max_persisting <= 0 || max_window <= 0) {
    memory_note_ += std::string(memory_note_.empty() ? "" : "; ") +
                    "the GPU has no persisting L2 lines; l2_persist is off";
    memory_.l2_persist = false;
    return;
  }
  CUDA_CHECK(cudaDeviceGetLimit(&saved_persisting_limit_, cudaLimitPersistingL2CacheSize));
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_));
  const size_t carve_out =
      std::min({size_t(max_persisting), size_t(l2_bytes) / 4, v2dt2_.bytes()});
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve_out));
  size_t granted = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
  const size_t window = std::min(v2dt2_.bytes(), size_t(max_window));
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = v2dt2_.data();
  attr.accessPolicyWindow.num_bytes = window;
  attr.accessPolicyWindow.hitRatio = float(std::min(1.0, double(granted) / double(window)));
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  l2_window_active_ = true; // set before the call so that a failure still restores the limit
  CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr));
}

// Clears the window, demotes every persisting line to normal, and restores the carve-out the
// process had before, so later work (other propagators, other programs) sees an ordinary L2.
void CudaPropagator::disable_l2_window() noexcept {
  if (!l2_window_active_) return;
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.num_bytes = 0;
  const cudaError_t cleared =
      cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr);
  const cudaError_t reset = cudaCtxResetPersistingL2Cache();
  const cudaError_t restored = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, saved_persisting_limit_);
  if (cleared != cudaSuccess || reset != cudaSuccess || restored != cudaSuccess)
    std::fprintf(stderr, "rtm: resetting the L2 persisting window failed (%s, %s, %s)\n",
                 cudaGetErrorString(cleared), cudaGetErrorString(reset),
                 cudaGetErrorString(restored));
  l2_window_active_ = false;
}

void CudaPropagator::set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
  const auto n = size_t(layout_.size);
  if (p_prev.size() != n || p_cur.size() != n)
    throw std::invalid_argument(name() + "::set_state: arrays must have layout().size = " +
                                std::to_string(n) + " floats");
  CUDA_CHECK(cudaSetDevice(device_));
  if (row_->storage == Storage::fp32) {
    CUDA_CHECK(cudaMemcpyAsync(prev_, p_prev.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(cur_, p_cur.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    cpml_.zero(stream_); // as the CPU reference: memory variables restart from zero
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  DeviceBuffer staging(n * sizeof(float), AllocationKind::plain, device_);
  for (auto [host, device] : {std::pair{&p_prev, prev_}, std::pair{&p_cur, cur_}}) {
    CUDA_CHECK(cudaMemcpyAsync(staging.data(), host->data(), n * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
    convert_float_to_half(staging.as<float>(), device, int64_t(n), stream_);
  }
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaPropagator::get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  const auto n = size_t(layout_.size);
  p_prev.resize(n);
  p_cur.resize(n);
  CUDA_CHECK(cudaSetDevice(device_));
  if (row_->storage == Storage::fp32) {
    CUDA_CHECK(cudaMemcpyAsync(p_prev.data(), prev_, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(p_cur.data(), cur_, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  DeviceBuffer staging(n * sizeof(float), AllocationKind::plain, device_);
  for (auto [host, device] : {std::pair{&p_prev, prev_}, std::pair{&p_cur, cur_}}) {
    convert_half_to_float(device, staging.as<float>(), int64_t(n), stream_);
    CUDA_CHECK(cudaMemcpyAsync(host->data(), staging.data(), n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the staging buffer is reused next
  }
}

void CudaPropagator::zero_state() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemsetAsync(cur_, 0, field_a_.bytes(), stream_));
  CUDA_CHECK(cudaMemsetAsync(prev_, 0, field_b_.bytes(), stream_));
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaPropagator::fill_random_state(uint64_t seed) {
  CUDA_CHECK(cudaSetDevice(device_));
  fill_random(prev_, row_->storage, layout_.size, seed, stream_);
  fill_random(cur_, row_->storage, layout_.size, seed + 1, stream_);
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaPropagator::use_kernel(const VariantRow& row) {
  if (row.storage != row_->storage)
    throw std::invalid_argument(name() + ": cannot switch to " + row.info.name +
                                ", which stores its fields in another precision");
  row_ = &row;
}

void CudaPropagator::step_planes(int k_begin, int k_end) {
  if (k_begin < 0 || k_end > layout_.nz || k_begin > k_end)
    throw std::invalid_argument(name() + "::step_planes: planes [" + std::to_string(k_begin) + ", " +
                                std::to_string(k_end) + ") are not inside 0.." +
                                std::to_string(layout_.nz));
  if (k_begin == k_end) return;
  CUDA_CHECK(cudaSetDevice(device_));
  // The kernels step a whole grid. Planes [k_begin, k_end) are one too: the same layout with
  // nz = k_end - k_begin and every array shifted by k_begin planes, so that its plane 0 is plane
  // k_begin and its z halo is the real neighbouring planes. No kernel needs to know.
  const size_t shift_bytes = size_t(k_begin) * size_t(layout_.plane) * element_bytes();
  auto shifted = [shift_bytes](void* p) { return static_cast<char*>(p) + shift_bytes; };
  WaveStepArgs args;
  args.layout = layout_;
  args.layout.nz = k_end - k_begin;
  args.layout.size = layout_.size - int64_t(k_begin) * layout_.plane;
  args.weights = weights_;
  args.p_cur = shifted(cur_);
  args.p_prev_next = shifted(prev_);
  args.v2dt2 = shifted(v2dt2_.data());
  if (damp_x_.data()) {
    args.damp_x = damp_x_.as<float>();
    args.damp_y = damp_y_.as<float>();
    args.damp_z = damp_z_.as<float>() + k_begin;
  }
  args.sm_count = sm_count_;
  begin_timed();
  row_->launch(args, stream_);
  // The C-PML's correction on the layer cells of these planes, after the undamped step (whole-grid
  // plane numbers: it takes the unshifted fields).
  cpml_.apply(row_->storage, cur_, v2dt2_.data(), prev_, k_begin, k_end, stream_);
  end_timed(TimedOp::step);
}

void CudaPropagator::finish_step() {
  if (timing_on_) ++timing_.steps;
  std::swap(cur_, prev_);
  cpml_.swap();
}

Propagator::PlaneSpan CudaPropagator::next_field_planes(int k_begin, int k_end) {
  if (k_begin < -kHalo || k_end > layout_.nz + kHalo || k_begin > k_end)
    throw std::invalid_argument(name() + "::next_field_planes: planes outside the grid and its halo");
  PlaneSpan span;
  span.data = static_cast<char*>(prev_) +
              size_t(layout_.index(-kHalo, -kHalo, k_begin)) * element_bytes();
  span.bytes = size_t(k_end - k_begin) * size_t(layout_.plane) * element_bytes();
  span.device = device_;
  return span;
}

void* CudaPropagator::stream_handle() const { return stream_; }

void CudaPropagator::synchronize() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

int CudaPropagator::add_point_set(const std::vector<PointStencil>& points, int nt) {
  if (nt <= 0) throw std::invalid_argument(name() + "::add_point_set: nt must be positive");
  for (const PointStencil& p : points)
    if (!p.fits(layout_))
      throw std::out_of_range(name() + "::add_point_set: a point's cells leave the grid (or exceed " +
                              std::to_string(kMaxPointTaps) + " per axis)");
  CUDA_CHECK(cudaSetDevice(device_));
  DevicePointSet set;
  set.count = int(points.size());
  set.nt = nt;
  set.stencils = DeviceBuffer(points.size() * sizeof(PointStencil), AllocationKind::plain, device_);
  set.series = DeviceBuffer(size_t(nt) * points.size() * sizeof(float), AllocationKind::plain, device_);
  if (!points.empty()) {
    // On the propagator's own stream, then waited for: stream_ is non-blocking, so a plain
    // cudaMemset (legacy default stream, asynchronous) was not ordered with the upload_series
    // copy that follows on stream_ and, on a busy GPU, could zero a wavelet already uploaded (a
    // shot modelled with no source: seen once as an all-zero trace under 8 concurrent tests).
    CUDA_CHECK(cudaMemcpyAsync(set.stencils.data(), points.data(), set.stencils.bytes(),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemsetAsync(set.series.data(), 0, set.series.bytes(), stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  sets_.push_back(std::move(set));
  return int(sets_.size()) - 1;
}

const CudaPropagator::DevicePointSet& CudaPropagator::point_set(int set, const char* what) const {
  if (set < 0 || set >= int(sets_.size()))
    throw std::out_of_range(name() + "::" + what + ": no point set " + std::to_string(set));
  return sets_[size_t(set)];
}

void CudaPropagator::upload_series(int set, const std::vector<float>& series) {
  const DevicePointSet& ps = point_set(set, "upload_series");
  const size_t expected = size_t(ps.nt) * size_t(ps.count);
  if (series.size() != expected)
    throw std::invalid_argument(name() + "::upload_series: expected nt x points = " +
                                std::to_string(expected) + " values, got " +
                                std::to_string(series.size()));
  if (expected == 0) return;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(ps.series.data(), series.data(), expected * sizeof(float),
                             cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::vector<float> CudaPropagator::download_series(int set) const {
  const DevicePointSet& ps = point_set(set, "download_series");
  std::vector<float> series(size_t(ps.nt) * size_t(ps.count));
  if (series.empty()) return series;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(series.data(), ps.series.data(), series.size() * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return series;
}

void CudaPropagator::inject(int set, int t, float scale) {
  const DevicePointSet& ps = point_set(set, "inject");
  if (t < 0 || t >= ps.nt) throw std::out_of_range(name() + "::inject: time index outside the series");
  if (ps.count == 0) return;
  CUDA_CHECK(cudaSetDevice(device_));
  const float* row = ps.series.as<float>() + size_t(t) * ps.count;
  const auto* points = ps.stencils.as<PointStencil>();
  begin_timed();
  if (row_->storage == Storage::fp32)
    inject_kernel<<<ps.count, kPointThreads, 0, stream_>>>(static_cast<float*>(cur_), v2dt2_.as<float>(),
                                                            layout_, points, row, scale);
  else
    inject_kernel<<<ps.count, kPointThreads, 0, stream_>>>(static_cast<__half*>(cur_), v2dt2_.as<__half>(),
                                                            layout_, points, row, scale);
  CUDA_CHECK_LAUNCH("inject_kernel");
  end_timed(TimedOp::points);
}

void CudaPropagator::record(int set, int t) {
  const DevicePointSet& ps = point_set(set, "record");
  if (t < 0 || t >= ps.nt) throw std::out_of_range(name() + "::record: time index outside the series");
  if (ps.count == 0) return;
  CUDA_CHECK(cudaSetDevice(device_));
  float* row = ps.series.as<float>() + size_t(t) * ps.count;
  const auto* points = ps.stencils.as<PointStencil>();
  begin_timed();
  if (row_->storage == Storage::fp32)
    record_kernel<<<ps.count, kPointThreads, 0, stream_>>>(static_cast<const float*>(cur_), layout_, points, row);
  else
    record_kernel<<<ps.count, kPointThreads, 0, stream_>>>(static_cast<const __half*>(cur_), layout_, points, row);
  CUDA_CHECK_LAUNCH("record_kernel");
  end_timed(TimedOp::points);
}

// ---- reverse time migration ------------------------------------------------------------------

void CudaPropagator::reverse_time() {
  std::swap(cur_, prev_);
  CUDA_CHECK(cudaSetDevice(device_));
  cpml_.zero(stream_); // as the CPU reference: the layers restart empty
}

void CudaPropagator::check_box(const Box& box, const char* what) const {
  if (!box.inside(layout_))
    throw std::invalid_argument(name() + "::" + what + ": the box is empty or leaves the grid");
}

void CudaPropagator::require_free_memory(size_t bytes, const std::string& what,
                                         const std::string& hint) const {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw std::runtime_error(name() + ": " + what + " needs " + mib(bytes) +
                             " of device memory, only " + mib(free_bytes) + " of " +
                             mib(total_bytes) + " are free" + (hint.empty() ? "" : "; " + hint));
}

const CudaPropagator& CudaPropagator::same_device(const Propagator& other, const char* what) const {
  const auto* cuda = dynamic_cast<const CudaPropagator*>(&other);
  if (!cuda)
    throw std::invalid_argument(name() + "::" + what + ": the other propagator is " + other.name() +
                                ", not a CUDA one; both fields must live on the same backend");
  if (cuda->device_ != device_)
    throw std::invalid_argument(name() + "::" + what + ": the other propagator is on device " +
                                std::to_string(cuda->device_) + ", this one on device " +
                                std::to_string(device_) + "; both fields must be on one GPU");
  if (!cuda->layout_.same_shape(layout_))
    throw std::invalid_argument(name() + "::" + what + ": the two propagators have different grids");
  if (cuda->row_->storage != row_->storage)
    throw std::invalid_argument(name() + "::" + what + ": the other propagator (" + cuda->name() +
                                ") stores its fields in another precision");
  return *cuda;
}

void CudaPropagator::begin_handoff(const CudaPropagator& other) {
  if (&other == this) return;
  if (!other_ready_) CUDA_CHECK(cudaEventCreateWithFlags(&other_ready_, cudaEventDisableTiming));
  if (!this_done_) CUDA_CHECK(cudaEventCreateWithFlags(&this_done_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventRecord(other_ready_, other.stream_));
  CUDA_CHECK(cudaStreamWaitEvent(stream_, other_ready_, 0));
}

void CudaPropagator::end_handoff(const CudaPropagator& other) {
  if (&other == this) return;
  CUDA_CHECK(cudaEventRecord(this_done_, stream_));
  CUDA_CHECK(cudaStreamWaitEvent(other.stream_, this_done_, 0));
}

void CudaPropagator::allocate_boundary_store(const Box& box, int steps) {
  if (!ring_box_fits(box, layout()))
    throw std::invalid_argument(name() + "::allocate_boundary_store: the box is empty, leaves the grid along x or y, or misses its planes");
  if (steps < 1)
    throw std::invalid_argument(name() + "::allocate_boundary_store: steps must be positive");
  CUDA_CHECK(cudaSetDevice(device_));
  // Queued saves and restores may still use the old store: let them finish, then free it first
  // so that its memory counts as free for the new one.
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  ring_store_ = DeviceBuffer();
  ring_index_ = DeviceBuffer();
  ring_cells_ = 0;
  ring_steps_ = 0;

  const std::vector<int64_t> index = boundary_ring_indices(layout_, box);
  const size_t index_bytes = index.size() * sizeof(int64_t);
  const size_t store_bytes = index.size() * size_t(steps) * element_bytes();
  require_free_memory(
      store_bytes + index_bytes,
      "the boundary store (" + std::to_string(index.size()) + " ring cells x " +
          std::to_string(steps) + " steps x " + std::to_string(element_bytes()) + " B, plus " +
          mib(index_bytes) + " for the ring's cell list)",
      "use snapshot reconstruction (rtm migrate --reconstruction snapshots keeps the source "
      "field in host memory), fewer time steps (a shorter record time), or a GPU with more memory");
  ring_index_ = DeviceBuffer(index_bytes, AllocationKind::plain, device_);
  ring_store_ = DeviceBuffer(store_bytes, AllocationKind::plain, device_);
  CUDA_CHECK(cudaMemcpyAsync(ring_index_.data(), index.data(), index_bytes, cudaMemcpyHostToDevice,
                             stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_)); // `index` goes out of scope
  ring_box_ = box;
  ring_cells_ = int64_t(index.size());
  ring_steps_ = steps;
}

void CudaPropagator::save_boundary(int step) {
  if (step < 0 || step >= ring_steps_)
    throw std::out_of_range(name() + "::save_boundary: step " + std::to_string(step) +
                            " outside the store (" + std::to_string(ring_steps_) + " steps)");
  CUDA_CHECK(cudaSetDevice(device_));
  void* slot = static_cast<char*>(ring_store_.data()) + size_t(step) * size_t(ring_cells_) * element_bytes();
  begin_timed();
  gather_cells(cur_, ring_index_.as<int64_t>(), ring_cells_, slot, row_->storage, stream_);
  end_timed(TimedOp::boundary);
}

void CudaPropagator::restore_boundary(int step) {
  if (step < 0 || step >= ring_steps_)
    throw std::out_of_range(name() + "::restore_boundary: step " + std::to_string(step) +
                            " outside the store (" + std::to_string(ring_steps_) + " steps)");
  CUDA_CHECK(cudaSetDevice(device_));
  const void* slot =
      static_cast<const char*>(ring_store_.data()) + size_t(step) * size_t(ring_cells_) * element_bytes();
  begin_timed();
  scatter_cells(slot, ring_index_.as<int64_t>(), ring_cells_, cur_, row_->storage, stream_);
  end_timed(TimedOp::boundary);
}

float* CudaPropagator::box_staging(const Box& box) const {
  const size_t bytes = size_t(box.cells()) * sizeof(float);
  if (box_staging_.bytes() < bytes) {
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the old buffer may still be in use
    box_staging_ = DeviceBuffer();
    box_staging_ = DeviceBuffer(bytes, AllocationKind::plain, device_);
  }
  return box_staging_.as<float>();
}

void CudaPropagator::copy_current(const Box& box, std::vector<float>& dense) const {
  check_box(box, "copy_current");
  CUDA_CHECK(cudaSetDevice(device_));
  dense.resize(size_t(box.cells()));
  float* staging = box_staging(box);
  begin_timed();
  pack_box(layout_, box, cur_, row_->storage, staging, stream_);
  CUDA_CHECK(cudaMemcpyAsync(dense.data(), staging, dense.size() * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  end_timed(TimedOp::box_copy);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaPropagator::set_current(const Box& box, const std::vector<float>& dense) {
  check_box(box, "set_current");
  if (int64_t(dense.size()) != box.cells())
    throw std::invalid_argument(name() + "::set_current: expected " + std::to_string(box.cells()) +
                                " values for the box, got " + std::to_string(dense.size()));
  CUDA_CHECK(cudaSetDevice(device_));
  float* staging = box_staging(box);
  begin_timed();
  // From pageable memory the runtime stages `dense` before the call returns, so the caller may
  // reuse or free it at once; the unpack kernel follows the copy in stream order.
  CUDA_CHECK(cudaMemcpyAsync(staging, dense.data(), dense.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream_));
  unpack_box(layout_, box, staging, cur_, row_->storage, stream_);
  end_timed(TimedOp::box_copy);
}

void CudaPropagator::allocate_image(const Box& box) {
  check_box(box, "allocate_image");
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaStreamSynchronize(stream_)); // queued imaging may still use the old arrays
  image_ = DeviceBuffer();
  illumination_ = DeviceBuffer();
  const size_t bytes = size_t(box.cells()) * sizeof(float);
  require_free_memory(2 * bytes,
                      "the image and the illumination (2 x " + std::to_string(box.cells()) +
                          " cells x 4 B)",
                      "");
  image_ = DeviceBuffer(bytes, AllocationKind::plain, device_);
  illumination_ = DeviceBuffer(bytes, AllocationKind::plain, device_);
  CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, bytes, stream_));
  CUDA_CHECK(cudaMemsetAsync(illumination_.data(), 0, bytes, stream_));
  image_box_ = box;
}

void CudaPropagator::accumulate_image(const Propagator& source_field, float weight) {
  if (!image_.data())
    throw std::logic_error(name() + "::accumulate_image: call allocate_image first");
  const CudaPropagator& source = same_device(source_field, "accumulate_image");
  CUDA_CHECK(cudaSetDevice(device_));
  begin_handoff(source);
  begin_timed();
  accumulate_image_box(layout_, image_box_, source.cur_, cur_, row_->storage, weight,
                       image_.as<float>(), illumination_.as<float>(), stream_);
  end_timed(TimedOp::imaging);
  end_handoff(source);
}

std::vector<float> CudaPropagator::download_image() const {
  std::vector<float> host(image_.bytes() / sizeof(float));
  if (host.empty()) return host;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(host.data(), image_.data(), image_.bytes(), cudaMemcpyDeviceToHost,
                             stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

std::vector<float> CudaPropagator::download_illumination() const {
  std::vector<float> host(illumination_.bytes() / sizeof(float));
  if (host.empty()) return host;
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(host.data(), illumination_.data(), illumination_.bytes(),
                             cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

void CudaPropagator::set_image(const std::vector<float>& image,
                               const std::vector<float>& illumination) {
  if (!image_.data())
    throw std::logic_error(name() + "::set_image: call allocate_image first");
  const size_t cells = image_.bytes() / sizeof(float);
  if (image.size() != cells || illumination.size() != cells)
    throw std::invalid_argument(name() + "::set_image: expected " + std::to_string(cells) +
                                " values for the image box, got " + std::to_string(image.size()) +
                                " (image) and " + std::to_string(illumination.size()) +
                                " (illumination)");
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(image_.data(), image.data(), image_.bytes(), cudaMemcpyHostToDevice,
                             stream_));
  CUDA_CHECK(cudaMemcpyAsync(illumination_.data(), illumination.data(), illumination_.bytes(),
                             cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_)); // the host vectors may go away after the return
}

void CudaPropagator::set_born_perturbation(const Box& box, const std::vector<float>& m) {
  check_box(box, "set_born_perturbation");
  if (int64_t(m.size()) != box.cells())
    throw std::invalid_argument(name() + "::set_born_perturbation: expected " +
                                std::to_string(box.cells()) + " values for the box, got " +
                                std::to_string(m.size()));
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaStreamSynchronize(stream_)); // queued Born sources may still read the old one
  born_m_ = DeviceBuffer();
  born_m_ = DeviceBuffer(m.size() * sizeof(float), AllocationKind::plain, device_);
  CUDA_CHECK(cudaMemcpyAsync(born_m_.data(), m.data(), born_m_.bytes(), cudaMemcpyHostToDevice,
                             stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  born_box_ = box;
}

void CudaPropagator::inject_born_source(const Propagator& background) {
  if (!born_m_.data())
    throw std::logic_error(name() + "::inject_born_source: call set_born_perturbation first");
  const CudaPropagator& s = same_device(background, "inject_born_source");
  CUDA_CHECK(cudaSetDevice(device_));
  begin_handoff(s);
  begin_timed();
  add_born_source(layout_, born_box_, s.cur_, v2dt2_.data(), born_m_.as<float>(), cur_,
                  row_->storage, stream_);
  end_timed(TimedOp::born);
  end_handoff(s);
}

// ---- profiling -------------------------------------------------------------------------------

void CudaPropagator::enable_timing(bool on) {
  CUDA_CHECK(cudaSetDevice(device_));
  collect_timing();
  if (on) {
    timer_.reset();
    timing_ = PropagatorTiming{};
  }
  timing_on_ = on;
}

PropagatorTiming CudaPropagator::timing() const {
  CUDA_CHECK(cudaSetDevice(device_));
  collect_timing();
  return timing_;
}

void CudaPropagator::begin_timed() const {
  if (timing_on_) timer_.begin(stream_);
}

void CudaPropagator::end_timed(TimedOp op) const {
  if (timing_on_) timer_.end(stream_, int(op));
}

void CudaPropagator::collect_timing() const {
  timer_.collect();
  timing_.step_ms = timer_.total_ms(int(TimedOp::step)); // steps: counted in finish_step()
  timing_.points_ms = timer_.total_ms(int(TimedOp::points));
  timing_.boundary_ms = timer_.total_ms(int(TimedOp::boundary));
  timing_.imaging_ms = timer_.total_ms(int(TimedOp::imaging));
  timing_.box_copy_ms = timer_.total_ms(int(TimedOp::box_copy));
  timing_.born_ms = timer_.total_ms(int(TimedOp::born));
}

// ---- the factory -----------------------------------------------------------------------------

std::unique_ptr<Propagator> make_propagator(const PropagatorSetup& setup, const std::string& variant,
                                            const MemoryOptions& options, int device,
                                            std::ostream* log) {
  if (variant == "auto") return make_fastest(setup, options, device, log);
  const VariantRow& row = find_variant_row(variant);
  return std::make_unique<CudaPropagator>(setup, row, merged(row.info.preset, options), device);
}

} // namespace rtm::cuda
