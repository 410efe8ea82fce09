// The C-PML's two passes on a GPU (kernels/cuda/cpml.cuh). The layer cells of a plane range are covered
// once each by three regions: the x layers (every j), the y layers less the x layers, and the z
// layers less both; one thread per cell runs the shared per-cell arithmetic of solvers/contracts/cpml.h,
// so a cell's bits do not depend on which region or pass order reached it.
#include "kernels/cuda/cpml.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.cuh"

namespace rtm::cuda {
namespace {

enum class Region { x, y, z };

constexpr int kBlockX = 32, kBlockY = 8;

// Thread (fast, mid, blockIdx.z) -> cell (i, j, k) of `region`; false when the cell belongs to
// another region or lies outside.
template <Region kRegion>
__device__ __forceinline__ bool region_cell(const CpmlView& v, const GridLayout& g, int k_first,
                                            int& i, int& j, int& k) {
  const int fast = blockIdx.x * blockDim.x + threadIdx.x;
  const int mid = blockIdx.y * blockDim.y + threadIdx.y;
  k = k_first + int(blockIdx.z);
  if constexpr (kRegion == Region::x) {
    // One-dimensional blocks over (layer cell, row) pairs of the plane: the two x layers are
    // narrow (2 x 20 cells), and rows of them in 32-wide blocks left a third of the lanes idle.
    const int lx = v.x.lo + v.x.hi;
    if (fast >= lx * g.ny) return false;
    const int along = fast % lx;
    i = along < v.x.lo ? along : g.nx - v.x.hi + (along - v.x.lo);
    j = fast / lx;
    return true;
  } else if constexpr (kRegion == Region::y) {
    if (fast >= g.nx || mid >= v.y.lo + v.y.hi) return false;
    i = fast;
    j = mid < v.y.lo ? mid : g.ny - v.y.hi + (mid - v.y.lo);
    return !v.x.in_layer(i);
  } else {
    if (fast >= g.nx || mid >= g.ny) return false;
    i = fast;
    j = mid;
    return !v.x.in_layer(i) && !v.y.in_layer(j);
  }
}

template <Region kRegion, bool kPsiPass, class T>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    cpml_kernel(const CpmlView v, const GridLayout g, const T* __restrict__ p_cur,
                const T* __restrict__ v2dt2, T* __restrict__ p_next, int k_first) {
  int i = 0, j = 0, k = 0;
  if (!region_cell<kRegion>(v, g, k_first, i, j, k)) return;
  if constexpr (kPsiPass)
    cpml_cell_psi(v, g, p_cur, i, j, k);
  else
    cpml_cell(v, g, p_cur, v2dt2, p_next, i, j, k);
}

template <bool kPsiPass, class T>
void launch_regions(const CpmlView& v, const GridLayout& g, const T* p_cur, const T* v2dt2,
                    T* p_next, int k_begin, int k_end, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  auto blocks = [](int n, int b) { return unsigned((n + b - 1) / b); };
  const int lx = v.x.lo + v.x.hi, ly = v.y.lo + v.y.hi;
  if (lx > 0) {
    cpml_kernel<Region::x, kPsiPass, T><<<dim3(blocks(lx * g.ny, kBlockX * kBlockY), 1,
                                           unsigned(k_end - k_begin)), kBlockX * kBlockY, 0, stream>>>(
        v, g, p_cur, v2dt2, p_next, k_begin);
    CUDA_CHECK_LAUNCH("cpml_kernel (x layers)");
  }
  if (ly > 0) {
    cpml_kernel<Region::y, kPsiPass, T><<<dim3(blocks(g.nx, kBlockX), blocks(ly, kBlockY),
                                           unsigned(k_end - k_begin)), block, 0, stream>>>(
        v, g, p_cur, v2dt2, p_next, k_begin);
    CUDA_CHECK_LAUNCH("cpml_kernel (y layers)");
  }
  // The z layers' planes inside the range: [0, lo) and [nz - hi, nz).
  const int ranges[2][2] = {{std::max(k_begin, 0), std::min(k_end, v.z.lo)},
                            {std::max(k_begin, g.nz - v.z.hi), std::min(k_end, g.nz)}};
  for (const auto& r : ranges)
    if (r[1] > r[0]) {
      cpml_kernel<Region::z, kPsiPass, T><<<dim3(blocks(g.nx, kBlockX), blocks(g.ny, kBlockY),
                                             unsigned(r[1] - r[0])), block, 0, stream>>>(
          v, g, p_cur, v2dt2, p_next, r[0]);
      CUDA_CHECK_LAUNCH("cpml_kernel (z layers)");
    }
}

int64_t axis_cells(const CpmlProfiles& c, const GridLayout& g, int axis) {
  return axis == 0 ? cpml_cells_x(c, g) : axis == 1 ? cpml_cells_y(c, g) : cpml_cells_z(c, g);
}

} // namespace

size_t DeviceCpml::bytes(const CpmlProfiles& c, const GridLayout& g) {
  if (c.empty()) return 0;
  return size_t(cpml_memory_floats(c, g) + 2 * (int64_t(g.nx) + g.ny + g.nz)) * sizeof(float);
}

DeviceCpml::DeviceCpml(const CpmlProfiles& c, const GridLayout& g, int device, cudaStream_t stream)
    : layout_(g), host_(c) {
  if (c.empty()) return;
  const CpmlAxis* axes[3] = {&c.x, &c.y, &c.z};
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int d = 0; d < 3; ++d) {
    if (axes[d]->n != n[d] || (axes[d]->layer_cells() > 0 && (int(axes[d]->a.size()) != n[d] ||
                                                              int(axes[d]->b.size()) != n[d])))
      throw std::invalid_argument("C-PML profiles must be for an nx x ny x nz grid");
    if (axes[d]->layer_cells() > 0) {
      for (auto [dst, src] : {std::pair{&a_[d], &axes[d]->a}, std::pair{&b_[d], &axes[d]->b}}) {
        *dst = DeviceBuffer(src->size() * sizeof(float), AllocationKind::plain, device);
        CUDA_CHECK(cudaMemcpyAsync(dst->data(), src->data(), dst->bytes(), cudaMemcpyHostToDevice, stream));
      }
    }
    const size_t bytes = size_t(axis_cells(c, g, d)) * sizeof(float);
    if (bytes == 0) continue;
    psi_[0][d] = DeviceBuffer(bytes, AllocationKind::plain, device);
    psi_[1][d] = DeviceBuffer(bytes, AllocationKind::plain, device);
    zeta_[d] = DeviceBuffer(bytes, AllocationKind::plain, device);
  }
  active_ = true;
  zero(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream)); // the host profiles' uploads are done
}

