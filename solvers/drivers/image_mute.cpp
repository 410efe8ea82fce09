#include "solvers/drivers/image_mute.h"

#include <cmath>
#include <stdexcept>

#include "solvers/contracts/errors.h"

namespace rtm {

void mute_image_top(std::vector<float>& image, const VelocityModel& grid, double depth,
                    double taper) {
  if (image.size() != size_t(grid.cells()))
    throw std::invalid_argument("mute_image_top: the image is not on the model's grid");
  if (!(taper >= 0))
    throw InputError("--image-mute-taper must be at least 0 m, got " + std::to_string(taper));
  if (!(depth > 0)) return;
  const size_t plane = size_t(grid.nx) * grid.ny;
  for (int k = 0; k < grid.nz; ++k) {
    const double z = k * grid.dz;
    if (z > depth && z >= depth + taper) break;
    const float gain = float(image_mute_gain(z, depth, taper));
    for (size_t c = size_t(k) * plane; c < size_t(k + 1) * plane; ++c) image[c] *= gain;
  }
}

double image_mute_gain(double z, double depth, double taper) {
  if (!(depth > 0) || (z > depth && z >= depth + taper)) return 1.0;
  return z <= depth ? 0.0 : 0.5 - 0.5 * std::cos(M_PI * (z - depth) / taper);
}

} // namespace rtm
