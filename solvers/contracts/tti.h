// Pseudo-acoustic TTI (tilted transversely isotropic) wave step: the plain types and the per-cell
// arithmetic the CPU reference (kernels/cpu/tti_propagator.cpp) and the CUDA kernels
// (kernels/cuda/tti/tti_*.cu) share, so both round the same way. Plain C++ (no CUDA types).
//
// The system (docs/physics.md, "TTI"): two fields p, q with
//   p_tt = vp² ( E H2 p + S H1 q ) + f E vp²        E = 1 + 2 epsilon
//   q_tt = vp² ( S H2 p +   H1 q ) + f S vp²        S = sqrt(1 + 2 delta)
//   H1 = (n.grad)² = sum_ij n_i n_j d_i d_j,  H2 = lap - H1,  n = (sin t cos f, sin t sin f, cos t)
// i.e. [p;q]_tt = C ( K [p;q] + f e_p ) with C = vp² [[E, S], [S, 1]] per cell (symmetric, positive
// semi-definite exactly when epsilon >= delta) and K = diag(H2, H1). Receivers record p.
//
// Discretisation, self-adjoint (after Zhang, Zhang & Zhang 2011; docs/physics.md says why):
//   H1 = -( D_n^T D_n + sum_a R_a^T n_a^2 R_a ),   D_n f = u = n_x D_x f + n_y D_y f + n_z D_z f,
//   D the 8th-order centred first derivative (cpml.h's kFirstDerivC, radius 4) and R_a the 9-tap
//   spectral factor of what D misses along axis a (kTtiAxisFactor: |R(k)|^2 = L(k) - D(k)^2, L the
//   Laplacian's 1-D stencil), so that along an axis H1 is the Laplacian's own second derivative and
//   the grid-scale (Nyquist) mode, to which D is blind, does not travel. Two passes of radius 4 each
//   (radius 8 together; kHalo = 4 per pass is enough: the pass-1 arrays are zero on halo cells);
//   lap: the isotropic step's 8th-order Laplacian (stencil.h), so H2 = lap - H1 and, with
//   epsilon = delta = 0 (E = S = 1, p = q), p's update is v2dt2 lap p: the isotropic step.
// Leapfrog in time; the sponge of propagator.h damps both fields with the same e:
//   p[n+1] = ( 2 p[n] - (1 - e) p[n-1] + v2dt2 ( E H2p + S H1q ) ) / (1 + e)
//   q[n+1] = ( 2 q[n] - (1 - e) q[n-1] + v2dt2 ( S H2p +   H1q ) ) / (1 + e)
//
// Storage: p and q in one padded array whose planes alternate (plane k of p, then plane k of q):
// a GridLayout whose `plane` stride is twice the scalar one (tti_layout), q at +kTtiQOffset(g)
// from p. Whole planes k0..k1 of both fields are then contiguous, as the halo exchange of a
// z-slab needs, and g.index(i, j, k) is p's cell.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "solvers/contracts/cpml.h" // kFirstDerivC, RTM_HOST_DEVICE
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"

