// A shot's state for reverse time migration and Born modeling (docs/rtm.md): a source wavefield
// and a receiver wavefield of one backend on one grid, and the arrays of the two-field operations,
// the image, the illumination and the Born perturbation, dense [z][y][x] over their boxes.
//
// The backend builds both wavefields together, so the two-field operations reach the other field's
// memory without asking what type it is. Plain C++; implemented by the CPU reference
// (kernels/cpu/cpu_propagator.h), the CUDA backend (kernels/cuda/fields/cuda_shot_fields.cu) and the z-slab
// decomposition (kernels/mpi/decomposed_propagator.h). As in solvers/contracts/wavefield.h, the public methods
// check their arguments once and call the private do_* hooks.
//
// Born modeling (solvers/drivers/born.h) uses the source field as the background field and the receiver
// field as the scattered one.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "solvers/contracts/image_finish.h"
#include "solvers/contracts/imaging_condition.h"
#include "solvers/contracts/offset_gathers.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

// The image and the illumination as they were when ShotFields::snapshot_image was called, on
// their way to host memory: take() waits for the copy (where it is not done yet) and hands both
// arrays over, once, on any thread. A migration's checkpoint is written from one
// (solvers/drivers/checkpoint_writer.h) while the next shot steps.
class ImageSnapshot {
public:
  struct Sums {
    std::vector<float> image, illumination;
  };
  virtual ~ImageSnapshot() = default;
  virtual Sums take() = 0;
};

// A snapshot whose copy is done: the arrays downloaded before it was made.
class ReadyImageSnapshot final : public ImageSnapshot {
public:
  explicit ReadyImageSnapshot(Sums sums) : sums_(std::move(sums)) {}
  Sums take() override { return std::move(sums_); }

private:
  Sums sums_;
};

class ShotFields {
public:
  virtual ~ShotFields() = default;
  ShotFields(const ShotFields&) = delete;
  ShotFields& operator=(const ShotFields&) = delete;

  Wavefield& source() { return *source_; }
  Wavefield& receiver() { return *receiver_; }
  const Wavefield& source() const { return *source_; }
  const Wavefield& receiver() const { return *receiver_; }
  std::string name() const { return source_->name(); }

  // Imaging condition over `box`, with S the source field's current field and R the receiver
  // field's:  image += weight * S * R,   illumination += weight * S * S  (cross, the default);
  // the other conditions of solvers/contracts/imaging_condition.h replace S * R by their value
  // (their derivatives read only cells of `box`; separated reads both fields' previous fields too).
  // allocate_image zeroes both (replacing earlier ones; earlier offset gathers are dropped).
  // std::invalid_argument for a condition
  // this backend does not offer (the drivers refuse those first, naming the option).
  void allocate_image(const Box& box, ImagingCondition condition = ImagingCondition::cross) {
    source_->check_box(box, "allocate_image");
    if (condition != ImagingCondition::cross && !do_supports_imaging_condition(condition))
      throw std::invalid_argument(name() + "::allocate_image: the imaging condition '" +
                                  imaging_condition_info(condition).name +
                                  "' is not implemented here");
    do_allocate_image(box);
    image_box_ = box;
    imaging_condition_ = condition;
    has_image_ = true;
    has_gathers_ = false; // they were over the box before
  }
  ImagingCondition imaging_condition() const { return imaging_condition_; }
  // Also accumulates the offset gathers where allocate_offset_gathers made them (same S, R, weight).
  void accumulate_image(float weight) {
    require_image("accumulate_image");
    do_accumulate_image(weight);
    if (has_gathers_) do_accumulate_offset_gathers(weight);
  }

