#include "solvers/numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/errors.h"
#include "kernels/stencil.h"

namespace rtm {

double cfl_dt_limit(double vmax, double hx, double hy, double hz) {
  const double inv_h2 = 1.0 / (hx * hx) + 1.0 / (hy * hy) + 1.0 / (hz * hz);
  return 2.0 / (vmax * std::sqrt(kStencilAbsSum * inv_h2));
}

double choose_dt(double requested_dt, double vmax, double hx, double hy, double hz) {
  const double limit = cfl_dt_limit(vmax, hx, hy, hz);
  if (requested_dt <= 0.0) return kDefaultCflFraction * limit;
  if (!std::isfinite(requested_dt) || requested_dt > limit) {
    const double hmin = std::min({hx, hy, hz});
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "--dt %.6g s violates the CFL stability limit: with v_max = %.6g m/s and spacing "
                  "(%.4g, %.4g, %.4g) m the 8th-order scheme needs dt <= %.6g s (Courant number "
                  "v_max*dt/h_min = %.4f requested, at most %.4f allowed). Use --dt %.6g or leave "
                  "--dt unset to derive it.",
                  requested_dt, vmax, hx, hy, hz, limit, vmax * requested_dt / hmin,
                  vmax * limit / hmin, kDefaultCflFraction * limit);
    throw InputError(msg);
  }
  return requested_dt;
}

double points_per_wavelength(double vmin, double f0, double hmax) {
  return vmin / (kRickerFmaxOverF0 * f0 * hmax);
}

std::string dispersion_warning(double vmin, double f0, double hx, double hy, double hz) {
  const double hmax = std::max({hx, hy, hz});
  const double ppw = points_per_wavelength(vmin, f0, hmax);
  if (ppw >= kMinPointsPerWavelength) return {};
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "warning: grid too coarse for the wavelet: %.2f points per shortest wavelength "
                "(v_min %.6g m/s, f_max ~ %.3g Hz = 2.5 f0, h_max %.4g m); 8th order needs about "
                "%.0f. Expect numerical dispersion; use f0 <= %.3g Hz or h <= %.4g m.",
                ppw, vmin, kRickerFmaxOverF0 * f0, hmax, kMinPointsPerWavelength,
                vmin / (kRickerFmaxOverF0 * kMinPointsPerWavelength * hmax),
                vmin / (kRickerFmaxOverF0 * kMinPointsPerWavelength * f0));
  return msg;
}

} // namespace rtm
