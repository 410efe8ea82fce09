// A shot's fields on one GPU (kernels/cuda/fields/cuda_shot_fields.cuh): the imaging condition and the Born
// source between the source and the receiver field, and the image arrays.
#include "kernels/cuda/fields/cuda_shot_fields.cuh"

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/steps/fused_backward.cuh"
#include "kernels/cuda/fields/image_finish.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"

namespace rtm::cuda {

// Pinned host copies of the image and the illumination, and the event that marks the copy into
// them done. Pinned, the device-to-host copy runs at the bus's speed and asynchronously (a
// pageable copy goes through the driver's bounce buffer at a tenth of it and holds the host).
// Shared by the fields and the snapshot not yet taken, so either may go first.
struct PinnedSums {
  int device = 0;
  size_t count = 0; // floats per array
  float* image = nullptr;
  float* illumination = nullptr;
  cudaEvent_t copied = nullptr;
  std::atomic<bool> held{false}; // a snapshot is reading (or will read) the buffers

  PinnedSums() = default;
  PinnedSums(const PinnedSums&) = delete;
  PinnedSums& operator=(const PinnedSums&) = delete;
  ~PinnedSums() {
    cudaSetDevice(device);
    if (copied) {
      cudaEventSynchronize(copied); // a copy into the buffers may still run
      cudaEventDestroy(copied);
    }
    if (image) cudaFreeHost(image);
    if (illumination) cudaFreeHost(illumination);
  }
};

namespace {

std::shared_ptr<PinnedSums> make_pinned_sums(int device, size_t count) {
  auto sums = std::make_shared<PinnedSums>();
  sums->device = device;
  sums->count = count;
  CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&sums->image), count * sizeof(float),
                           cudaHostAllocDefault));
  CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&sums->illumination), count * sizeof(float),
                           cudaHostAllocDefault));
  CUDA_CHECK(cudaEventCreateWithFlags(&sums->copied, cudaEventDisableTiming));
  return sums;
}

// take() waits for the copy and copies the pinned buffers out (on the caller's thread: the
// checkpoint writer's), then frees them for the next snapshot.
class PinnedImageSnapshot final : public ImageSnapshot {
public:
  explicit PinnedImageSnapshot(std::shared_ptr<PinnedSums> sums) : sums_(std::move(sums)) {}
  ~PinnedImageSnapshot() override { release(); }

  Sums take() override {
    if (!sums_) throw std::logic_error("ImageSnapshot::take: the sums were taken already");
    CUDA_CHECK(cudaSetDevice(sums_->device));
    CUDA_CHECK(cudaEventSynchronize(sums_->copied));
    Sums out;
    out.image.assign(sums_->image, sums_->image + sums_->count);
    out.illumination.assign(sums_->illumination, sums_->illumination + sums_->count);
    release();
    return out;
  }

private:
  void release() {
    if (!sums_) return;
    sums_->held = false;
    sums_.reset();
  }

  std::shared_ptr<PinnedSums> sums_;
};

} // namespace

CudaShotFields::CudaShotFields(std::unique_ptr<CudaWavefield> source,
                               std::unique_ptr<CudaWavefield> receiver)
    : source_(std::move(source)), receiver_(std::move(receiver)) {
  // The kernels read both fields' memory with one storage type on one device: made so by
  // make_cuda_shot_fields, checked here once.
  if (source_->device() != receiver_->device() ||
      source_->variant().storage != receiver_->variant().storage)
    throw std::invalid_argument("CudaShotFields: both fields must be on one GPU with one storage");
  bind(*source_, *receiver_);
  CUDA_CHECK(cudaSetDevice(receiver_->device()));
  CUDA_CHECK(cudaEventCreateWithFlags(&source_ready_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&receiver_done_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&sums_ready_, cudaEventDisableTiming));
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
}

CudaShotFields::~CudaShotFields() {
  cudaSetDevice(receiver_->device());
  cudaStreamSynchronize(receiver_->stream_); // queued imaging may still use the arrays
  cudaStreamSynchronize(source_->stream_);
  cudaStreamSynchronize(copy_stream_);       // and a snapshot's copy read them
  cudaStreamDestroy(copy_stream_);
  cudaEventDestroy(source_ready_);
  cudaEventDestroy(receiver_done_);
  cudaEventDestroy(sums_ready_);
}

