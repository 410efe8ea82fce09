#include "kernels/cuda/fields/cuda_propagator.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "kernels/cuda/fields/autotune.cuh"
#include "kernels/cuda/steps/bfp16_io.cuh"
#include "kernels/cuda/fields/bfp16_ops.cuh"
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/fields/cuda_shot_fields.cuh"
#include "kernels/cuda/fields/memory_options.cuh"
#include "kernels/cuda/fields/rtm_ops.cuh"
#include "solvers/contracts/errors.h"

namespace rtm::cuda {
namespace {

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

const char* const kBfp16Supports =
    "the wave step (undamped or with the sponge), point sources and receivers, the health check "
    "and state upload/download (rtm bench, the point workload and --error-vs-steps, rtm model "
    "with --absorber sponge on one GPU)";

// ---- the wavefield ---------------------------------------------------------------------------

CudaWavefield::CudaWavefield(const PropagatorSetup& setup, const VariantRow& row,
                               const MemoryOptions& memory, int device,
                               const CudaWavefield* same_model)
    : Wavefield(setup.layout), device_(device), row_(&row), memory_(memory),
      weights_(setup.weights), free_surface_(setup.free_surface), timer_(device) {
  const GridLayout& g = setup.layout;
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
  if (row.storage == Storage::bfp16 && !setup.cpml.empty())
    refuse_for_bfp16("the C-PML (choose --absorber sponge)");
  const size_t field_bytes = this->field_bytes();
  const size_t model_bytes = size_t(g.size) * (model_storage() == Storage::fp32 ? sizeof(float) : sizeof(__half));
  const size_t staging_bytes = size_t(std::max<int64_t>(g.size, g.interior_cells())) * sizeof(float);
  const size_t model_copy_bytes =
      row.kernel_model == Storage::bfp16 ? size_t(bfp16::field_bytes(g))
      : row.kernel_model != model_storage() ? size_t(g.size) * kernel_model_bytes()
                                            : 0;
  const size_t needed = 2 * field_bytes + model_bytes + model_copy_bytes + staging_bytes +
                        DeviceCpml::bytes(setup.cpml, g);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw std::runtime_error("cuda/" + row.info.name + ": a " + std::to_string(g.nx) + "x" +
                             std::to_string(g.ny) + "x" + std::to_string(g.nz) + " grid needs " +
                             mib(needed) + " of device memory, only " + mib(free_bytes) +
                             " of " + mib(total_bytes) + " are free");

  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&beside_, cudaStreamNonBlocking, greatest));
    CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  try {
    field_a_ = allocate_wavefield(field_bytes, device_, memory_, memory_note_);
    field_b_ = allocate_wavefield(field_bytes, device_, memory_, memory_note_);
    v2dt2_ = DeviceBuffer(model_bytes, AllocationKind::plain, device_);
    cur_ = field_a_.data();
    prev_ = field_b_.data();
    CUDA_CHECK(cudaMemsetAsync(field_a_.data(), 0, field_bytes, stream_));
    CUDA_CHECK(cudaMemsetAsync(field_b_.data(), 0, field_bytes, stream_));
    CUDA_CHECK(cudaMemsetAsync(v2dt2_.data(), 0, model_bytes, stream_));
    if (same_model) {
      if (same_model->row_ != row_ || same_model->device_ != device_ ||
          same_model->v2dt2_.bytes() != model_bytes ||
          same_model->kernel_v2dt2_.bytes() != model_copy_bytes)
        throw std::logic_error("cuda/" + row.info.name + ": the field to copy the model term from "
                               "has another kernel, device or grid");
      // Its model term is complete: its constructor waited for its stream.
      CUDA_CHECK(cudaMemcpyAsync(v2dt2_.data(), same_model->v2dt2_.data(), model_bytes,
                                 cudaMemcpyDeviceToDevice, stream_));
      if (model_copy_bytes) {
        kernel_v2dt2_ = DeviceBuffer(model_copy_bytes, AllocationKind::plain, device_);
        CUDA_CHECK(cudaMemcpyAsync(kernel_v2dt2_.data(), same_model->kernel_v2dt2_.data(),
                                   model_copy_bytes, cudaMemcpyDeviceToDevice, stream_));
      }
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    } else {
      DeviceBuffer dense(size_t(g.interior_cells()) * sizeof(float), AllocationKind::plain, device_);
      CUDA_CHECK(cudaMemcpyAsync(dense.data(), setup.v2dt2.data(), dense.bytes(),
                                 cudaMemcpyHostToDevice, stream_));
      scatter_interior(g, dense.as<float>(), v2dt2_.data(), model_storage(), stream_);
      if (model_copy_bytes) {
        kernel_v2dt2_ = DeviceBuffer(model_copy_bytes, AllocationKind::plain, device_);
        CUDA_CHECK(cudaMemsetAsync(kernel_v2dt2_.data(), 0, model_copy_bytes, stream_));
        if (row_->kernel_model == Storage::bfp16) {
          // bfp16_model16: through a zeroed padded float copy, encoded block by block.
          DeviceBuffer padded(size_t(g.size) * sizeof(float), AllocationKind::plain, device_);
          CUDA_CHECK(cudaMemsetAsync(padded.data(), 0, padded.bytes(), stream_));
          scatter_interior(g, dense.as<float>(), padded.data(), Storage::fp32, stream_);
          bfp16_encode_model(g, padded.as<float>(), kernel_v2dt2_.data(), stream_);
          CUDA_CHECK(cudaStreamSynchronize(stream_)); // before `padded` goes
        } else {
          scatter_interior(g, dense.as<float>(), kernel_v2dt2_.data(), row_->kernel_model, stream_);
        }
      }
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
    l2_window_.apply(stream_, kernel_v2dt2(), device_, memory_, memory_note_);
  } catch (...) {
    l2_window_.clear();
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
    cudaStreamDestroy(beside_);
    cudaStreamDestroy(stream_);
    throw;
  }
  if (!memory_note_.empty()) std::cerr << "rtm: " << name() << ": " << memory_note_ << "\n";
}

CudaWavefield::~CudaWavefield() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(beside_);
  cudaStreamSynchronize(stream_);
  l2_window_.clear();
  cudaEventDestroy(fork_);
  cudaEventDestroy(join_);
  cudaStreamDestroy(beside_);
  cudaStreamDestroy(stream_);
}