  // Subsurface-offset gathers (solvers/contracts/offset_gathers.h) over the image box, accumulated
  // by every accumulate_image (and step_both's imaging) from now on; zeroed here. Call after
  // allocate_image. std::invalid_argument where this backend does not offer them (the drivers
  // refuse those first, naming the option) or the spec is not valid.
  void allocate_offset_gathers(const OffsetGatherSpec& spec) {
    require_image("allocate_offset_gathers");
    const OffsetGatherLayout layout = offset_gather_layout(image_box_, spec);
    if (!do_supports_offset_gathers())
      throw std::invalid_argument(name() + "::allocate_offset_gathers: offset gathers are not "
                                           "implemented here");
    do_allocate_offset_gathers(layout);
    gather_layout_ = layout;
    has_gathers_ = true;
  }
  bool has_offset_gathers() const { return has_gathers_; }
  const OffsetGatherLayout& gather_layout() const { return gather_layout_; }
  // Dense as OffsetGatherLayout says; empty before allocate_offset_gathers.
  std::vector<float> download_offset_gathers() const {
    return has_gathers_ ? do_download_offset_gathers() : std::vector<float>();
  }
  // Empty before allocate_image.
  std::vector<float> download_image() const {
    return has_image_ ? do_download_image(false) : std::vector<float>();
  }
  std::vector<float> download_illumination() const {
    return has_image_ ? do_download_image(true) : std::vector<float>();
  }
  // The image finished where the sums lie, for a caller that needs neither sum afterwards: each
  // cell normalised by its illumination and then, with finish.laplacian, the Laplacian filter, by
  // solvers/contracts/image_finish.h's arithmetic (the bits a host finish of the downloaded sums
  // gives). download_image then gives the finished image; the illumination is used up (its
  // values undefined until the next allocate_image). Only where supports_image_finish() says
  // so (the CUDA backend: it spares the download of the illumination and the host's passes);
  // std::logic_error elsewhere, so a caller asks first and finishes on the host otherwise.
  bool supports_image_finish() const { return has_image_ && do_supports_image_finish(); }
  void finish_image(const ImageFinish& finish) {
    require_image("finish_image");
    if (!do_supports_image_finish())
      throw std::logic_error(name() + "::finish_image: not offered here; finish the downloaded sums");
    do_finish_image(finish);
  }
  // Both, as download_image and download_illumination give them now, for a checkpoint; the
  // operations after the return may change the sums without changing the snapshot. The CUDA
  // backend queues the copy (into pinned host memory of its own, on a copy stream) and returns at
  // once, its next imaging waiting on the device for the copy; the others copy before the return
  // (the z-slab split collectively, as download_image). One snapshot at a time: the one before must
  // be taken or dropped first (the CUDA backend throws std::logic_error otherwise). A snapshot must
  // not outlive its fields. Empty arrays before allocate_image.
  std::unique_ptr<ImageSnapshot> snapshot_image() {
    if (!has_image_) return std::make_unique<ReadyImageSnapshot>(ImageSnapshot::Sums{});
    return do_snapshot_image();
  }
  // Makes ready now what snapshot_image needs for the image box of allocate_image (the CUDA
  // backend: its pinned host buffers, kept for the run), so that the first snapshot allocates
  // nothing: a driver that takes snapshots calls it before its loop. Nothing to do on the other
  // backends, nor before allocate_image; a later allocate_image with another box makes the next
  // snapshot allocate again.
  void prepare_snapshots() {
    if (has_image_) do_prepare_snapshots();
  }
  // Replaces the image and the illumination (dense over the box of allocate_image) with saved
  // ones, so that a resumed migration accumulates onto exactly the sums it had reached
  // (solvers/drivers/migration.h). std::invalid_argument when a size differs from the box's.
  void set_image(const std::vector<float>& image, const std::vector<float>& illumination) {
    require_image("set_image");
    if (int64_t(image.size()) != image_box_.cells() || int64_t(illumination.size()) != image_box_.cells())
      throw std::invalid_argument(name() + "::set_image: expected " +
                                  std::to_string(image_box_.cells()) +
                                  " values for the image box, got " + std::to_string(image.size()) +
                                  " (image) and " + std::to_string(illumination.size()) +
                                  " (illumination)");
    do_set_image(image, illumination);
  }
  const Box& image_box() const { return image_box_; }

  // The part of the sums this process holds, dense over that part of the image box: the whole box
  // (download_image's arrays) for a grid on one device, and a z-slab split's own planes of it
  // (empty where the box misses them), not gathered and not collective. The whole model is the
  // one-slab case, so the drivers' slab paths (checkpoints, the image's filter) take any fields.
  std::vector<float> download_own_image(bool illumination) const {
    return has_image_ ? do_download_own_image(illumination) : std::vector<float>();
  }
  // The reverse, for a resumed migration's partial sums read part by part.
  void set_own_image(const std::vector<float>& image, const std::vector<float>& illumination) {
    do_set_own_image(image, illumination);
  }

