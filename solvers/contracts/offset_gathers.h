// Subsurface-offset gathers of `rtm migrate --offset-lags` (docs/rtm.md, section 5d): the
// cross-correlation imaging condition with the source and receiver fields shifted apart by a
// horizontal lag h,
//   I(x, z, h) += weight * S(x - h, z) * R(x + h, z),
// at the image points of a coarse horizontal grid (every `stride` cells along x and y of the image
// box, every depth of it), for lags h = -N..N times `lag_step` cells along x, and along y too where
// the box has more than one cell along y. A shifted cell outside the image box contributes 0: the
// reconstructed source field is not the forward one outside the box (solvers/contracts/
// imaging_condition.h says why), so the gathers, like the image, read nothing there.
//
// The layout and the per-value arithmetic live here, so that the CPU reference
// (kernels/cpu/cpu_propagator.cpp) and the CUDA kernel (kernels/cuda/fields/rtm_ops.cu) compute
// the same values, rounded one operation at a time on both.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "solvers/contracts/imaging_condition.h" // mul_rn, add_rn, RTM_HOST_DEVICE
#include "solvers/contracts/propagator.h"

namespace rtm {

struct OffsetGatherSpec {
  int lags = 0;     // N: lags -N..N along each lag axis; 0: no gathers
  int lag_step = 1; // cells between lags
  int stride_x = 1; // cells between gather positions along x and y
  int stride_y = 1;
  bool enabled() const { return lags > 0; }
};

// Where each gather value lives: dense [axis][gy][gx][z][lag], axis 0 the lags along x, axis 1
// (only where the image box has more than one cell along y) those along y; gather (gy, gx) sits at
// cell (x0 + gx * stride_x, y0 + gy * stride_y) of the image box, lag l is
// h = (l - lags) * lag_step cells. Plain values only, so that a kernel takes it by value.
struct OffsetGatherLayout {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0; // the image box (its z1 is z0 + nz)
  int ngx = 0, ngy = 0, nz = 0, nlag = 0, axes = 0;
  int lags = 0, lag_step = 1, stride_x = 1, stride_y = 1;

  RTM_HOST_DEVICE int64_t per_axis() const { return int64_t(ngy) * ngx * nz * nlag; }
  RTM_HOST_DEVICE int64_t values() const { return per_axis() * axes; }
  RTM_HOST_DEVICE int64_t index(int axis, int gy, int gx, int z, int lag) const {
    return (((int64_t(axis) * ngy + gy) * ngx + gx) * nz + z) * nlag + lag;
  }
  int position_x(int gx) const { return x0 + gx * stride_x; } // a cell of the padded grid
  int position_y(int gy) const { return y0 + gy * stride_y; }
  int lag_cells(int lag) const { return (lag - lags) * lag_step; }
  int64_t bytes() const { return values() * int64_t(sizeof(float)); }
};

// The layout of `spec` over `box`. std::invalid_argument, naming what is wrong, for a spec that is
// not enabled, a lag step or stride below 1, or an empty box.
inline OffsetGatherLayout offset_gather_layout(const Box& box, const OffsetGatherSpec& spec) {
  if (!spec.enabled() || spec.lag_step < 1 || spec.stride_x < 1 || spec.stride_y < 1)
    throw std::invalid_argument(
        "offset_gather_layout: expected lags >= 1, a lag step and strides >= 1; got lags " +
        std::to_string(spec.lags) + ", lag step " + std::to_string(spec.lag_step) +
        ", strides " + std::to_string(spec.stride_x) + " and " + std::to_string(spec.stride_y));
  if (box.empty()) throw std::invalid_argument("offset_gather_layout: the image box is empty");
  OffsetGatherLayout l;
  l.x0 = box.x0;
  l.x1 = box.x1;
  l.y0 = box.y0;
  l.y1 = box.y1;
  l.z0 = box.z0;
  l.nz = box.nz();
  l.ngx = (box.nx() + spec.stride_x - 1) / spec.stride_x;
  l.ngy = (box.ny() + spec.stride_y - 1) / spec.stride_y;
  l.nlag = 2 * spec.lags + 1;
  l.axes = box.ny() > 1 ? 2 : 1;
  l.lags = spec.lags;
  l.lag_step = spec.lag_step;
  l.stride_x = spec.stride_x;
  l.stride_y = spec.stride_y;
  return l;
}

// What gather value `e` (0 <= e < values()) gains at one imaging step: weight * S(x - h) * R(x + h)
// with S and R the two fields' current fields (padded, on grid `g`), rounded as the image's
// (weight * S) * R; 0 where either shifted cell leaves the image box. `Load` reads a value as float.
template <class T, class Load>
RTM_HOST_DEVICE float offset_gather_increment(const OffsetGatherLayout& l, const GridLayout& g,
                                              int64_t e, const T* s, const T* r, float weight,
                                              Load load) {
  const int lag = int(e % l.nlag);
  int64_t rest = e / l.nlag;
  const int z = int(rest % l.nz);
  rest /= l.nz;
  const int gx = int(rest % l.ngx);
  rest /= l.ngx;
  const int gy = int(rest % l.ngy);
  const int axis = int(rest / l.ngy);
  const int i = l.x0 + gx * l.stride_x, j = l.y0 + gy * l.stride_y, k = l.z0 + z;
  const int h = (lag - l.lags) * l.lag_step;
  const int hx = axis == 0 ? h : 0, hy = axis == 0 ? 0 : h;
  const int is = i - hx, ir = i + hx, js = j - hy, jr = j + hy;
  if (is < l.x0 || is >= l.x1 || ir < l.x0 || ir >= l.x1 || js < l.y0 || js >= l.y1 || jr < l.y0 ||
      jr >= l.y1)
    return 0.0f;
  return mul_rn(mul_rn(weight, load(s, g.index(is, js, k))), load(r, g.index(ir, jr, k)));
}

} // namespace rtm
