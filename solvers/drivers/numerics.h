// Time step, stability and sampling checks (docs/physics.md, "Time step (CFL)" and "Dispersion").
#pragma once

#include <string>

namespace rtm {

// Largest stable dt for the 8th-order stencil (von Neumann):
//   dt <= 2 / ( v_max * sqrt( S * (1/hx^2 + 1/hy^2 + 1/hz^2) ) ),  S = 2048/315.
double cfl_dt_limit(double vmax, double hx, double hy, double hz);

// The default Courant safety: dt = kDefaultCflFraction * cfl_dt_limit (Courant number v dt / h
// ~ 0.40 for equal spacing, below the 0.4529 limit).
constexpr double kDefaultCflFraction = 0.88;

// dt from CFL with the safety factor when `requested_dt` <= 0; otherwise `requested_dt` after
// checking it: a dt above the limit throws InputError stating the limit and the Courant numbers.
double choose_dt(double requested_dt, double vmax, double hx, double hy, double hz);

// Points per shortest wavelength for a Ricker of peak frequency f0 (f_max ~ 2.5 f0):
// v_min / (2.5 f0 h_max). 8th order needs about 4 (docs/physics.md, "Dispersion").
double points_per_wavelength(double vmin, double f0, double hmax);
constexpr double kMinPointsPerWavelength = 4.0;
constexpr double kRickerFmaxOverF0 = 2.5;

// A warning text when the grid is too coarse for the wavelet; empty when it is fine.
std::string dispersion_warning(double vmin, double f0, double hx, double hy, double hz);

// The accuracy of a run, space and time discretisation together (docs/physics.md, "Accuracy
// check"). A Ricker wavelet of peak frequency f0 travelling for `travel_time` seconds at velocity v
// picks up, per frequency f, the phase error
//   dphi(f) = w t (k_num / k - 1),   k = w / v,   v K_h(k_num) = (2/dt) sin(w dt / 2)
// with K_h the 8th-order stencil's symbol along an axis of the largest spacing (its worst
// direction). With the time-dispersion transforms (solvers/drivers/time_dispersion.h) the right side is w
// itself: only the spatial part is left. The expected relative L2 error of the trace is the
// spectrum-weighted RMS of |1 - exp(i dphi)| over the Ricker amplitude spectrum, the larger of
// v = v_min and v = v_max (the spatial part is worst at v_min, the time part does not depend on v,
// and the two have opposite signs, so the error is largest at one of the two ends).
struct AccuracyCase {
  double vmin = 0, vmax = 0;     // m/s
  double f0 = 0;                 // Ricker peak frequency (Hz)
  double hx = 0, hy = 0, hz = 0; // m
  double dt = 0;                 // s
  double travel_time = 0;        // s the waves travel (a run: record time less the wavelet delay)
  bool time_dispersion_removed = false;
};
// Expected relative L2 trace error (0.02 = 2%).
double expected_trace_error(const AccuracyCase& c);
// Phase error (radians) at f_max = 2.5 f0 and velocity v.
double phase_error_at(const AccuracyCase& c, double v, double frequency);

// The bound the accuracy check holds a run to: 2% relative L2 against the analytic trace.
constexpr double kTraceErrorBound = 0.02;
// A warning when expected_trace_error exceeds `bound`, with the expected error and the dt (when
// the time part counts) and the spacing that would meet it; empty when the run is within it.
std::string accuracy_warning(const AccuracyCase& c, double bound = kTraceErrorBound);

} // namespace rtm
