// The 8th-order second-derivative stencil and the per-axis weights one wave step uses.
// Plain C++ (no CUDA types), shared by the CPU reference and every CUDA variant.
#pragma once

namespace rtm {

// d2p/dx2 ~ (1/h^2) sum_{k=-4..4} c_|k| p[i+k]   (docs/physics.md)
constexpr double kStencilC[5] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};
// sum |c_k| over the 9-point stencil: 2048/315, enters the CFL limit.
constexpr double kStencilAbsSum = 2048.0 / 315.0;

// Weights of the 3D Laplacian on a grid with spacings hx, hy, hz:
//   lap p = c0 * p + sum_{r=1..4} ( wx[r] (p[x-r]+p[x+r]) + wy[r] (...) + wz[r] (...) )
// c0 combines the three centre coefficients. Index 0 of wx/wy/wz is unused (kept for clarity).
struct LaplacianWeights {
  float c0;
  float wx[5], wy[5], wz[5];
};

inline LaplacianWeights make_laplacian_weights(double hx, double hy, double hz) {
  LaplacianWeights w{};
  const double ix = 1.0 / (hx * hx), iy = 1.0 / (hy * hy), iz = 1.0 / (hz * hz);
  w.c0 = float(kStencilC[0] * (ix + iy + iz));
  for (int r = 0; r < 5; ++r) {
    w.wx[r] = float(kStencilC[r] * ix);
    w.wy[r] = float(kStencilC[r] * iy);
    w.wz[r] = float(kStencilC[r] * iz);
  }
  w.wx[0] = w.wy[0] = w.wz[0] = 0.0f;
  return w;
}

} // namespace rtm
