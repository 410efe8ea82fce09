// The TTI wavefield on one GPU (kernels/cuda/tti/cuda_tti_wavefield.cuh): state, steps, boxes, health,
// profiling, and the factory of tti_backend.h. Box copies, the health reduction and timing reuse
// the acoustic field's device operations on p (and q) through the TTI layout.
#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"

#include <stdexcept>
#include <utility>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_snapshot_store.cuh"
#include "kernels/cuda/fields/health.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"
#include "kernels/cuda/tti_backend.h"

namespace rtm::cuda {
namespace {

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

CudaTtiWavefield::CudaTtiWavefield(const PropagatorSetup& setup, const std::string& variant, int device)
    : Wavefield(tti_layout(setup.layout)), device_(device), variant_(variant),
      timer_(device) {
  if (!is_tti_variant(variant_))
    throw std::invalid_argument("TTI variant '" + variant_ + "': expected tti-pipelined or tti-naive");
  const GridLayout& g = setup.layout;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1)
    throw std::invalid_argument("cuda/" + variant_ + ": grid must have at least one cell per axis");
  const GridLayout expected = make_layout(g.nx, g.ny, g.nz);
  if (g.pitch != expected.pitch || g.plane != expected.plane || g.offset != expected.offset ||
      g.size != expected.size)
    throw std::invalid_argument("cuda/" + variant_ + ": the CUDA kernels need the padded layout of make_layout()");
  if (setup.tti.empty()) throw std::invalid_argument("cuda/" + variant_ + ": no TTI coefficients");
  if (!setup.cpml.empty())
    throw std::invalid_argument("cuda/" + variant_ + ": the C-PML is not available for TTI (use the sponge)");
  const size_t cells = size_t(g.interior_cells());
  const TtiCoefficients& c = setup.tti;
  if (setup.v2dt2.size() != cells || c.e.size() != cells || c.s.size() != cells || c.nx.size() != cells ||
      c.ny.size() != cells || c.nz.size() != cells)
    throw std::invalid_argument("cuda/" + variant_ + ": v2dt2 and the TTI coefficients must have nx*ny*nz entries each");
  const DampingProfiles& d = setup.damping;
  if (!d.empty() && (int(d.x.size()) != g.nx || int(d.y.size()) != g.ny || int(d.z.size()) != g.nz))
    throw std::invalid_argument("cuda/" + variant_ + ": damping profiles must have nx, ny, nz entries");

