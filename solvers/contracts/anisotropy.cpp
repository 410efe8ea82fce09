#include "solvers/contracts/anisotropy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/velocity_model.h"

namespace rtm {

namespace {

std::string cell_of(const VelocityModel& m, size_t index) {
  const size_t nx = size_t(m.nx), ny = size_t(m.ny);
  return "(z,y,x) = (" + std::to_string(index / (nx * ny)) + "," + std::to_string((index / nx) % ny) +
         "," + std::to_string(index % nx) + ")";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

} // namespace

void check_anisotropy(const VelocityModel& m, const std::string& source) {
  const Anisotropy& a = m.anisotropy;
  if (a.empty()) return;
  const size_t cells = size_t(m.cells());
  const std::vector<float>* arrays[4] = {&a.epsilon, &a.delta, &a.theta, &a.phi};
  const char* names[4] = {"/epsilon", "/delta", "/theta", "/phi"};
  for (int d = 0; d < 4; ++d)
    if (arrays[d]->size() != cells)
      throw InputError(source + ": dataset " + names[d] + " has " + std::to_string(arrays[d]->size()) +
                       " values; expected one per cell of /vp (" + std::to_string(cells) + ")");
  for (size_t c = 0; c < cells; ++c) {
    for (int d = 0; d < 4; ++d)
      if (!std::isfinite((*arrays[d])[c]))
        throw InputError(source + ": dataset " + names[d] + " has value " + number((*arrays[d])[c]) +
                         " at " + cell_of(m, c) + "; expected a finite number");
    const double eps = a.epsilon[c], del = a.delta[c], th = a.theta[c], ph = a.phi[c];
    if (!(del > -0.5))
      throw InputError(source + ": delta = " + number(del) + " at " + cell_of(m, c) +
                       "; expected delta > -0.5 (the TTI system uses sqrt(1 + 2 delta))");
    if (del > eps)
      throw InputError(source + ": delta = " + number(del) + " > epsilon = " + number(eps) + " at " +
                       cell_of(m, c) +
                       "; the pseudo-acoustic TTI system is unstable there (a mode grows "
                       "exponentially): expected delta <= epsilon (docs/physics.md, TTI)");
    if (eps > 1.0)
      throw InputError(source + ": epsilon = " + number(eps) + " at " + cell_of(m, c) +
                       "; expected epsilon <= 1 (no rock is that anisotropic: a units mistake?)");
    if (std::abs(th) > 180.0)
      throw InputError(source + ": dataset /theta has " + number(th) + " degrees at " + cell_of(m, c) +
                       "; expected a tilt in [-180, 180] degrees");
    if (std::abs(ph) > 360.0)
      throw InputError(source + ": dataset /phi has " + number(ph) + " degrees at " + cell_of(m, c) +
                       "; expected an azimuth in [-360, 360] degrees");
  }
}

double fastest_velocity(const VelocityModel& m) {
  if (m.anisotropy.empty()) return m.vmax();
  double v = 0;
  for (size_t c = 0; c < m.vp.size(); ++c)
    v = std::max(v, double(m.vp[c]) * std::sqrt(std::max(1.0, 1.0 + 2.0 * double(m.anisotropy.epsilon[c]))));
  return v;
}

} // namespace rtm
