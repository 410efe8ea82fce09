#include "solvers/contracts/velocity_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm {

int64_t VelocityModel::nearest_cell(const Position& zyx) const {
  auto cell = [](double x, double o, double d, int n) {
    return std::clamp(int(std::lround((x - o) / d)), 0, n - 1);
  };
  return (int64_t(cell(zyx[0], oz, dz, nz)) * ny + cell(zyx[1], oy, dy, ny)) * nx + cell(zyx[2], ox, dx, nx);
}

// Threaded reductions: a run asks for the extremes of a 512^3 model several times, 0.05 s each
// on one core. min and max are exact in any order; a NaN (which the readers refuse) is skipped
// here as std::min_element would skip it after the first value.
float VelocityModel::vmin() const {
  if (vp.empty()) throw std::logic_error("VelocityModel::vmin: the model has no values");
  float lo = vp[0];
  const auto n = int64_t(vp.size());
#pragma omp parallel for reduction(min : lo) schedule(static)
  for (int64_t c = 0; c < n; ++c) lo = std::min(lo, vp[size_t(c)]);
  return lo;
}

float VelocityModel::vmax() const {
  if (vp.empty()) throw std::logic_error("VelocityModel::vmax: the model has no values");
  float hi = vp[0];
  const auto n = int64_t(vp.size());
#pragma omp parallel for reduction(max : hi) schedule(static)
  for (int64_t c = 0; c < n; ++c) hi = std::max(hi, vp[size_t(c)]);
  return hi;
}

void check_plausible_velocities(const VelocityModel& model, const std::string& source,
                                const std::string& km_per_s_hint,
                                const std::string& thousandfold_hint) {
  const double low = model.vmin(), high = model.vmax();
  if (low >= kMinPlausibleVelocity && high <= kMaxPlausibleVelocity) return;
  const auto plausible = [](double a, double b) {
    return a >= kMinPlausibleVelocity && b <= kMaxPlausibleVelocity;
  };
  std::string hint;
  if (plausible(low * 1000, high * 1000) && !km_per_s_hint.empty())
    hint = "the values look like km/s: " + km_per_s_hint;
  else if (plausible(low / 1000, high / 1000) && !thousandfold_hint.empty())
    hint = "the values look 1000 times too large: " + thousandfold_hint;
  else
    hint = "check the units and the values";
  throw InputError(source + " holds velocities from " + format_number(low) + " to " +
                   format_number(high) + " m/s, outside the plausible range for seismic media (" +
                   format_number(kMinPlausibleVelocity) + " to " +
                   format_number(kMaxPlausibleVelocity) + " m/s); " + hint +
                   ". To use an unusual medium on purpose, pass --allow-unusual-velocities");
}

} // namespace rtm
