// The TTI step's free surface on the GPU (solvers/contracts/tti_free_surface.h): pass 1's arrays in
// the top halo, between pass 1 and pass 2, one thread per halo cell and field. The fields' own
// image (kernels/cuda/fields/field_ops.cuh mirror_free_surface) is written before pass 1 by DeviceTti.
#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/tti_step.cuh"
#include "solvers/contracts/tti_free_surface.h"

namespace rtm::cuda {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

// blockIdx.z: halo plane (kFreeSurfacePlane - z / 2) and field (z % 2).
__global__ void __launch_bounds__(kBlockX* kBlockY) tti_surface_scratch_kernel(const TtiStepArgs a) {
  const int i = blockIdx.x * kBlockX + threadIdx.x, j = blockIdx.y * kBlockY + threadIdx.y;
  if (i >= a.g.nx || j >= a.g.ny) return;
  const int k = kFreeSurfacePlane - int(blockIdx.z / 2);
  const GridLayout& t = a.t;
  const int64_t field = int64_t(blockIdx.z % 2) * tti_q_offset(t);
  tti_surface_scratch_cell(a.g, t, a.w, a.nz, a.cur + field,
                           a.scratch + tti_scratch_offset(t, TtiScratch::u) + field,
                           a.scratch + tti_scratch_offset(t, TtiScratch::wx) + field,
                           a.scratch + tti_scratch_offset(t, TtiScratch::wy) + field,
                           a.scratch + tti_scratch_offset(t, TtiScratch::wz) + field, i, j, k);
}

} // namespace

void launch_tti_surface_scratch(const TtiStepArgs& a, cudaStream_t stream) {
  const dim3 grid((a.g.nx + kBlockX - 1) / kBlockX, (a.g.ny + kBlockY - 1) / kBlockY, 2 * kHalo);
  tti_surface_scratch_kernel<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(a);
  CUDA_CHECK_LAUNCH("tti_surface_scratch_kernel");
}

} // namespace rtm::cuda
