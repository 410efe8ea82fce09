// A shot's source and receiver fields on one GPU (solvers/contracts/shot_fields.h), with the image, the
// illumination and the Born perturbation in device memory. Both fields run the same kernel and
// storage on the same device, so the two-field operations read the other field's memory directly;
// the two streams wait for each other through events, so nothing synchronises the host.
// Snapshots of the sums for checkpoints go through pinned host buffers on a copy stream of their
// own, so that the next shot's steps start while the copy runs.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "kernels/cuda/fields/cuda_propagator.cuh"

namespace rtm::cuda {

struct PinnedSums; // the pinned host copies of the sums (cuda_shot_fields.cu)

class CudaShotFields final : public ShotFields {
public:
  // Takes two wavefields of one device, grid and storage (make_cuda_shot_fields makes them).
  CudaShotFields(std::unique_ptr<CudaWavefield> source, std::unique_ptr<CudaWavefield> receiver);
  ~CudaShotFields() override;

  CudaWavefield& cuda_source() { return *source_; }
  CudaWavefield& cuda_receiver() { return *receiver_; }

private:
  void do_allocate_image(const Box& box) override;
  void do_accumulate_image(float weight) override;
  std::vector<float> do_download_image(bool illumination) const override;
  void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void do_set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void do_inject_born_source() override;
  // Every condition of solvers/contracts/imaging_condition.h (float32 and half storage).
  bool do_supports_imaging_condition(ImagingCondition) const override { return true; }
  bool do_supports_offset_gathers() const override { return true; }
  void do_allocate_offset_gathers(const OffsetGatherLayout& layout) override;
  void do_accumulate_offset_gathers(float weight) override;
  std::vector<float> do_download_offset_gathers() const override;
  // On the receiver's stream, behind its imaging (kernels/cuda/fields/image_finish.cuh).
  bool do_supports_image_finish() const override { return true; }
  void do_finish_image(const ImageFinish& finish) override;
  // The copy into pinned host buffers (made by prepare_snapshots before the loop, or else at the
  // first snapshot; kept for the run), queued on copy_stream_ behind the imaging queued so far; the
  // host does not wait.
  std::unique_ptr<ImageSnapshot> do_snapshot_image() override;
  void do_prepare_snapshots() override;
  // pinned_ sized for the image box now (made, or made again after allocate_image changed it).
  void ensure_pinned_sums();
  // One kernel for both fields' steps and the imaging (kernels/cuda/steps/fused_backward.cuh) where
  // the variant has one; the separate calls otherwise.
  void do_step_both(float image_weight) override;

  // Around an operation on the receiver's stream that reads the source field's current field:
  // begin makes the receiver's stream wait for the work queued on the source's; end makes the
  // source's stream wait for this operation (its next step overwrites the field read).
  void begin_handoff();
  void end_handoff();
  // Before the receiver's stream writes the image or the illumination: a snapshot's copy still
  // reading them goes first (the stream waits on the device; the host does not).
  void wait_for_snapshot_copy();

  std::unique_ptr<CudaWavefield> source_, receiver_;
  // Imaging (float [z][y][x] over image_box()) and the Born perturbation (float over born_box()),
  // on the receiver's device.
  DeviceBuffer image_, illumination_, born_m_;
  DeviceBuffer gathers_; // the offset gathers (float, as gather_layout() says)
  cudaEvent_t source_ready_ = nullptr, receiver_done_ = nullptr;
  // Snapshots: sums_ready_ marks the imaging a copy must follow; copy_pending_ says the receiver's
  // stream has not waited for the last copy yet.
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t sums_ready_ = nullptr;
  std::shared_ptr<PinnedSums> pinned_;
  bool copy_pending_ = false;
};

// Both fields running `variant` ("auto" chooses once, for the source field) with `options`.
std::unique_ptr<CudaShotFields> make_cuda_shot_fields(const PropagatorSetup& setup,
                                                      const std::string& variant,
                                                      const MemoryOptions& options, int device,
                                                      std::ostream* log);

} // namespace rtm::cuda