size_t CudaWavefield::element_bytes() const {
  return row_->storage == Storage::fp32 ? sizeof(float) : sizeof(__half); // bfp16: its mantissas
}

size_t CudaWavefield::field_bytes() const {
  if (row_->storage == Storage::bfp16) return size_t(bfp16::field_bytes(layout()));
  return size_t(layout().size) * element_bytes();
}

void CudaWavefield::refuse_for_bfp16(const std::string& what) const {
  throw InputError("--variant " + row_->info.name + " (block floating point wavefields) does not " +
                   "support " + what + "; it supports " + kBfp16Supports +
                   ". Choose a float32 variant (tma_ring, auto) for this run");
}

size_t CudaWavefield::kernel_model_bytes() const {
  // bfp16_model16: its 16-bit mantissas (the exponents follow them in the same buffer).
  return row_->kernel_model == Storage::fp32 ? sizeof(float) : sizeof(__half);
}

std::string CudaWavefield::name() const {
  // "cuda/<kernel>[+<memory options>]": a variant name find_variant() reads back.
  const std::string options = memory_options_name(memory_);
  return "cuda/" + row_->info.name + (options.empty() ? "" : "+" + options);
}

void CudaWavefield::do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
  const auto n = size_t(layout().size);
  CUDA_CHECK(cudaSetDevice(device_));
  if (row_->storage == Storage::fp32) {
    CUDA_CHECK(cudaMemcpyAsync(prev_, p_prev.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(cur_, p_cur.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    cpml_.zero(stream_); // as the CPU reference: memory variables restart from zero
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  if (row_->storage == Storage::bfp16) {
    // bfp16 keeps no halo values (its halo is the rigid zero of a run): refuse a state that has
    // any rather than drop them. The free surface's top halo is the exception: it is derived (the
    // image, written again before the next step), so a state downloaded from such a run goes back.
    const GridLayout& g = layout();
    for (const std::vector<float>* host : {&p_prev, &p_cur})
      for (int64_t e = 0; e < g.size; ++e) {
        if ((*host)[size_t(e)] == 0.0f) continue;
        const int64_t rel = e - g.offset;
        const int64_t k = rel < 0 ? -1 : rel / g.plane - kHalo;
        const int64_t j = rel < 0 ? -1 : (rel % g.plane) / g.pitch - kHalo;
        const int64_t i = rel < 0 ? -1 : rel % g.pitch - kHalo;
        const bool surface_image = free_surface_ && k >= -kHalo && k < 0;
        if (!(i >= 0 && i < g.nx && j >= 0 && j < g.ny && k >= 0 && k < g.nz) && !surface_image)
          throw std::invalid_argument(name() + ": set_state with a non-zero halo or padding element (" +
                                      std::to_string(e) + "); bfp16 stores the interior only");
      }
  }
  DeviceBuffer staging(n * sizeof(float), AllocationKind::plain, device_);
  for (auto [host, device] : {std::pair{&p_prev, prev_}, std::pair{&p_cur, cur_}}) {
    CUDA_CHECK(cudaMemcpyAsync(staging.data(), host->data(), n * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
    if (row_->storage == Storage::bfp16)
      bfp16_encode_field(layout(), staging.as<float>(), device, stream_);
    else
      convert_float_to_half(staging.as<float>(), device, int64_t(n), stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the staging buffer is reused next
  }
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaWavefield::do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  const auto n = size_t(layout().size);
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
    if (row_->storage == Storage::bfp16)
      bfp16_decode_field(layout(), device, staging.as<float>(), stream_, free_surface_);
    else
      convert_half_to_float(device, staging.as<float>(), int64_t(n), stream_);
    CUDA_CHECK(cudaMemcpyAsync(host->data(), staging.data(), n * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the staging buffer is reused next
  }
}

void CudaWavefield::zero_state() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaMemsetAsync(cur_, 0, field_a_.bytes(), stream_));
  CUDA_CHECK(cudaMemsetAsync(prev_, 0, field_b_.bytes(), stream_));
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaWavefield::fill_random_state(uint64_t seed) {
  CUDA_CHECK(cudaSetDevice(device_));
  if (row_->storage == Storage::bfp16) {
    // The same interior values as float32's fill, encoded (bfp16 keeps no halo values).
    DeviceBuffer staging(size_t(layout().size) * sizeof(float), AllocationKind::plain, device_);
    for (auto [field, s] : {std::pair{prev_, seed}, std::pair{cur_, seed + 1}}) {
      fill_random(staging.data(), Storage::fp32, layout().size, s, stream_);
      bfp16_encode_field(layout(), staging.as<float>(), field, stream_);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  fill_random(prev_, row_->storage, layout().size, seed, stream_);
  fill_random(cur_, row_->storage, layout().size, seed + 1, stream_);
  cpml_.zero(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaWavefield::use_kernel(const VariantRow& row) {
  if (row.storage != row_->storage)
    throw std::invalid_argument(name() + ": cannot switch to " + row.info.name +
                                ", which stores its fields in another precision");
  if (row.kernel_model != row_->kernel_model)
    throw std::invalid_argument(name() + ": cannot switch to " + row.info.name +
                                ", which reads v2dt2 in another precision");
  row_ = &row;
}

void CudaWavefield::step_planes_on(int k_begin, int k_end, cudaStream_t stream) {
  if (k_begin == k_end) return;
  CUDA_CHECK(cudaSetDevice(device_));
  // The kernels step a whole grid. Planes [k_begin, k_end) are one too: the same layout with
  // nz = k_end - k_begin and every array shifted by k_begin planes, so that its plane 0 is plane
  // k_begin and its z halo is the real neighbouring planes. No kernel needs to know.
  const size_t shift_bytes = size_t(k_begin) * size_t(layout().plane) * element_bytes();
  // bfp16's exponents: one byte per 16 elements (a plane is a multiple of 32 elements).
  const size_t shift_blocks = size_t(k_begin) * size_t(layout().plane) / bfp16::kBlock;
  auto shifted = [shift_bytes](void* p) { return static_cast<char*>(p) + shift_bytes; };
  WaveStepArgs args;
  args.layout = layout();
  args.layout.nz = k_end - k_begin;
  args.layout.size = layout().size - int64_t(k_begin) * layout().plane;
  args.weights = weights_;
  args.p_cur = shifted(cur_);
  args.p_prev_next = shifted(prev_);
  // The kernel's v2dt2 may be narrower than the fields (half_v2dt2): shifted by its own width.
  args.v2dt2 = static_cast<const char*>(kernel_v2dt2().data()) +
               size_t(k_begin) * size_t(layout().plane) * kernel_model_bytes();
  if (damp_x_.data()) {
    args.damp_x = damp_x_.as<float>();
    args.damp_y = damp_y_.as<float>();
    args.damp_z = damp_z_.as<float>() + k_begin;
  }
  if (row_->storage == Storage::bfp16) {
    args.p_cur_exponents = bfp16_exponents(static_cast<const void*>(cur_), layout()) + shift_blocks;
    args.p_prev_next_exponents = bfp16_exponents(prev_, layout()) + shift_blocks;
  }
  if (row_->kernel_model == Storage::bfp16)
    args.v2dt2_exponents = bfp16_exponents(kernel_v2dt2().data(), layout()) + shift_blocks;
  args.sm_count = sm_count_;
  if (stream == stream_) begin_timed();
  // Every kernel reads the z halo from memory (a sub-range's "halo" is its real neighbouring
  // planes), so the surface's image written there before a step of planes 0 .. kHalo-1 is what
  // each variant sees; p[n]'s interior planes, which it reads, no part of this step writes.
  if (free_surface_ && k_begin < kHalo) mirror_free_surface(layout(), cur_, row_->storage, stream);
  row_->launch(args, stream);
  // The C-PML's correction on the layer cells of these planes, after the undamped step (whole-grid
  // plane numbers: it takes the unshifted fields).
  cpml_.apply(row_->storage, cur_, v2dt2_.data(), prev_, k_begin, k_end, stream);
  if (stream == stream_) end_timed(TimedOp::step);
}

// Timed, the beside work runs on the field's stream (the timer's events order every timed
// operation on the device one after the other anyway, kernels/cuda/fields/cuda_timing.cuh), and
// the beside stream, which the halo exchange sends from, waits for it.
void CudaWavefield::do_step_planes_beside(int k_begin, int k_end) {
  if (!timer_.on()) return step_planes_on(k_begin, k_end, beside_);
  step_planes_on(k_begin, k_end, stream_);
  fork_beside();
}

void CudaWavefield::fork_beside() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaEventRecord(fork_, stream_));
  CUDA_CHECK(cudaStreamWaitEvent(beside_, fork_, 0));
}

void CudaWavefield::join_beside() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaEventRecord(join_, beside_));
  CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
}

void CudaWavefield::finish_step() {
  timer_.count_step();
  std::swap(cur_, prev_);
  cpml_.swap();
}

PlaneSpan CudaWavefield::do_next_field_planes(int k_begin, int k_end) {
  if (row_->storage == Storage::bfp16) refuse_for_bfp16("z-slab halo exchange (--ranks-per-shot > 1)");
  PlaneSpan span;
  span.data = static_cast<char*>(prev_) +
              size_t(layout().index(-kHalo, -kHalo, k_begin)) * element_bytes();
  span.bytes = size_t(k_end - k_begin) * size_t(layout().plane) * element_bytes();
  span.device = device_;
  return span;
}

void CudaWavefield::synchronize() {
  CUDA_CHECK(cudaSetDevice(device_));
  CUDA_CHECK(cudaStreamSynchronize(beside_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}


// ---- running backwards, boxes ------------------------------------------------------------------

void CudaWavefield::reverse_time() {
  std::swap(cur_, prev_);
  CUDA_CHECK(cudaSetDevice(device_));
  cpml_.zero(stream_); // as the CPU reference: the layers restart empty
}

void CudaWavefield::require_free_memory(size_t bytes, const std::string& what,
                                         const std::string& hint) const {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw std::runtime_error(name() + ": " + what + " needs " + mib(bytes) +
                             " of device memory, only " + mib(free_bytes) + " of " +
                             mib(total_bytes) + " are free" + (hint.empty() ? "" : "; " + hint));
}


float* CudaWavefield::box_staging(const Box& box) const {
  const size_t bytes = size_t(box.cells()) * sizeof(float);
  if (box_staging_.bytes() < bytes) {
    CUDA_CHECK(cudaStreamSynchronize(stream_)); // the old buffer may still be in use
    box_staging_ = DeviceBuffer();
    box_staging_ = DeviceBuffer(bytes, AllocationKind::plain, device_);
  }
  return box_staging_.as<float>();
}

void CudaWavefield::do_copy_current(const Box& box, std::vector<float>& dense) const {
  if (row_->storage == Storage::bfp16) refuse_for_bfp16("box copies (snapshots, migration)");
  CUDA_CHECK(cudaSetDevice(device_));
  dense.resize(size_t(box.cells()));
  float* staging = box_staging(box);
  begin_timed();
  pack_box(layout(), box, cur_, row_->storage, staging, stream_);
  CUDA_CHECK(cudaMemcpyAsync(dense.data(), staging, dense.size() * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  end_timed(TimedOp::box_copy);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaWavefield::do_set_current(const Box& box, const std::vector<float>& dense) {
  if (row_->storage == Storage::bfp16) refuse_for_bfp16("box copies (snapshots, migration)");
  CUDA_CHECK(cudaSetDevice(device_));
  float* staging = box_staging(box);
  begin_timed();
  // From pageable memory the runtime stages `dense` before the call returns, so the caller may
  // reuse or free it at once; the unpack kernel follows the copy in stream order.
  CUDA_CHECK(cudaMemcpyAsync(staging, dense.data(), dense.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream_));
  unpack_box(layout(), box, staging, cur_, row_->storage, stream_);
  end_timed(TimedOp::box_copy);
}


size_t live_device_buffer_bytes() { return DeviceBuffer::live_bytes(); }

// ---- the factories ---------------------------------------------------------------------------

std::unique_ptr<CudaWavefield> make_cuda_wavefield(const PropagatorSetup& setup,
                                                   const std::string& variant,
                                                   const MemoryOptions& options, int device,
                                                   std::ostream* log) {
  if (variant == "auto") return make_fastest(setup, options, device, log);
  const VariantSelection chosen = find_variant(variant);
  check_runs_on(*chosen.kernel, query_device(device), variant);
  return std::make_unique<CudaWavefield>(setup, row_of(*chosen.kernel),
                                         combined(chosen.memory, options), device);
}

std::unique_ptr<Wavefield> make_wavefield(const PropagatorSetup& setup, const std::string& variant,
                                          const MemoryOptions& options, int device,
                                          std::ostream* log) {
  return make_cuda_wavefield(setup, variant, options, device, log);
}

std::unique_ptr<ShotFields> make_shot_fields(const PropagatorSetup& setup, const std::string& variant,
                                             const MemoryOptions& options, int device,
                                             std::ostream* log) {
  return make_cuda_shot_fields(setup, variant, options, device, log);
}

} // namespace rtm::cuda