void CudaShotFields::wait_for_snapshot_copy() {
  if (!copy_pending_) return;
  // Once waited for, everything queued on the stream later follows the copy too.
  CUDA_CHECK(cudaStreamWaitEvent(receiver_->stream_, pinned_->copied, 0));
  copy_pending_ = false;
}

void CudaShotFields::begin_handoff() {
  CUDA_CHECK(cudaEventRecord(source_ready_, source_->stream_));
  CUDA_CHECK(cudaStreamWaitEvent(receiver_->stream_, source_ready_, 0));
}

void CudaShotFields::end_handoff() {
  CUDA_CHECK(cudaEventRecord(receiver_done_, receiver_->stream_));
  CUDA_CHECK(cudaStreamWaitEvent(source_->stream_, receiver_done_, 0));
}

void CudaShotFields::do_allocate_image(const Box& box) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  CUDA_CHECK(cudaStreamSynchronize(r.stream_)); // queued imaging may still use the old arrays
  CUDA_CHECK(cudaStreamSynchronize(copy_stream_)); // and a snapshot's copy read them
  copy_pending_ = false;
  image_ = DeviceBuffer();
  illumination_ = DeviceBuffer();
  gathers_ = DeviceBuffer(); // offset gathers belong to the image before (ShotFields drops them)
  const size_t bytes = size_t(box.cells()) * sizeof(float);
  r.require_free_memory(2 * bytes,
                        "the image and the illumination (2 x " + std::to_string(box.cells()) +
                            " cells x 4 B)",
                        "");
  image_ = DeviceBuffer(bytes, AllocationKind::plain, r.device_);
  illumination_ = DeviceBuffer(bytes, AllocationKind::plain, r.device_);
  CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, bytes, r.stream_));
  CUDA_CHECK(cudaMemsetAsync(illumination_.data(), 0, bytes, r.stream_));
}

void CudaShotFields::do_accumulate_image(float weight) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  wait_for_snapshot_copy();
  begin_handoff();
  r.begin_timed();
  accumulate_condition_box(r.layout(), image_box(), imaging_condition(), r.weights_, source_->cur_,
                           source_->prev_, r.cur_, r.prev_, r.row_->storage, weight,
                           image_.as<float>(), illumination_.as<float>(), r.stream_);
  r.end_timed(CudaWavefield::TimedOp::imaging);
  end_handoff();
}

void CudaShotFields::do_allocate_offset_gathers(const OffsetGatherLayout& layout) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  CUDA_CHECK(cudaStreamSynchronize(r.stream_)); // queued imaging may still use the old array
  gathers_ = DeviceBuffer();
  const size_t bytes = size_t(layout.bytes());
  r.require_free_memory(bytes,
                        "the offset gathers (" + std::to_string(layout.values()) + " values x 4 B)",
                        "fewer --offset-lags or a larger --gather-stride");
  gathers_ = DeviceBuffer(bytes, AllocationKind::plain, r.device_);
  CUDA_CHECK(cudaMemsetAsync(gathers_.data(), 0, bytes, r.stream_));
}

// After do_accumulate_image, on the receiver's stream: the handoff there already made it wait
// for the source field's stream, and this reads the same two fields.
void CudaShotFields::do_accumulate_offset_gathers(float weight) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  begin_handoff();
  r.begin_timed();
  accumulate_offset_gathers(r.layout(), gather_layout(), source_->cur_, r.cur_, r.row_->storage,
                            weight, gathers_.as<float>(), r.stream_);
  r.end_timed(CudaWavefield::TimedOp::imaging);
  end_handoff();
}

std::vector<float> CudaShotFields::do_download_offset_gathers() const {
  std::vector<float> host(gathers_.bytes() / sizeof(float));
  if (host.empty()) return host;
  CUDA_CHECK(cudaSetDevice(receiver_->device_));
  CUDA_CHECK(cudaMemcpyAsync(host.data(), gathers_.data(), gathers_.bytes(),
                             cudaMemcpyDeviceToHost, receiver_->stream_));
  CUDA_CHECK(cudaStreamSynchronize(receiver_->stream_));
  return host;
}

