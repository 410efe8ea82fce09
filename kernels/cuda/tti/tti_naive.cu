// The straightforward TTI kernels: pass 1 (u = n . D f, w_a = n_a^2 R_a f) and the naive pass 2, one thread per cell,
// every neighbour read from global memory (through L1/L2). tti_step.cuh says what each pass does.
#include <stdexcept>
#include <string>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/tti/tti_step.cuh"

namespace rtm::cuda {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void __launch_bounds__(kBlockX* kBlockY)
    tti_axis_derivative_kernel(const TtiStepArgs a, int k0) {
  const int i = blockIdx.x * kBlockX + threadIdx.x, j = blockIdx.y * kBlockY + threadIdx.y;
  const int k = k0 + blockIdx.z;
  if (i >= a.g.nx || j >= a.g.ny) return;
  const int64_t f = a.t.index(i, j, k), c = a.g.index(i, j, k), qo = tti_q_offset(a.t);
  const float nx = a.nx[c], ny = a.ny[c], nz = a.nz[c];
  const GridLayout& t = a.t;
#pragma unroll
  for (int field = 0; field < 2; ++field) {
    const int64_t at = f + field * qo;
    const float* in = a.cur + at;
    a.scratch[tti_scratch_offset(t, TtiScratch::u) + at] = tti_axis_derivative(in, t.pitch, t.plane, a.w, nx, ny, nz);
    a.scratch[tti_scratch_offset(t, TtiScratch::wx) + at] = tti_pure_axis(in, 1, a.w.rx, nx);
    a.scratch[tti_scratch_offset(t, TtiScratch::wy) + at] = tti_pure_axis(in, t.pitch, a.w.ry, ny);
    a.scratch[tti_scratch_offset(t, TtiScratch::wz) + at] = tti_pure_axis(in, t.plane, a.w.rz, nz);
  }
}

__global__ void __launch_bounds__(kBlockX* kBlockY) tti_update_naive_kernel(const TtiStepArgs a) {
  const int i = blockIdx.x * kBlockX + threadIdx.x, j = blockIdx.y * kBlockY + threadIdx.y;
  const int k = a.k_begin + blockIdx.z;
  if (i >= a.g.nx || j >= a.g.ny) return;
  const GridLayout& g = a.g;
  const GridLayout& t = a.t;
  const TtiWeights& w = a.w;
  const int64_t f = t.index(i, j, k), c = g.index(i, j, k), qo = tti_q_offset(t);
  const float* p = a.cur + f;
  const float lap = (tti_second(p, 1, w.c0x, w.wx) + tti_second(p, t.pitch, w.c0y, w.wy)) +
                    tti_second(p, t.plane, w.c0z, w.wz);
  float h1[2];
#pragma unroll
  for (int field = 0; field < 2; ++field) {
    const int64_t at = f + field * qo;
    const float* u = a.scratch + tti_scratch_offset(t, TtiScratch::u) + at;
    float h = tti_first_of_product(a.nx + c, u, 1, 1, w.gx);
    h += tti_first_of_product(a.ny + c, u, g.pitch, t.pitch, w.gy);
    h += tti_first_of_product(a.nz + c, u, g.plane, t.plane, w.gz);
    h1[field] = tti_h1(h, tti_axis_factor_transpose(a.scratch + tti_scratch_offset(t, TtiScratch::wx) + at, 1, w.rx),
                       tti_axis_factor_transpose(a.scratch + tti_scratch_offset(t, TtiScratch::wy) + at, t.pitch, w.ry),
                       tti_axis_factor_transpose(a.scratch + tti_scratch_offset(t, TtiScratch::wz) + at, t.plane, w.rz));
  }
  const float damp = a.damp_x ? a.damp_x[i] + (a.damp_y[j] + a.damp_z[k]) : 0.0f;
  const TtiCellUpdate r = tti_update(lap, h1[0], h1[1], p[0], p[qo], a.prev_next[f], a.prev_next[f + qo],
                                     a.v2dt2[c], a.e[c], a.s[c], damp);
  a.prev_next[f] = r.p;
  a.prev_next[f + qo] = r.q;
}

dim3 plane_grid(const GridLayout& g, int planes) {
  return dim3((g.nx + kBlockX - 1) / kBlockX, (g.ny + kBlockY - 1) / kBlockY, planes);
}

} // namespace

void launch_tti_axis_derivative(const TtiStepArgs& a, cudaStream_t stream) {
  const int k0 = a.k_begin - kHalo > 0 ? a.k_begin - kHalo : 0;
  const int k1 = a.k_end + kHalo < a.g.nz ? a.k_end + kHalo : a.g.nz;
  if (k1 <= k0) return;
  tti_axis_derivative_kernel<<<plane_grid(a.g, k1 - k0), dim3(kBlockX, kBlockY), 0, stream>>>(a, k0);
  CUDA_CHECK_LAUNCH("tti_axis_derivative_kernel");
}

void launch_tti_update_naive(const TtiStepArgs& a, cudaStream_t stream) {
  if (a.k_end <= a.k_begin) return;
  tti_update_naive_kernel<<<plane_grid(a.g, a.k_end - a.k_begin), dim3(kBlockX, kBlockY), 0, stream>>>(a);
  CUDA_CHECK_LAUNCH("tti_update_naive_kernel");
}

void launch_tti_step(const TtiStepArgs& a, const char* variant, cudaStream_t stream) {
  const std::string name = variant;
  if (name != kTtiVariants[0] && name != kTtiVariants[1])
    throw std::invalid_argument("TTI variant '" + name + "': expected tti-naive or tti-pipelined");
  launch_tti_axis_derivative(a, stream);
  if (a.free_surface && a.k_begin < kHalo) launch_tti_surface_scratch(a, stream);
  if (name == kTtiVariants[0])
    launch_tti_update_naive(a, stream);
  else
    launch_tti_update_pipelined(a, stream);
}

} // namespace rtm::cuda
