#include "solvers/drivers/tti_models.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "solvers/contracts/anisotropy.h"
#include "solvers/contracts/errors.h"

namespace rtm {

std::vector<double> per_layer(const std::vector<double>& values, size_t layers, const char* option) {
  if (values.size() == 1) return std::vector<double>(layers, values[0]);
  if (values.size() != layers)
    throw InputError(std::string(option) + ": give one value for every layer or " + std::to_string(layers) +
                     " (one per layer), got " + std::to_string(values.size()));
  return values;
}

namespace {

void fill(VelocityModel& m, const std::vector<double>& eps, const std::vector<double>& delta, double theta,
          double phi, const std::vector<double>& depths, double dip) {
  const size_t n = size_t(m.cells());
  Anisotropy& a = m.anisotropy;
  a.epsilon.assign(n, 0.0f);
  a.delta.assign(n, 0.0f);
  a.theta.assign(n, float(theta));
  a.phi.assign(n, float(phi));
  const double slope = std::tan(dip * 3.14159265358979323846 / 180.0), xc = 0.5 * (m.nx - 1) * m.dx;
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        const double z = k * m.dz - (i * m.dx - xc) * slope; // depth where the layer crosses the centre
        const size_t layer = size_t(std::upper_bound(depths.begin(), depths.end(), z) - depths.begin());
        const size_t c = (size_t(k) * m.ny + j) * m.nx + i;
        a.epsilon[c] = float(eps[layer]);
        a.delta[c] = float(delta[layer]);
      }
}

} // namespace

void set_layered_anisotropy(VelocityModel& model, const std::vector<double>& depths,
                            const std::vector<double>& epsilon, const std::vector<double>& delta,
                            double theta, double phi) {
  const size_t layers = depths.size() + 1;
  fill(model, per_layer(epsilon, layers, "--epsilon"), per_layer(delta, layers, "--delta"), theta, phi,
       depths, 0.0);
  check_anisotropy(model, "the anisotropic model asked for (--epsilon, --delta, --tilt, --azimuth)");
}

VelocityModel tilted_layer_model(const ModelShape& shape, double dip, const std::vector<double>& depths,
                                 const std::vector<double>& velocities, const std::vector<double>& epsilon,
                                 const std::vector<double>& delta) {
  if (!(std::abs(dip) < 80))
    throw InputError("--dip: expected a dip between -80 and 80 degrees, got " + std::to_string(dip));
  VelocityModel m = layered_model(shape, depths, velocities); // checks velocities and depths
  const size_t layers = velocities.size();
  fill(m, per_layer(epsilon, layers, "--epsilon"), per_layer(delta, layers, "--delta"), -dip, 0.0, depths,
       dip);
  // vp follows the same dipping layers.
  const double slope = std::tan(dip * 3.14159265358979323846 / 180.0), xc = 0.5 * (m.nx - 1) * m.dx;
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        const double z = k * m.dz - (i * m.dx - xc) * slope;
        const size_t layer = size_t(std::upper_bound(depths.begin(), depths.end(), z) - depths.begin());
        m.at(i, j, k) = float(velocities[layer]);
      }
  check_anisotropy(m, "the tilted-layer model asked for (--epsilon, --delta, --dip)");
  return m;
}

} // namespace rtm
