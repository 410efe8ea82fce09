// Thomsen anisotropy of a velocity model (docs/physics.md, "TTI"; file layout in docs/io.md):
// epsilon, delta (dimensionless) and the symmetry axis' tilt theta from the vertical and azimuth
// phi from the x axis towards y (degrees), dense [nz][ny][nx] like /vp. Empty: isotropic.
#pragma once

#include <string>
#include <vector>

namespace rtm {

struct VelocityModel;

struct Anisotropy {
  std::vector<float> epsilon, delta, theta, phi;
  bool empty() const { return epsilon.empty(); }
};

// The anisotropy a pseudo-acoustic TTI run accepts (the four datasets' names in messages):
//   every value finite; -0.5 < delta <= epsilon <= 1 (delta > epsilon makes the system's matrix
//   C = vp² [[1 + 2 epsilon, sqrt(1 + 2 delta)], [sqrt(1 + 2 delta), 1]] indefinite: a mode grows
//   exponentially; 1 + 2 delta <= 0 has no square root; epsilon > 1 is no rock's);
//   |theta| <= 180, |phi| <= 360 degrees.
// Throws InputError naming `source`, the dataset, the cell (z, y, x) and the values at fault.
void check_anisotropy(const VelocityModel& model, const std::string& source);

// The velocity the TTI step's CFL limit and the sponge use: max over cells of
// vp sqrt(max(1, 1 + 2 epsilon)), the fastest phase velocity (horizontal in the axis' frame when
// epsilon > 0). vmax() for an isotropic model.
double fastest_velocity(const VelocityModel& model);

} // namespace rtm
