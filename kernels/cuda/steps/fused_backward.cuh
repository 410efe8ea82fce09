// One step of the backward sweep of reverse time migration for both fields of a shot in one
// kernel (docs/rtm.md, section 5): the reconstructed source field S and the receiver field R step
// together, reading the model term (v2dt2) and the damping profiles once, and, where the step is
// an imaging step, the imaging condition of S[n] R[n+1] is applied in the same pass from the
// centre values the step already holds (in registers, or in its shared ring). The separate path
// (two steps of the variant, then accumulate_image_box) stays: the CPU reference and the check.
//
// Two variants have one (float32 storage): regqueue_vec4 (fused_backward.cu) and tma_ring
// (fused_backward_tma.cu). The arithmetic of each cell is that variant's step term for term
// (plane_laplacian and advance_cell, plane_stencil.cuh and wave_step.cuh), and the imaging's is
// accumulate_image_box's (rtm_ops.cu), so on float32 the fused step gives the separate path's
// values.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/steps/variant_table.cuh"
#include "kernels/cuda/steps/wave_step.cuh"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

struct FusedBackwardArgs {
  // The fields' step kernel (their VariantRow::launch): launch_fused_backward runs its fused
  // counterpart.
  StepLauncher variant_step = nullptr;
  // The source field's step (layout, weights, v2dt2, damping, sm_count are the receiver's too).
  WaveStepArgs source;
  const void* receiver_cur = nullptr;  // R[n+1]
  void* receiver_prev_next = nullptr;  // R[n+2] on entry, R[n] on return
  // Imaging over `box` (interior cells, dense [z][y][x] arrays) with `weight`; image null: none.
  Box box;
  float weight = 0;
  float* image = nullptr;
  float* illumination = nullptr;
};

// Whether `row`'s kernel has a fused backward step (regqueue_vec4, tma_ring: float32 storage).
bool has_fused_backward(const VariantRow& row);
// Enqueues the fused step of args.variant_step's kernel on `stream` (whole grid; both fields on
// one device, same layout); std::logic_error where that kernel has none.
void launch_fused_backward(const FusedBackwardArgs& args, cudaStream_t stream);

} // namespace rtm::cuda