std::vector<float> CudaShotFields::do_download_image(bool illumination) const {
  const DeviceBuffer& buffer = illumination ? illumination_ : image_;
  std::vector<float> host(buffer.bytes() / sizeof(float));
  if (host.empty()) return host;
  CUDA_CHECK(cudaSetDevice(receiver_->device_));
  CUDA_CHECK(cudaMemcpyAsync(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost,
                             receiver_->stream_));
  CUDA_CHECK(cudaStreamSynchronize(receiver_->stream_));
  return host;
}

std::unique_ptr<ImageSnapshot> CudaShotFields::do_snapshot_image() {
  CudaWavefield& r = *receiver_;
  const size_t count = image_.bytes() / sizeof(float);
  if (count == 0) return std::make_unique<ReadyImageSnapshot>(ImageSnapshot::Sums{});
  if (pinned_ && pinned_->held)
    throw std::logic_error(name() + "::snapshot_image: the snapshot before is still held; take or "
                                    "drop it first");
  CUDA_CHECK(cudaSetDevice(r.device_));
  ensure_pinned_sums(); // made before the loop where the driver called prepare_snapshots
  // Behind the imaging queued so far on the receiver's stream, which goes on meanwhile.
  CUDA_CHECK(cudaEventRecord(sums_ready_, r.stream_));
  CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, sums_ready_, 0));
  CUDA_CHECK(cudaMemcpyAsync(pinned_->image, image_.data(), image_.bytes(), cudaMemcpyDeviceToHost,
                             copy_stream_));
  CUDA_CHECK(cudaMemcpyAsync(pinned_->illumination, illumination_.data(), illumination_.bytes(),
                             cudaMemcpyDeviceToHost, copy_stream_));
  CUDA_CHECK(cudaEventRecord(pinned_->copied, copy_stream_));
  copy_pending_ = true;
  pinned_->held = true;
  return std::make_unique<PinnedImageSnapshot>(pinned_);
}

void CudaShotFields::do_prepare_snapshots() {
  if (image_.bytes() == 0) return;
  if (pinned_ && pinned_->held)
    throw std::logic_error(name() + "::prepare_snapshots: a snapshot is still held; take or drop "
                                    "it first");
  CUDA_CHECK(cudaSetDevice(receiver_->device_));
  ensure_pinned_sums();
}

void CudaShotFields::ensure_pinned_sums() {
  const size_t count = image_.bytes() / sizeof(float);
  if (pinned_ && pinned_->count == count) return;
  // Not held (checked by the callers), and no copy into the old buffers pending: allocate_image,
  // the only way to another box, waited for the copy stream.
  pinned_.reset();
  pinned_ = make_pinned_sums(receiver_->device_, count);
}

void CudaShotFields::do_finish_image(const ImageFinish& finish) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  wait_for_snapshot_copy(); // a checkpoint's copy may still read the sums
  const Box& box = image_box();
  bool filtered_in_illumination = false;
  finish_image_on_device(image_.as<float>(), illumination_.as<float>(), box.nx(), box.ny(), box.nz(),
                         finish, r.stream_, filtered_in_illumination);
  if (filtered_in_illumination) std::swap(image_, illumination_);
}

void CudaShotFields::do_set_image(const std::vector<float>& image,
                                  const std::vector<float>& illumination) {
  cudaStream_t stream = receiver_->stream_;
  CUDA_CHECK(cudaSetDevice(receiver_->device_));
  wait_for_snapshot_copy();
  CUDA_CHECK(cudaMemcpyAsync(image_.data(), image.data(), image_.bytes(), cudaMemcpyHostToDevice,
                             stream));
  CUDA_CHECK(cudaMemcpyAsync(illumination_.data(), illumination.data(), illumination_.bytes(),
                             cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream)); // the host vectors may go away after the return
}

void CudaShotFields::do_set_born_perturbation(const Box&, const std::vector<float>& m) {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  CUDA_CHECK(cudaStreamSynchronize(r.stream_)); // queued Born sources may still read the old one
  born_m_ = DeviceBuffer();
  born_m_ = DeviceBuffer(m.size() * sizeof(float), AllocationKind::plain, r.device_);
  CUDA_CHECK(cudaMemcpyAsync(born_m_.data(), m.data(), born_m_.bytes(), cudaMemcpyHostToDevice,
                             r.stream_));
  CUDA_CHECK(cudaStreamSynchronize(r.stream_));
}