namespace rtm {

// Per-cell coefficients on the compute grid, dense [nz][ny][nx] (interior cells), computed from
// vp, epsilon, delta, theta, phi by the drivers (solvers/drivers/tti_setup.h). Empty: isotropic.
struct TtiCoefficients {
  std::vector<float> e;          // 1 + 2 epsilon
  std::vector<float> s;          // sqrt(1 + 2 delta)
  std::vector<float> nx, ny, nz; // the symmetry axis, unit vector (x, y, z components)
  double hx = 1, hy = 1, hz = 1; // grid spacing (m): the derivative weights (make_tti_weights)
  bool empty() const { return e.empty(); }
};

// The layout of a TTI field pair for the scalar layout g of the same grid: planes of p and q
// alternate, so the z stride doubles. Alignment of every row is unchanged (2 g.plane is a
// multiple of 32 floats when g.plane is).
inline GridLayout tti_layout(const GridLayout& g) {
  GridLayout t = g;
  t.plane = 2 * g.plane;
  t.size = round_up(t.offset + t.plane * (int64_t(g.nz) + 2 * kHalo), kRowAlignFloats);
  return t;
}
// Floats from p's cell to q's cell in a tti_layout: one scalar plane.
constexpr int64_t tti_q_offset(const GridLayout& t) { return t.plane / 2; }

// Pass 1's output, per field: u = n . D f and w_a = n_a^2 R_a f for a = x, y, z. The scratch is
// kTtiScratchArrays arrays of tti_layout(g).size floats each (p's and q's planes alternating as
// in the fields), in this order, zero on halo cells.
enum class TtiScratch : int { u = 0, wx = 1, wy = 2, wz = 3 };
constexpr int kTtiScratchArrays = 4;
constexpr int64_t tti_scratch_offset(const GridLayout& t, TtiScratch a) { return int64_t(a) * t.size; }

// The spectral factor R of T(k) = L(k) - D(k)^2 for unit spacing, L(k) = -(c0 + 2 sum c_m cos mk)
// the symbol of the Laplacian's 1-D stencil (stencil.h kStencilC) and D(k) = 2 sum d_m sin mk the
// centred first derivative's (cpml.h kFirstDerivC): |sum_m r_m e^{imk}|^2 = T(k) for all k (error
// below 1e-49 in 50-digit arithmetic; the test TtiOperator.AxisFactorCompletesTheLaplacian checks
// it in double). T is a cosine polynomial of degree 8, zero to order 10 at k = 0 (both stencils
// are 8th-order accurate) and equal to L = 6.50 at the Nyquist wavenumber, where D is zero.
// Derivation (docs/physics.md, TTI): divide z^8 T(z) by (z - 1)^10 exactly, factor the rest,
// R(z) = K (z - 1)^5 prod (z - rho) over its three roots inside the unit circle, K from T(pi).
// Applied centred: (R f)[x] = sum_m r_m f[x + m - 4], so R and R^T reach 4 cells, like D.
constexpr double kTtiAxisFactor[9] = {
    0.00019818123162962723015, -0.0031971868793695645409, 0.025929864144011136553,
    -0.15298865775104996578,   0.47402418115894363344,    -0.78400403819882197296,
    0.71039749297426802066,    -0.33472063379411171269,   0.064360797114500798077};

// The stencil weights of the TTI step for spacings hx, hy, hz: per axis, the second derivative
// (centre c0 and w[1..4] as in LaplacianWeights, 1/h² included) and the first derivative
// (g[1..4], 1/h included) and the axis factor (r[0..8], kTtiAxisFactor / h). Index 0 of w and g
// is unused.
struct TtiWeights {
  float c0x, c0y, c0z;
  float wx[5], wy[5], wz[5];
  float gx[5], gy[5], gz[5];
  float rx[9], ry[9], rz[9];
};

inline TtiWeights make_tti_weights(double hx, double hy, double hz) {
  TtiWeights w{};
  const double h[3] = {hx, hy, hz};
  float* c0[3] = {&w.c0x, &w.c0y, &w.c0z};
  float* second[3] = {w.wx, w.wy, w.wz};
  float* first[3] = {w.gx, w.gy, w.gz};
  float* factor[3] = {w.rx, w.ry, w.rz};
  for (int a = 0; a < 3; ++a) {
    for (int m = 0; m < 9; ++m) factor[a][m] = float(kTtiAxisFactor[m] / h[a]);
    *c0[a] = float(kStencilC[0] / (h[a] * h[a]));
    second[a][0] = first[a][0] = 0.0f;
    for (int r = 1; r <= 4; ++r) {
      second[a][r] = float(kStencilC[r] / (h[a] * h[a]));
      first[a][r] = float(kFirstDerivC[r] / h[a]);
    }
  }
  return w;
}

// d f / d axis at f[0] (cells `stride` floats apart): sum_{r=1..4} g[r] (f[r] - f[-r]), r upward.
RTM_HOST_DEVICE float tti_first(const float* f, int64_t stride, const float* g) {
  float d = g[1] * (f[stride] - f[-stride]);
  d += g[2] * (f[2 * stride] - f[-2 * stride]);
  d += g[3] * (f[3 * stride] - f[-3 * stride]);
  d += g[4] * (f[4 * stride] - f[-4 * stride]);
  return d;
}
// d² f / d axis² at f[0]: c0 f[0] + sum_{r=1..4} w[r] (f[-r] + f[r]), r upward.
RTM_HOST_DEVICE float tti_second(const float* f, int64_t stride, float c0, const float* w) {
  float d = c0 * f[0];
  d += w[1] * (f[-stride] + f[stride]);
  d += w[2] * (f[-2 * stride] + f[2 * stride]);
  d += w[3] * (f[-3 * stride] + f[3 * stride]);
  d += w[4] * (f[-4 * stride] + f[4 * stride]);
  return d;
}

// Pass 1, per field f: the derivative along the axis, u = n . grad f = n_x D_x f + n_y D_y f + n_z D_z f
// (in this order), D the 8th-order first derivative. u is zero on halo cells.
RTM_HOST_DEVICE float tti_axis_derivative(const float* f, int64_t pitch, int64_t plane,
                                          const TtiWeights& w, float nx, float ny, float nz) {
  float u = nx * tti_first(f, 1, w.gx);
  u += ny * tti_first(f, pitch, w.gy);
  u += nz * tti_first(f, plane, w.gz);
  return u;
}
// D (n_a u) along one axis at u[0]: sum_{r=1..4} g[r] (n[r] u[r] - n[-r] u[-r]), r upward; n and u
// laid out alike (n: the axis component a of the symmetry axis).
RTM_HOST_DEVICE float tti_first_of_product(const float* n, const float* u, int64_t n_stride,
                                           int64_t u_stride, const float* g) {
  float d = g[1] * (n[n_stride] * u[u_stride] - n[-n_stride] * u[-u_stride]);
  d += g[2] * (n[2 * n_stride] * u[2 * u_stride] - n[-2 * n_stride] * u[-2 * u_stride]);
  d += g[3] * (n[3 * n_stride] * u[3 * u_stride] - n[-3 * n_stride] * u[-3 * u_stride]);
  d += g[4] * (n[4 * n_stride] * u[4 * u_stride] - n[-4 * n_stride] * u[-4 * u_stride]);
  return d;
}
// R f at f[0] along one axis (cells `stride` floats apart): sum_{m=0..8} r[m] f[(m - 4) stride],
// m upward.
RTM_HOST_DEVICE float tti_axis_factor(const float* f, int64_t stride, const float* r) {
  float d = r[0] * f[-4 * stride];
  for (int m = 1; m < 9; ++m) d += r[m] * f[(m - 4) * stride]; // a constant trip count: unrolled
  return d;
}
// R^T w at w[0] along one axis: sum_{m=0..8} r[m] w[(4 - m) stride], m upward.
RTM_HOST_DEVICE float tti_axis_factor_transpose(const float* w, int64_t stride, const float* r) {
  float d = r[0] * w[4 * stride];
  for (int m = 1; m < 9; ++m) d += r[m] * w[(4 - m) * stride];
  return d;
}
// Pass 1's pure-axis part along axis a: w_a = (n_a n_a) (R_a f).
RTM_HOST_DEVICE float tti_pure_axis(const float* f, int64_t stride, const float* r, float n_a) {
  return (n_a * n_a) * tti_axis_factor(f, stride, r);
}
// Pass 2, per field: H1 f = div (n u) - (R_x^T w_x + R_y^T w_y + R_z^T w_z), where div (n u) =
// D_x(n_x u) + D_y(n_y u) + D_z(n_z u) (tti_first_of_product, in this order) and the three
// transposes are summed in this order. This is -(D_n^T D_n + sum_a (n_a R_a)^T (n_a R_a)): symmetric
// and negative semi-definite for ANY n(x) (the step stays self-adjoint and stable where the tilt
// varies; docs/physics.md, TTI).
RTM_HOST_DEVICE float tti_h1(float div_nu, float rtx, float rty, float rtz) {
  return div_nu - ((rtx + rty) + rtz);
}

// The update of one cell from p's Laplacian and the two H1 values. prev_p/prev_q hold p[n-1],
// q[n-1]; the results are p[n+1], q[n+1]. damp = 0: the undamped step exactly.
struct TtiCellUpdate {
  float p, q;
};
RTM_HOST_DEVICE TtiCellUpdate tti_update(float lap_p, float h1p, float h1q, float p, float q,
                                          float prev_p, float prev_q, float v2dt2, float e_coef,
                                          float s_coef, float damp) {
  const float h2p = lap_p - h1p;
  const float up = 2.0f * p - prev_p + v2dt2 * (e_coef * h2p + s_coef * h1q);
  const float uq = 2.0f * q - prev_q + v2dt2 * (s_coef * h2p + h1q);
  TtiCellUpdate r;
  if (damp != 0.0f) {
    r.p = (up + damp * prev_p) / (1.0f + damp);
    r.q = (uq + damp * prev_q) / (1.0f + damp);
  } else {
    r.p = up;
    r.q = uq;
  }
  return r;
}

// Flops of one cell's step as written above (every +, -, * once): the bench reports them.
//   tti_first: 4 differences, 4 products, 3 sums = 11; tti_second: 4 sums, 5 products, 4 sums = 13;
//   tti_first_of_product: 11 + 8 products = 19; tti_axis_factor (and its transpose): 9 products,
//   8 sums = 17; tti_pure_axis: 17 + 2 = 19.
//   pass 1, two fields: 2 x (3 x 11 + 3 products + 2 sums + 3 x 19) = 190
//   pass 2, two fields: 2 x (3 x 19 + 2 sums + 3 x 17 + 3) = 226; p's Laplacian: 3 x 13 + 2 = 41
//   update: h2p 1, p 7 (2p - prev + v2dt2 (E h2p + S h1q)), q 6 = 14 (undamped)
constexpr int kTtiFlopsPerCell = 190 + 226 + 41 + 14;

} // namespace rtm
