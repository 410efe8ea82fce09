// Stopping a run that has gone numerically wrong, instead of writing garbage.
//
// Every `every` steps (and after the last) the driver asks the propagator for the health of its
// field (HealthProbe::check_health: one cheap reduction where the field lives) and stops the run
// with NumericalInstability when the field holds a NaN or an infinity, or when |p| exceeds the
// runaway limit. The message names the step, the time, the cell (grid indices and metres) and the
// value, so the user knows where the run broke and why it was stopped.
//
// The runaway limit. The scheme is linear: the field is the sum of the responses to every
// injected increment. With dt within the CFL limit every Fourier mode of the leapfrog step is
// bounded, except exactly at the limit, where the highest mode may grow linearly with the step
// count; the absorbing layers only take energy out. So a stable run keeps
//   |p| <= C (n + 1) A,   A = the total injected amplitude + the initial max |p|,
// with C a modest gain of the stencil (a few). We allow C = kRunawayGain = 1000: no stable run comes
// near it, while an unstable one grows geometrically (by a factor of 1.3 per step at only 1% above
// the CFL limit, by 7 per step at 1.5 times it) and crosses it within a few dozen steps of leaving
// rounding noise, long before float32 overflows to infinity (3.4e38) and the evidence turns to NaN.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/field_probes.h"
#include "solvers/contracts/propagator.h"
#include "solvers/drivers/simulation.h"

namespace rtm {

// A run stopped because its wavefield is no longer a solution (exit status 1: a failure while
// running; nothing is written).
class NumericalInstability : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

constexpr int kHealthCheckInterval = 50; // steps; a check reads the field once or twice, a fraction of a step
constexpr double kRunawayGain = 1000.0;

// How often a run is checked and against what; make_health_check fills it from the grid.
struct HealthCheck {
  int every = kHealthCheckInterval;
  double runaway_limit = std::numeric_limits<double>::infinity(); // |p| above this is a runaway
  double dt = 0; // s, for the time in messages
  // Compute cell (i, j, k) sits at (x0 + i dx, y0 + j dy, z0 + k dz) metres in model coordinates;
  // cells with i < model_i0 or i >= model_i1 (likewise j, k) lie in the absorbing layers.
  double x0 = 0, y0 = 0, z0 = 0, dx = 1, dy = 1, dz = 1;
  int model_i0 = 0, model_i1 = std::numeric_limits<int>::max();
  int model_j0 = 0, model_j1 = std::numeric_limits<int>::max();
  int model_k0 = 0, model_k1 = std::numeric_limits<int>::max();

  // True after step `step` (1-based: the field is p[step]) of `steps`: every `every`-th and the last.
  bool due(int step, int steps) const { return step == steps || (every > 0 && step % every == 0); }
};

// kRunawayGain (steps + 1) (injected + initial): the limit argued above.
double runaway_limit(double injected_amplitude, double initial_max_abs, int steps);

// The total amplitude a point set injects over a run: sum over t and points of
// |scale * series[t][point]| * max_v2dt2 (the injection adds scale * weight * v2dt2 * series, and
// the weights of a point sum to 1).
double injected_amplitude(const std::vector<float>& series, double scale, double max_v2dt2);

// Positions, layers and dt from the simulation grid; `limit` from runaway_limit.
HealthCheck make_health_check(const SimulationGrid& sim, double limit);

// The text of a failed check, or "" when `health` is fine: "<context>: after step 150 of 400 ...".
std::string health_problem(const FieldHealth& health, const HealthCheck& check, int step, int steps,
                           const std::string& context);

// Asks `field` for its health and throws NumericalInstability with health_problem's text when
// it is not fine. `context` says which run ("shot 3", "shot 3, receiver wavefield").
void check_wavefield(const HealthProbe& field, const HealthCheck& check, int step, int steps,
                     const std::string& context);

} // namespace rtm