  // One step of the backward sweep of both fields (docs/rtm.md, section 5): when image_weight > 0,
  // first accumulate_image(image_weight) (S and R as they are now); then the receiver field steps,
  // then the source field steps. Whole steps only; injections and the ring restore stay with the
  // caller. The result is that of the three separate calls; a backend may do it in one pass over
  // memory (the CUDA backend: one kernel that reads the model term once and images in the same
  // pass, where its kernel allows). The CPU reference and the z-slab split make the separate calls.
  // Conditions other than cross, and offset gathers, image through the separate calls (no fused
  // kernel has them yet).
  void step_both(float image_weight) {
    if (image_weight > 0) require_image("step_both");
    if (image_weight > 0 && (imaging_condition_ != ImagingCondition::cross || has_gathers_)) {
      accumulate_image(image_weight);
      receiver_->step();
      source_->step();
      return;
    }
    do_step_both(image_weight);
  }

  // Born modeling: a perturbation m, dense [z][y][x] over `box`, and its source term
  //   receiver p_cur += v2dt2 * m * S   over the box, S the source field's current field.
  void set_born_perturbation(const Box& box, const std::vector<float>& m) {
    source_->check_box(box, "set_born_perturbation");
    source_->check_box_values(box, m.size(), "set_born_perturbation");
    do_set_born_perturbation(box, m);
    born_box_ = box;
    has_born_ = true;
  }
  void inject_born_source() {
    if (!has_born_)
      throw std::logic_error(name() + "::inject_born_source: call set_born_perturbation first");
    do_inject_born_source();
  }
  const Box& born_box() const { return born_box_; }

  // Profiling of both fields (solvers/contracts/field_probes.h): imaging and Born sources count on the
  // receiver field's clock.
  void enable_timing(bool on) {
    source_->enable_timing(on);
    receiver_->enable_timing(on);
  }
  PropagatorTiming timing() const {
    PropagatorTiming t = source_->timing();
    t += receiver_->timing();
    return t;
  }

protected:
  ShotFields() = default;
  // Called once by the implementation's constructor: the two fields it owns.
  void bind(Wavefield& source, Wavefield& receiver) {
    if (!source.layout().same_shape(receiver.layout()))
      throw std::invalid_argument("ShotFields: the source and receiver fields have different grids");
    source_ = &source;
    receiver_ = &receiver;
  }

private:
  virtual void do_allocate_image(const Box& box) = 0;
  virtual void do_accumulate_image(float weight) = 0;
  virtual std::vector<float> do_download_image(bool illumination) const = 0;
  virtual void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) = 0;
  virtual void do_set_born_perturbation(const Box& box, const std::vector<float>& m) = 0;
  virtual void do_inject_born_source() = 0;

protected:
  // Both arrays downloaded now; a backend that can copy them beside its next steps overrides it.
  virtual std::unique_ptr<ImageSnapshot> do_snapshot_image() {
    ImageSnapshot::Sums sums{do_download_image(false), do_download_image(true)};
    return std::make_unique<ReadyImageSnapshot>(std::move(sums));
  }
  virtual void do_prepare_snapshots() {}
  // The image's finish where the sums lie: none by default.
  virtual bool do_supports_image_finish() const { return false; }
  virtual void do_finish_image(const ImageFinish&) {}
  // Offset gathers: none by default (the z-slab split and TTI have none).
  virtual bool do_supports_offset_gathers() const { return false; }
  virtual void do_allocate_offset_gathers(const OffsetGatherLayout&) {}
  virtual void do_accumulate_offset_gathers(float) {}
  virtual std::vector<float> do_download_offset_gathers() const { return {}; }
  // Whether do_accumulate_image computes `condition` (cross always).
  virtual bool do_supports_imaging_condition(ImagingCondition) const { return false; }
  // The whole box; the z-slab split overrides them with its own planes.
  virtual std::vector<float> do_download_own_image(bool illumination) const {
    return do_download_image(illumination);
  }
  virtual void do_set_own_image(const std::vector<float>& image, const std::vector<float>& illumination) {
    set_image(image, illumination);
  }
  // The separate calls; a backend overrides it with a fused pass where it has one (and calls
  // this where it has none).
  virtual void do_step_both(float image_weight) {
    if (image_weight > 0) do_accumulate_image(image_weight);
    receiver_->step();
    source_->step();
  }

private:

  void require_image(const char* what) const {
    if (!has_image_) throw std::logic_error(name() + "::" + what + ": call allocate_image first");
  }

  Wavefield* source_ = nullptr;
  Wavefield* receiver_ = nullptr;
  Box image_box_, born_box_;
  ImagingCondition imaging_condition_ = ImagingCondition::cross;
  OffsetGatherLayout gather_layout_;
  bool has_image_ = false, has_born_ = false, has_gathers_ = false;
};

} // namespace rtm
