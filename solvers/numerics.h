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

} // namespace rtm
