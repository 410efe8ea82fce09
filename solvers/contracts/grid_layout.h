// Memory layout of every 3D array the propagators touch (wavefields, v2dt2, images).
//
// Plain C++ (no CUDA types) so host code, the CPU reference and the CUDA kernels share one
// definition. Arrays are [nz][ny][nx] with x fastest. Each array carries a halo of kHalo cells
// on every side (the stencil radius). Rows are padded to a multiple of 32 floats and the base is
// shifted so that the first interior cell of every row sits on a 128-byte boundary: a warp
// reading 32 consecutive interior cells of a row then touches exactly one 128-byte line.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rtm {

constexpr int kHalo = 4;            // stencil radius of the 8th-order Laplacian
constexpr int kRowAlignFloats = 32; // 128 bytes

struct GridLayout {
  int nx = 0, ny = 0, nz = 0; // interior cells
  int64_t pitch = 0;          // floats between consecutive rows (y)
  int64_t plane = 0;          // floats between consecutive planes (z)
  int64_t offset = 0;         // floats before cell (-kHalo, -kHalo, -kHalo)
  int64_t size = 0;           // floats to allocate, halo and padding included

  // Linear index of cell (i, j, k) = (x, y, z); valid for -kHalo <= i < nx + kHalo etc.
  constexpr int64_t index(int i, int j, int k) const {
    return offset + int64_t(k + kHalo) * plane + int64_t(j + kHalo) * pitch + (i + kHalo);
  }
  constexpr int64_t interior_cells() const { return int64_t(nx) * ny * nz; }
  constexpr bool same_shape(const GridLayout& o) const {
    return nx == o.nx && ny == o.ny && nz == o.nz;
  }
};

constexpr int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

constexpr GridLayout make_layout(int nx, int ny, int nz) {
  GridLayout g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.pitch = round_up(int64_t(nx) + 2 * kHalo, kRowAlignFloats);
  g.plane = g.pitch * (int64_t(ny) + 2 * kHalo);
  // Shift so that index(0, j, k) is a multiple of kRowAlignFloats for every j, k.
  g.offset = kRowAlignFloats - kHalo;
  g.size = g.offset + g.plane * (int64_t(nz) + 2 * kHalo);
  g.size = round_up(g.size, kRowAlignFloats);
  return g;
}

} // namespace rtm
