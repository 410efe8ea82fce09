#include "solvers/drivers/wavelet.h"

#include <cmath>

namespace rtm {

double ricker(double t, double f0, double t0) {
  const double a = M_PI * M_PI * f0 * f0 * (t - t0) * (t - t0);
  return (1.0 - 2.0 * a) * std::exp(-a);
}

std::vector<float> ricker_wavelet(int nt, double dt, double f0, double t0) {
  std::vector<float> w(size_t(nt > 0 ? nt : 0));
  for (int n = 0; n < nt; ++n) w[size_t(n)] = float(ricker(n * dt, f0, t0));
  return w;
}

} // namespace rtm
