// The TTI step on the GPU (solvers/contracts/tti.h; docs/physics.md, TTI): two kernels per step,
// pass 1 (u = n . D f and w_a = n_a^2 R_a f of both fields, one thread per cell, tti_naive.cu) and
// pass 2 (the update),
// in two variants: "tti-naive" (one thread per cell, every load from global memory) and
// "tti-pipelined" (tti_pipelined.cu: an x-y tile walks z, the next plane's tiles arriving by
// cp.async while the current one computes). Both call the per-cell functions of tti.h in the CPU
// reference's order (kernels/cpu/tti_propagator.cpp).
#pragma once

#include <cuda_runtime.h>

#include "solvers/contracts/tti.h"

namespace rtm::cuda {

struct TtiStepArgs {
  GridLayout g;   // scalar layout: coefficients and damping
  GridLayout t;   // tti_layout(g): the fields and u
  TtiWeights w;
  const float* cur = nullptr;  // (p[n], q[n])
  float* prev_next = nullptr;  // (p[n-1], q[n-1]) in, (p[n+1], q[n+1]) out
  float* scratch = nullptr;    // pass 1's output (TtiScratch: u, w_x, w_y, w_z), zero on halo cells
  const float *v2dt2 = nullptr, *e = nullptr, *s = nullptr, *nx = nullptr, *ny = nullptr, *nz = nullptr;
  const float *damp_x = nullptr, *damp_y = nullptr, *damp_z = nullptr; // null: undamped
  int k_begin = 0, k_end = 0;
  // The free surface (solvers/contracts/tti_free_surface.h): cur's top halo already the image of
  // p and q, the axis mirrored into the coefficients' top halo; the step writes pass 1's arrays
  // into the scratch's top halo before pass 2 reads them.
  bool free_surface = false;
};

// Pass 1 on planes max(0, k_begin - kHalo) .. min(nz, k_end + kHalo).
void launch_tti_axis_derivative(const TtiStepArgs& a, cudaStream_t stream);
// The scratch's top halo for the free surface (kernels/cuda/tti/tti_free_surface.cu), after pass 1.
void launch_tti_surface_scratch(const TtiStepArgs& a, cudaStream_t stream);
// Pass 2, one thread per cell.
void launch_tti_update_naive(const TtiStepArgs& a, cudaStream_t stream);
// Pass 2, shared-memory tiles walking z with a single-stage cp.async prefetch.
void launch_tti_update_pipelined(const TtiStepArgs& a, cudaStream_t stream);

// The variants' names, in bench order (the first is the reference).
constexpr const char* kTtiVariants[2] = {"tti-naive", "tti-pipelined"};

// A whole step: pass 1, the scratch's surface image where pass 2 reads it (free_surface and
// k_begin < kHalo), then `variant`'s pass 2 (std::invalid_argument for an unknown name).
void launch_tti_step(const TtiStepArgs& a, const char* variant, cudaStream_t stream);

} // namespace rtm::cuda