  CUDA_CHECK(cudaSetDevice(device_));
  // Refuse before allocating anything: both pairs, pass 1's scratch, six padded coefficient arrays.
  require_free_memory(DeviceTti::bytes(g),
                      "a " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                          " TTI grid (two (p, q) pairs, the pass-1 scratch and six coefficient arrays)",
                      "");
  tti_ = std::make_unique<DeviceTti>(setup); // uploads done, fields zero when it returns
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaTtiWavefield::~CudaTtiWavefield() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
}

void CudaTtiWavefield::require_free_memory(size_t bytes, const std::string& what,
                                           const std::string& hint) const {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw std::runtime_error(name() + ": " + what + " needs " + mib(bytes) + " of device memory, only " +
                             mib(free_bytes) + " of " + mib(total_bytes) + " are free" +
                             (hint.empty() ? "" : "; " + hint));
}

void CudaTtiWavefield::do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
  const size_t bytes = size_t(layout().size) * sizeof(float);
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(tti_->prev.data(), p_prev.data(), bytes, cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaMemcpyAsync(tti_->cur.data(), p_cur.data(), bytes, cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaTtiWavefield::do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  const size_t n = size_t(layout().size);
  p_prev.resize(n);
  p_cur.resize(n);
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemcpyAsync(p_prev.data(), tti_->prev.data(), n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaMemcpyAsync(p_cur.data(), tti_->cur.data(), n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaTtiWavefield::zero_state() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemsetAsync(tti_->prev.data(), 0, tti_->prev.bytes(), stream_));
  CUDA_CHECK(cudaMemsetAsync(tti_->cur.data(), 0, tti_->cur.bytes(), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaTtiWavefield::do_step_planes(int k_begin, int k_end) {
  if (k_begin == k_end) return;
  CUDA_CHECK(cudaSetDevice(device_));
  begin_timed();
  // Pass 1 on planes k_begin - 4 .. k_end + 4 (clipped), pass 2 on [k_begin, k_end): cur -> prev.
  tti_->launch(variant_.c_str(), k_begin, k_end, stream_);
  end_timed(TimedOp::step);
}

void CudaTtiWavefield::finish_step() {
  timer_.count_step();
  std::swap(tti_->prev, tti_->cur);
}

void CudaTtiWavefield::reverse_time() { std::swap(tti_->prev, tti_->cur); }

PlaneSpan CudaTtiWavefield::do_next_field_planes(int k_begin, int k_end) {
  PlaneSpan span;
  span.data = tti_->prev.data() + layout().index(-kHalo, -kHalo, k_begin);
  span.bytes = size_t(k_end - k_begin) * size_t(layout().plane) * sizeof(float);
  span.device = device_;
  return span;
}

void CudaTtiWavefield::synchronize() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

FieldHealth CudaTtiWavefield::check_health() const {
  // Both fields, as the CPU reference: the worse of the two, p on a tie.
  CUDA_CHECK(cudaSetDevice(device_));
  const GridLayout& t = layout();
  const FieldHealth p = field_health(t, DeviceField{cur(), Storage::fp32}, stream_);
  const FieldHealth q = field_health(t, DeviceField{cur() + tti_q_offset(t), Storage::fp32}, stream_);
  return health_badness(q.worst_value) > health_badness(p.worst_value) ? q : p;
}

// ---- boxes of p ---------------------------------------------------------------------------------

float* CudaTtiWavefield::box_staging(const Box& box) const {
  const size_t bytes = size_t(box.cells()) * sizeof(float);
  if (box_staging_.bytes() < bytes) {
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the old buffer may still be in use
    box_staging_ = DeviceBuffer();
    box_staging_ = DeviceBuffer(bytes, AllocationKind::plain, device_);
  }
  return box_staging_.as<float>();
}

void CudaTtiWavefield::do_copy_current(const Box& box, std::vector<float>& dense) const {
  CUDA_CHECK(cudaSetDevice(device_));
  dense.resize(size_t(box.cells()));
  float* staging = box_staging(box);
  begin_timed();
  pack_box(layout(), box, cur(), Storage::fp32, staging, stream_); // p's cells: layout().index
  CUDA_CHECK(cudaMemcpyAsync(dense.data(), staging, dense.size() * sizeof(float), cudaMemcpyDeviceToHost,
                             stream_));
  end_timed(TimedOp::box_copy);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaTtiWavefield::do_set_current(const Box& box, const std::vector<float>& dense) {
  CUDA_CHECK(cudaSetDevice(device_));
  float* staging = box_staging(box);
  begin_timed();
  CUDA_CHECK(cudaMemcpyAsync(staging, dense.data(), dense.size() * sizeof(float), cudaMemcpyHostToDevice,
                             stream_));
  unpack_box(layout(), box, staging, cur(), Storage::fp32, stream_);
  end_timed(TimedOp::box_copy);
  // `dense` is pageable: the copy is staged before the call returns, so the caller may free it.
}

std::unique_ptr<SnapshotStore> CudaTtiWavefield::do_make_snapshot_store(const Box& box, int slots,
                                                                       RingPrecision precision,
                                                                       SnapshotPlace place) {
  SnapshotFieldAccess field;
  field.owner = this;
  field.device = device_;
  field.stream = stream_;
  field.storage = Storage::fp32;
  field.current = [this] { return static_cast<void*>(cur()); }; // p's cells: layout().index
  field.require_free_memory = [this](size_t bytes, const std::string& what, const std::string& hint) {
    require_free_memory(bytes, what, hint);
  };
  field.begin_timed = [this] { begin_timed(); };
  field.end_timed = [this] { end_timed(TimedOp::box_copy); };
  return make_cuda_snapshot_store(field, box, slots, precision, place);
}

// ---- profiling ----------------------------------------------------------------------------------

void CudaTtiWavefield::enable_timing(bool on) { timer_.enable(on); }

PropagatorTiming CudaTtiWavefield::timing() const { return timer_.timing(); }

void CudaTtiWavefield::begin_timed() const { timer_.begin(stream_); }

void CudaTtiWavefield::end_timed(TimedOp op) const { timer_.end(stream_, op); }

// ---- the factory ----------------------------------------------------------------------------------

std::unique_ptr<Wavefield> make_cuda_tti_wavefield(const PropagatorSetup& setup, const std::string& variant,
                                                   int device) {
  return std::make_unique<CudaTtiWavefield>(setup, variant, device);
}

} // namespace rtm::cuda
