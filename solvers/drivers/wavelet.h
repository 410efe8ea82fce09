// Source wavelets.
#pragma once

#include <vector>

namespace rtm {

// Ricker: w(t) = (1 - 2 pi^2 f0^2 tau^2) exp(-pi^2 f0^2 tau^2), tau = t - t0, sampled at t = n dt.
double ricker(double t, double f0, double t0);
std::vector<float> ricker_wavelet(int nt, double dt, double f0, double t0);

// The default delay: the wavelet starts at about 1e-5 of its peak.
inline double default_ricker_delay(double f0) { return 1.2 / f0; }

} // namespace rtm