void DeviceCpml::zero(cudaStream_t stream) {
  for (int d = 0; d < 3; ++d)
    for (DeviceBuffer* buffer : {&psi_[0][d], &psi_[1][d], &zeta_[d]})
      if (buffer->bytes() > 0) CUDA_CHECK(cudaMemsetAsync(buffer->data(), 0, buffer->bytes(), stream));
}

void DeviceCpml::apply(Storage storage, const void* p_cur, const void* v2dt2, void* p_next,
                       int k_begin, int k_end, cudaStream_t stream) {
  if (!active_ || k_begin >= k_end) return;
  const GridLayout& g = layout_;
  CpmlView v;
  v.x = make_cpml_axis_view(host_.x, 1, 1);
  v.y = make_cpml_axis_view(host_.y, g.pitch, g.nx);
  v.z = make_cpml_axis_view(host_.z, g.plane, int64_t(g.nx) * g.ny);
  CpmlAxisView* axes[3] = {&v.x, &v.y, &v.z};
  for (int d = 0; d < 3; ++d) {
    axes[d]->a = a_[d].as<float>();
    axes[d]->b = b_[d].as<float>();
    axes[d]->psi_old = psi_[old_][d].as<float>();
    axes[d]->psi_new = psi_[1 - old_][d].as<float>();
    axes[d]->zeta = zeta_[d].as<float>();
  }
  // As cpu_cpml_correction: psi[n] of x and y is stored on whole planes, of z on this range.
  v.x.fresh_lo = v.y.fresh_lo = 0;
  v.x.fresh_hi = g.nx;
  v.y.fresh_hi = g.ny;
  v.z.fresh_lo = k_begin;
  v.z.fresh_hi = k_end;
  if (storage == Storage::fp32) {
    const auto* cur = static_cast<const float*>(p_cur);
    const auto* vv = static_cast<const float*>(v2dt2);
    auto* next = static_cast<float*>(p_next);
    launch_regions<true>(v, g, cur, vv, next, k_begin, k_end, stream);
    launch_regions<false>(v, g, cur, vv, next, k_begin, k_end, stream);
  } else {
    const auto* cur = static_cast<const __half*>(p_cur);
    const auto* vv = static_cast<const __half*>(v2dt2);
    auto* next = static_cast<__half*>(p_next);
    launch_regions<true>(v, g, cur, vv, next, k_begin, k_end, stream);
    launch_regions<false>(v, g, cur, vv, next, k_begin, k_end, stream);
  }
}

} // namespace rtm::cuda
