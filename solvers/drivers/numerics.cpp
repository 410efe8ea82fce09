#include "solvers/drivers/numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/stencil.h"

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

namespace {

// h^2 K_h^2 of the 8th-order second derivative along one axis: -(c0 + 2 sum_j c_j cos(j kh)).
// Increases monotonically from 0 at kh = 0 to kStencilAbsSum at kh = pi.
double stencil_symbol(double kh) {
  double s = kStencilC[0];
  for (int j = 1; j <= 4; ++j) s += 2.0 * kStencilC[j] * std::cos(j * kh);
  return -s;
}

// The grid wavenumber times h that the stencil needs to give h^2 K^2 = target; < 0 when no
// propagating wave has it (beyond the stencil's largest symbol).
double grid_wavenumber(double target) {
  if (target > kStencilAbsSum) return -1.0;
  double lo = 0.0, hi = M_PI;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (stencil_symbol(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double hmax_of(const AccuracyCase& c) { return std::max({c.hx, c.hy, c.hz}); }

// Phase error at frequency f and velocity v; NaN when the grid carries no wave of that frequency.
double phase_error(const AccuracyCase& c, double v, double f) {
  const double w = 2.0 * M_PI * f, h = hmax_of(c);
  const double w_fd = c.time_dispersion_removed ? w : 2.0 / c.dt * std::sin(0.5 * w * c.dt);
  const double kh = grid_wavenumber(std::pow(w_fd * h / v, 2));
  if (kh < 0) return std::nan("");
  const double k = w / v;
  return w * c.travel_time * (kh / h / k - 1.0);
}

// Spectrum-weighted RMS of |1 - exp(i dphi)| at one velocity; a frequency the grid cannot carry
// counts as lost entirely (|1 - 0| = 1).
double trace_error_at(const AccuracyCase& c, double v) {
  const int n = 400;
  const double fmax = 4.0 * c.f0; // the Ricker amplitude there is 2e-6 of its peak
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    const double f = (i + 0.5) * fmax / n, x = f / c.f0;
    const double a = x * x * std::exp(-x * x); // Ricker amplitude spectrum (up to a constant)
    const double dphi = phase_error(c, v, f);
    const double e2 = std::isnan(dphi) ? 1.0 : 2.0 - 2.0 * std::cos(dphi);
    num += a * a * e2;
    den += a * a;
  }
  return std::sqrt(num / den);
}

} // namespace

double phase_error_at(const AccuracyCase& c, double v, double frequency) {
  return phase_error(c, v, frequency);
}

double expected_trace_error(const AccuracyCase& c) {
  if (!(c.travel_time > 0)) return 0.0;
  return std::max(trace_error_at(c, c.vmin), trace_error_at(c, c.vmax));
}

std::string accuracy_warning(const AccuracyCase& c, double bound) {
  const double error = expected_trace_error(c);
  if (error <= bound) return {};
  // The velocity that sets the error, for the message.
  const double v = trace_error_at(c, c.vmin) >= trace_error_at(c, c.vmax) ? c.vmin : c.vmax;
  const double fmax = kRickerFmaxOverF0 * c.f0;
  // Largest dt (this spacing) and largest spacing (dt scaled with it, the same Courant number)
  // within the bound, by bisection: the error grows with both.
  auto largest = [&](auto&& error_at_scale) {
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (error_at_scale(mid) <= bound ? lo : hi) = mid;
    }
    return lo;
  };
  char dt_text[200] = "";
  if (!c.time_dispersion_removed) {
    AccuracyCase space_only = c;
    space_only.time_dispersion_removed = true;
    if (expected_trace_error(space_only) <= bound) {
      const double s = largest([&](double scale) {
        AccuracyCase t = c;
        t.dt = c.dt * scale;
        return expected_trace_error(t);
      });
      std::snprintf(dt_text, sizeof dt_text,
                    "--dt %.4g s (this spacing), or --time-dispersion-transform on, or ", s * c.dt);
    }
  }
  const double s = largest([&](double scale) {
    AccuracyCase t = c;
    t.hx *= scale, t.hy *= scale, t.hz *= scale, t.dt *= scale;
    return expected_trace_error(t);
  });
  char msg[700];
  std::snprintf(msg, sizeof msg,
                "warning: expected trace error %.1f%% (relative L2 against the exact solution) after "
                "%.3g s of travel, above the %.0f%% bound: phase error of the 8th-order stencil%s, "
                "worst at v = %.1f m/s (%.2f points per wavelength at f_max = 2.5 f0 = %.3g Hz, "
                "phase error %.2f rad there; dt %.4g s, h_max %.4g m). To meet %.0f%%: %sspacing "
                "<= %.4g m (dt scaled with it).",
                100.0 * error, c.travel_time, 100.0 * bound,
                c.time_dispersion_removed ? " (time dispersion removed by the transforms)"
                                          : " and of the 2nd-order time stepping",
                v, v / (fmax * hmax_of(c)), fmax, std::abs(phase_error(c, v, fmax)), c.dt,
                hmax_of(c), 100.0 * bound, dt_text, s * hmax_of(c));
  return msg;
}

} // namespace rtm
