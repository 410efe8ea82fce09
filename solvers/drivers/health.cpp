#include "solvers/drivers/health.h"

#include <cmath>
#include <cstdio>

namespace rtm {

double runaway_limit(double injected_amplitude, double initial_max_abs, int steps) {
  return kRunawayGain * (double(steps) + 1.0) * (injected_amplitude + initial_max_abs);
}

double injected_amplitude(const std::vector<float>& series, double scale, double max_v2dt2) {
  double sum = 0;
  for (float value : series) sum += std::fabs(double(value));
  return sum * std::fabs(scale) * max_v2dt2;
}

HealthCheck make_health_check(const SimulationGrid& sim, double limit) {
  HealthCheck check;
  check.runaway_limit = limit;
  check.dt = sim.dt;
  const VelocityModel& m = sim.model;
  check.dx = m.dx;
  check.dy = m.dy;
  check.dz = m.dz;
  check.x0 = m.ox - sim.pad_x_lo * m.dx;
  check.y0 = m.oy - sim.pad_y_lo * m.dy;
  check.z0 = m.oz - sim.pad_z_lo * m.dz;
  check.model_i0 = sim.pad_x_lo;
  check.model_i1 = sim.pad_x_lo + m.nx;
  check.model_j0 = sim.pad_y_lo;
  check.model_j1 = sim.pad_y_lo + m.ny;
  check.model_k0 = sim.pad_z_lo;
  check.model_k1 = sim.pad_z_lo + m.nz;
  return check;
}

std::string health_problem(const FieldHealth& health, const HealthCheck& check, int step, int steps,
                           const std::string& context) {
  const double magnitude = std::fabs(double(health.worst_value));
  const bool runaway = health.finite && magnitude > check.runaway_limit;
  if (health.finite && !runaway) return "";

  const bool in_model = health.i >= check.model_i0 && health.i < check.model_i1 &&
                        health.j >= check.model_j0 && health.j < check.model_j1 &&
                        health.k >= check.model_k0 && health.k < check.model_k1;
  char what[160];
  if (!health.finite)
    std::snprintf(what, sizeof what, "holds %s",
                  std::isnan(health.worst_value) ? "NaN" : health.worst_value > 0 ? "+inf" : "-inf");
  else
    std::snprintf(what, sizeof what, "has run away (|p| = %.3g; a stable run stays below %.3g)",
                  magnitude, check.runaway_limit);
  char text[800];
  std::snprintf(text, sizeof text,
                "%s%snumerical instability: after step %d of %d (t = %.6g s) the wavefield %s at "
                "cell (i,j,k) = (%d,%d,%d), (z,y,x) = (%.6g, %.6g, %.6g) m, %s. The run is stopped "
                "and nothing is written. Usual causes: a time step above the CFL limit, or a "
                "velocity model with extreme or corrupted values.",
                context.c_str(), context.empty() ? "" : ": ", step, steps, step * check.dt, what,
                health.i, health.j, health.k, check.z0 + health.k * check.dz,
                check.y0 + health.j * check.dy, check.x0 + health.i * check.dx,
                in_model ? "inside the model" : "in the absorbing layer outside the model");
  return text;
}

void check_wavefield(const HealthProbe& field, const HealthCheck& check, int step, int steps,
                     const std::string& context) {
  const std::string problem = health_problem(field.check_health(), check, step, steps, context);
  if (!problem.empty()) throw NumericalInstability(problem);
}

} // namespace rtm
