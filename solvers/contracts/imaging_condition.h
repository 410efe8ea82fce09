// The imaging conditions of `rtm migrate --imaging-condition`, one row each (docs/rtm.md, section
// 5c): what the option offers, what each reads, whether the Laplacian post-filter applies, and
// what each supports. A new condition is a row here plus its per-cell arithmetic below, which the
// CPU reference (kernels/cpu/cpu_propagator.cpp) and the CUDA kernel
// (kernels/cuda/fields/rtm_ops.cu) both call, so the two cannot drift apart.
//
// Notation (docs/rtm.md, section 3): at an imaging step the source field's current field is S[n]
// and the receiver field's R[n+1]; their previous fields are the later time level, S[n+1] (or the
// snapshot before, S[n+k]) and R[n+2], since both step backwards in the backward sweep.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/cpml.h" // kFirstDerivC, RTM_HOST_DEVICE
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/stencil.h"

namespace rtm {

enum class ImagingCondition { cross, isic, separated };

struct ImagingConditionInfo {
  ImagingCondition id;
  const char* name;        // as --imaging-condition spells it
  const char* description; // for the option's help
  // The Laplacian post-filter (-lap of the normalised image) by default: it stands in for the
  // |k|^2 weight that ISIC applies itself (docs/rtm.md, section 5c), so not twice.
  bool laplacian_filter;
  // Reads the fields' previous time level (a time derivative): snapshot reconstruction then keeps
  // the snapshot before in the source field's previous field (Wavefield::reverse_time before each
  // restore; no extra memory).
  bool uses_previous_level;
  // Field values read per box cell per imaging step (centre and neighbours, S and R together;
  // cross: 2), for the log. The image and illumination's read-modify-write come on top for every
  // condition.
  int field_reads;
  // The z-slab split and TTI: false where the arithmetic needs what they do not provide.
  bool supports_slab_split;
  bool supports_tti;
  const char* why_no_slab_split;
  const char* why_no_tti;
};

inline const std::vector<ImagingConditionInfo>& imaging_condition_table() {
  static const std::vector<ImagingConditionInfo> table = {
      {ImagingCondition::cross, "cross",
       "zero-lag cross-correlation S R (with the Laplacian post-filter)", true, false, 2, true, true,
       "", ""},
      {ImagingCondition::isic, "isic",
       "inverse-scattering imaging condition -(R lap S + grad S . grad R), the time derivatives "
       "replaced through the wave equation (no Laplacian post-filter)",
       false, false, 2 + 2 * 24, false, false,
       "its derivatives read 4 planes of both fields beyond each slab, which the split does not "
       "keep current at every imaging step",
       "the TTI image is S_p R_p; ISIC's wave-equation substitution is the isotropic one"},
      {ImagingCondition::separated, "separated",
       "up/down separated S R: only where the source field goes down and the receiver field up "
       "(vertical Poynting vectors -p_t dp/dz; with the Laplacian post-filter)",
       true, true, 4 + 4 * 8, false, false,
       "its vertical derivatives read 4 planes of both fields beyond each slab, which the split "
       "does not keep current at every imaging step",
       "not implemented on the TTI fields, whose energy flux is not -p_t grad p either"},
  };
  return table;
}

inline const ImagingConditionInfo& imaging_condition_info(ImagingCondition c) {
  for (const ImagingConditionInfo& row : imaging_condition_table())
    if (row.id == c) return row;
  throw std::logic_error("imaging_condition_info: a condition without a row");
}

// The row --imaging-condition `name` names; std::invalid_argument naming the choices otherwise.
inline const ImagingConditionInfo& imaging_condition_named(const std::string& name) {
  std::string choices;
  for (const ImagingConditionInfo& row : imaging_condition_table()) {
    if (name == row.name) return row;
    choices += (choices.empty() ? "" : ", ") + std::string(row.name);
  }
  throw std::invalid_argument("expected one of " + choices + ", got '" + name + "'");
}

// The weights the conditions' derivatives use: the wave step's own Laplacian (so that ISIC's
// substitution -R lap S is the step's operator) and 8th-order first derivatives,
//   dp/dx ~ sum_{r=1..4} dx[r] (p[i+r] - p[i-r]),  dx[r] = kFirstDerivC[r] / hx,
// with the spacings taken back from the Laplacian's weights (wx[1] = c1 / hx^2).
struct ImagingStencil {
  LaplacianWeights lap;
  float dx[5], dy[5], dz[5]; // index 0 unused
};

inline ImagingStencil make_imaging_stencil(const LaplacianWeights& w) {
  ImagingStencil s{};
  s.lap = w;
  const double inv_hx = std::sqrt(double(w.wx[1]) / kStencilC[1]);
  const double inv_hy = std::sqrt(double(w.wy[1]) / kStencilC[1]);
  const double inv_hz = std::sqrt(double(w.wz[1]) / kStencilC[1]);
  for (int r = 0; r < 5; ++r) {
    s.dx[r] = float(kFirstDerivC[r] * inv_hx);
    s.dy[r] = float(kFirstDerivC[r] * inv_hy);
    s.dz[r] = float(kFirstDerivC[r] * inv_hz);
  }
  return s;
}

// The neighbours of box cell (i, j, k) of a padded field, their indices clamped into `box` (the
// edge value repeated, as the Laplacian post-filter does): the conditions read nothing outside the
// image box, where the reconstructed source field is not the forward one (boundary saving runs the
// damping in reverse there; a snapshot holds the box alone), so both reconstructions image alike.
struct ClampedCell {
  int64_t c;     // the cell's index
  int i, j, k;   // its coordinates
  Box b;
  int64_t pitch, plane;
  // Index offsets of the cells q = 1..4 to the low (m) and high (p) side along each axis.
  RTM_HOST_DEVICE int64_t xm(int q) const { return clamped(i - q, b.x0, b.x1) - i; }
  RTM_HOST_DEVICE int64_t xp(int q) const { return clamped(i + q, b.x0, b.x1) - i; }
  RTM_HOST_DEVICE int64_t ym(int q) const { return (clamped(j - q, b.y0, b.y1) - j) * pitch; }
  RTM_HOST_DEVICE int64_t yp(int q) const { return (clamped(j + q, b.y0, b.y1) - j) * pitch; }
  RTM_HOST_DEVICE int64_t zm(int q) const { return (clamped(k - q, b.z0, b.z1) - k) * plane; }
  RTM_HOST_DEVICE int64_t zp(int q) const { return (clamped(k + q, b.z0, b.z1) - k) * plane; }
  RTM_HOST_DEVICE static int64_t clamped(int v, int lo, int end) {
    return int64_t(v < lo ? lo : (v >= end ? end - 1 : v));
  }
};

RTM_HOST_DEVICE ClampedCell clamped_cell(const GridLayout& g, const Box& b, int i, int j, int k) {
  return ClampedCell{g.index(i, j, k), i, j, k, b, g.pitch, g.plane};
}

// A cell at least 4 cells from every face of the box: no index needs clamping, so the offsets are
// the plain ones (the same values ClampedCell gives there, without its comparisons).
struct InteriorCell {
  int64_t c, pitch, plane;
  RTM_HOST_DEVICE int64_t xm(int q) const { return -q; }
  RTM_HOST_DEVICE int64_t xp(int q) const { return q; }
  RTM_HOST_DEVICE int64_t ym(int q) const { return -q * pitch; }
  RTM_HOST_DEVICE int64_t yp(int q) const { return q * pitch; }
  RTM_HOST_DEVICE int64_t zm(int q) const { return -q * plane; }
  RTM_HOST_DEVICE int64_t zp(int q) const { return q * plane; }
};

RTM_HOST_DEVICE bool is_interior_cell(const Box& b, int i, int j, int k) {
  return i >= b.x0 + 4 && i < b.x1 - 4 && j >= b.y0 + 4 && j < b.y1 - 4 && k >= b.z0 + 4 &&
         k < b.z1 - 4;
}

// Products and sums rounded one at a time on the device too (nvcc would fuse them into FMAs), so
// the CUDA kernel gives the CPU's values bit for bit and the separated condition's sign tests
// decide alike on both.
RTM_HOST_DEVICE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
RTM_HOST_DEVICE float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
RTM_HOST_DEVICE float sub_rn(float a, float b) { return add_rn(a, -b); }

// ISIC at one cell, before the weight:  -( R lap S + grad S . grad R ).
// `Load` reads a field value as float at an index (float or half storage).
template <class Cell, class T, class Load>
RTM_HOST_DEVICE float isic_value(const ImagingStencil& w, const Cell& n, const T* s,
                                 const T* r, Load load) {
  const int64_t c = n.c;
  float lap = mul_rn(w.lap.c0, load(s, c));
  float gsx = 0, gsy = 0, gsz = 0, grx = 0, gry = 0, grz = 0;
  for (int q = 1; q <= 4; ++q) {
    const float sxm = load(s, c + n.xm(q)), sxp = load(s, c + n.xp(q));
    const float sym = load(s, c + n.ym(q)), syp = load(s, c + n.yp(q));
    const float szm = load(s, c + n.zm(q)), szp = load(s, c + n.zp(q));
    lap = add_rn(lap, mul_rn(w.lap.wx[q], add_rn(sxm, sxp)));
    lap = add_rn(lap, mul_rn(w.lap.wy[q], add_rn(sym, syp)));
    lap = add_rn(lap, mul_rn(w.lap.wz[q], add_rn(szm, szp)));
    gsx = add_rn(gsx, mul_rn(w.dx[q], sub_rn(sxp, sxm)));
    gsy = add_rn(gsy, mul_rn(w.dy[q], sub_rn(syp, sym)));
    gsz = add_rn(gsz, mul_rn(w.dz[q], sub_rn(szp, szm)));
    grx = add_rn(grx, mul_rn(w.dx[q], sub_rn(load(r, c + n.xp(q)), load(r, c + n.xm(q)))));
    gry = add_rn(gry, mul_rn(w.dy[q], sub_rn(load(r, c + n.yp(q)), load(r, c + n.ym(q)))));
    grz = add_rn(grz, mul_rn(w.dz[q], sub_rn(load(r, c + n.zp(q)), load(r, c + n.zm(q)))));
  }
  const float grad = add_rn(add_rn(mul_rn(gsx, grx), mul_rn(gsy, gry)), mul_rn(gsz, grz));
  return -add_rn(mul_rn(load(r, c), lap), grad);
}

// The separated condition's test at one cell: is the source field going down (its vertical
// Poynting component -S_t dS/dz > 0, z down) and the receiver field up (-R_t dR/dz < 0)? The time
// derivative is the difference of the two levels (previous minus current: the later minus the
// earlier, both fields stepping backwards) and dp/dz that of their sum, so that both are centred
// between the levels (docs/rtm.md, section 5c). Only the signs matter: no 1/dt, no 1/2.
template <class Cell, class T, class Load>
RTM_HOST_DEVICE float vertical_flux_sign_product(const ImagingStencil& w, const Cell& n,
                                                 const T* cur, const T* prev, Load load) {
  const int64_t c = n.c;
  float dz = 0;
  for (int q = 1; q <= 4; ++q) {
    const float below = add_rn(load(cur, c + n.zp(q)), load(prev, c + n.zp(q)));
    const float above = add_rn(load(cur, c + n.zm(q)), load(prev, c + n.zm(q)));
    dz = add_rn(dz, mul_rn(w.dz[q], sub_rn(below, above)));
  }
  return mul_rn(sub_rn(load(prev, c), load(cur, c)), dz); // p_t dp/dz up to a positive factor: -P_z
}

template <class Cell, class T, class Load>
RTM_HOST_DEVICE bool down_source_up_receiver(const ImagingStencil& w, const Cell& n,
                                             const T* s, const T* s_prev, const T* r,
                                             const T* r_prev, Load load) {
  // Down-going: P_z > 0, i.e. S_t dS/dz < 0; up-going: R_t dR/dz > 0.
  // Both evaluated (no short cut), so that a loop over cells has no branch and vectorises.
  const float source = vertical_flux_sign_product(w, n, s, s_prev, load);
  const float receiver = vertical_flux_sign_product(w, n, r, r_prev, load);
  return (source < 0.0f) & (receiver > 0.0f);
}

// One cell's image term, weight included (cross and the separated condition's kept product: (w S) R,
// rounded alike; ISIC: w times its value): the interior's plain offsets
// where they reach, the clamped ones near the box's faces. `weighted` is w * S at the cell.
template <class T, class Load>
RTM_HOST_DEVICE float condition_term(ImagingCondition condition, const ImagingStencil& w,
                                     const GridLayout& g, const Box& b, int i, int j, int k,
                                     const T* s, const T* s_prev, const T* r, const T* r_prev,
                                     float weight, float weighted, Load load) {
  const int64_t c = g.index(i, j, k);
  if (condition == ImagingCondition::cross) return mul_rn(weighted, load(r, c));
  if (condition == ImagingCondition::isic) {
    const float v = is_interior_cell(b, i, j, k)
                        ? isic_value(w, InteriorCell{c, g.pitch, g.plane}, s, r, load)
                        : isic_value(w, clamped_cell(g, b, i, j, k), s, r, load);
    return mul_rn(weight, v);
  }
  const bool keep = is_interior_cell(b, i, j, k)
                        ? down_source_up_receiver(w, InteriorCell{c, g.pitch, g.plane}, s, s_prev,
                                                  r, r_prev, load)
                        : down_source_up_receiver(w, clamped_cell(g, b, i, j, k), s, s_prev, r,
                                                  r_prev, load);
  return keep ? mul_rn(weighted, load(r, c)) : 0.0f;
}

} // namespace rtm