void CudaShotFields::do_inject_born_source() {
  CudaWavefield& r = *receiver_;
  CUDA_CHECK(cudaSetDevice(r.device_));
  begin_handoff();
  r.begin_timed();
  add_born_source(r.layout(), born_box(), source_->cur_, r.v2dt2_.data(), born_m_.as<float>(),
                  r.cur_, r.row_->storage, r.stream_);
  r.end_timed(CudaWavefield::TimedOp::born);
  end_handoff();
}

void CudaShotFields::do_step_both(float weight) {
  CudaWavefield& s = *source_;
  CudaWavefield& r = *receiver_;
  // Both fields run one kernel on one grid made from one setup (make_cuda_shot_fields), so the
  // receiver's v2dt2 and damping profiles are the source's too.
  if (s.row_ != r.row_ || !has_fused_backward(*r.row_)) {
    ShotFields::do_step_both(weight);
    return;
  }
  CUDA_CHECK(cudaSetDevice(r.device_));
  FusedBackwardArgs a;
  a.variant_step = r.row_->launch;
  WaveStepArgs& step = a.source;
  step.layout = r.layout();
  step.weights = r.weights_;
  step.p_cur = s.cur_;
  step.p_prev_next = s.prev_;
  step.v2dt2 = r.v2dt2_.data();
  if (r.damp_x_.data()) {
    step.damp_x = r.damp_x_.as<float>();
    step.damp_y = r.damp_y_.as<float>();
    step.damp_z = r.damp_z_.as<float>();
  }
  step.sm_count = r.sm_count_;
  a.receiver_cur = r.cur_;
  a.receiver_prev_next = r.prev_;
  if (weight > 0) {
    a.box = image_box();
    a.weight = weight;
    a.image = image_.as<float>();
    a.illumination = illumination_.as<float>();
  }
  const int nz = r.layout().nz;
  if (weight > 0) wait_for_snapshot_copy();
  begin_handoff(); // the source field's queued work (its injection, the ring) first
  r.begin_timed();
  // The fused kernels read both fields' z halos from memory as the single-field variants do:
  // both get the surface's image first (one setup: both have it or neither).
  if (r.free_surface_) {
    mirror_free_surface(r.layout(), s.cur_, s.row_->storage, r.stream_);
    mirror_free_surface(r.layout(), r.cur_, r.row_->storage, r.stream_);
  }
  launch_fused_backward(a, r.stream_);
  // The C-PML's corrections after the undamped steps, as do_step_planes: the receiver's here,
  // the source's on its own stream once that has waited for the fused kernel.
  r.cpml_.apply(r.row_->storage, r.cur_, r.v2dt2_.data(), r.prev_, 0, nz, r.stream_);
  r.end_timed(CudaWavefield::TimedOp::step);
  end_handoff();
  if (s.cpml_.active()) {
    s.begin_timed();
    s.cpml_.apply(s.row_->storage, s.cur_, s.v2dt2_.data(), s.prev_, 0, nz, s.stream_);
    s.end_timed(CudaWavefield::TimedOp::step);
  }
  r.finish_step();
  s.finish_step();
  r.timer_.count_fused_step();
  s.timer_.count_fused_step();
}

std::unique_ptr<CudaShotFields> make_cuda_shot_fields(const PropagatorSetup& setup,
                                                      const std::string& variant,
                                                      const MemoryOptions& options, int device,
                                                      std::ostream* log) {
  std::unique_ptr<CudaWavefield> source = make_cuda_wavefield(setup, variant, options, device, log);
  // Imaging, Born and box copies read a field cell by cell: not written for bfp16 (yet).
  if (source->variant().storage == Storage::bfp16)
    source->refuse_for_bfp16("migration (the imaging condition, Born sources, box copies)");
  // The receiver field runs the kernel the source field runs ("auto" has chosen it), with the
  // memory options in effect there.
  auto receiver = std::make_unique<CudaWavefield>(setup, source->variant(), source->memory_options(),
                                                  device, source.get());
  return std::make_unique<CudaShotFields>(std::move(source), std::move(receiver));
}

} // namespace rtm::cuda
