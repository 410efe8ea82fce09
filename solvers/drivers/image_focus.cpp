#include "solvers/drivers/image_focus.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rtm {

std::vector<uint8_t> interface_cells(const VelocityModel& m, double min_reflection) {
  std::vector<uint8_t> marked(size_t(m.cells()), 0);
  auto index = [&](int i, int j, int k) { return (size_t(k) * m.ny + j) * m.nx + i; };
  // Each pair of face neighbours once: the cell and the next one along x, y and z.
  auto pair = [&](int i, int j, int k, int i2, int j2, int k2) {
    const double a = m.at(i, j, k), b = m.at(i2, j2, k2);
    if (std::abs(b - a) >= min_reflection * (a + b)) marked[index(i, j, k)] = marked[index(i2, j2, k2)] = 1;
  };
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        if (i + 1 < m.nx) pair(i, j, k, i + 1, j, k);
        if (j + 1 < m.ny) pair(i, j, k, i, j + 1, k);
        if (k + 1 < m.nz) pair(i, j, k, i, j, k + 1);
      }
  return marked;
}

std::vector<uint8_t> cells_near(const std::vector<uint8_t>& marked, int nx, int ny, int nz,
                                int radius) {
  if (marked.size() != size_t(nx) * ny * nz)
    throw std::invalid_argument("cells_near: mask is not nz*ny*nx");
  if (radius < 0) throw std::invalid_argument("cells_near: radius must be >= 0");
  // The cube is the product of three intervals: widen along x, then y, then z.
  std::vector<uint8_t> in = marked, out(marked.size());
  const int n[3] = {nx, ny, nz};
  const int64_t stride[3] = {1, int64_t(nx), int64_t(nx) * ny};
  for (int axis = 0; axis < 3; ++axis) {
    for (int64_t c = 0; c < int64_t(in.size()); ++c) {
      const int pos = int(c / stride[axis] % n[axis]);
      const int lo = std::max(0, pos - radius), hi = std::min(n[axis] - 1, pos + radius);
      uint8_t any = 0;
      for (int p = lo; p <= hi && !any; ++p) any = in[size_t(c + (p - pos) * stride[axis])];
      out[size_t(c)] = any;
    }
    std::swap(in, out);
  }
  return in;
}

ImageFocus image_focus(const VelocityModel& model, const std::vector<float>& image, int radius,
                       double min_reflection) {
  if (image.size() != size_t(model.cells()))
    throw std::invalid_argument("image_focus: the image is not on the model's grid");
  const std::vector<uint8_t> marked = interface_cells(model, min_reflection);
  const std::vector<uint8_t> near = cells_near(marked, model.nx, model.ny, model.nz, radius);
  ImageFocus f;
  double near_energy = 0, energy = 0;
  int64_t near_cells = 0;
  for (size_t c = 0; c < image.size(); ++c) {
    const double e = double(image[c]) * image[c];
    energy += e;
    if (near[c]) near_energy += e, ++near_cells;
    f.interface_cells += marked[c];
  }
  f.focus = energy > 0 ? near_energy / energy : 0;
  f.near_share = image.empty() ? 0 : double(near_cells) / double(image.size());
  return f;
}

} // namespace rtm
