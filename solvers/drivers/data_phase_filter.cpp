#include "solvers/drivers/data_phase_filter.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/fftw_plan.h"

namespace rtm {

DataPhaseFilter parse_data_phase_filter(const std::string& name) {
  if (name == "auto") return DataPhaseFilter::automatic;
  if (name == "none") return DataPhaseFilter::none;
  if (name == "half") return DataPhaseFilter::half;
  if (name == "full") return DataPhaseFilter::full;
  throw InputError("--data-phase-filter: expected auto, none, half or full, got '" + name + "'");
}

bool parse_data_phase_order(const std::string& text, double& order) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != text.size()) return false;
  // Above 3 the filter's gain (omega / omega0)^order lifts the wavelet's tail beyond its peak.
  if (!(value >= 0 && value <= 3))
    throw InputError("--data-phase-filter: an order must lie between 0 and 3, got " + text);
  order = value;
  return true;
}

const char* data_phase_filter_name(DataPhaseFilter f) {
  switch (f) {
  case DataPhaseFilter::automatic: return "auto";
  case DataPhaseFilter::none: return "none";
  case DataPhaseFilter::half: return "half";
  case DataPhaseFilter::full: return "full";
  case DataPhaseFilter::order: return "order";
  }
  return "?";
}

std::string describe_data_phase_filter(DataPhaseFilter filter, double order) {
  char text[96];
  std::snprintf(text, sizeof text, "%s, order %g", data_phase_filter_name(filter), order);
  return text;
}

double data_phase_filter_order(DataPhaseFilter f) {
  switch (f) {
  case DataPhaseFilter::none: return 0.0;
  case DataPhaseFilter::half: return 0.5;
  case DataPhaseFilter::full: return 1.0;
  case DataPhaseFilter::automatic:
  case DataPhaseFilter::order: break;
  }
  throw std::invalid_argument("data_phase_filter_order: 'auto' and 'order' have no fixed order");
}

namespace {

// Eigenvectors of a symmetric 3x3 matrix by cyclic Jacobi rotations (columns of v).
void symmetric_eigenvectors(std::array<std::array<double, 3>, 3> a,
                            std::array<std::array<double, 3>, 3>& v) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    if (off <= 1e-30 * (a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2]) || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = 0.5 * std::atan2(2 * a[p][q], a[q][q] - a[p][p]);
        const double c = std::cos(theta), s = std::sin(theta);
        for (int k = 0; k < 3; ++k) { // a := a J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) { // a := J^T a
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
}

double distance(const Position& a, const Position& b) {
  const double dz = a[0] - b[0], dy = a[1] - b[1], dx = a[2] - b[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

} // namespace

ReceiverSpread describe_receiver_spread(const std::vector<Position>& receivers, double velocity,
                                        double f0, double long_wavelengths) {
  ReceiverSpread s;
  s.receivers = int(receivers.size());
  s.wavelength = velocity / f0;
  if (receivers.size() < 2) return s;

  // Median nearest-neighbour distance, over at most ~500 receivers as queries (all as candidates):
  // enough for a median, and linear in the receivers.
  const size_t n = receivers.size(), stride = std::max<size_t>(1, n / 500);
  std::vector<double> nearest;
  for (size_t i = 0; i < n; i += stride) {
    double best = INFINITY;
    for (size_t j = 0; j < n; ++j)
      if (j != i) best = std::min(best, distance(receivers[i], receivers[j]));
    nearest.push_back(best);
  }
  std::nth_element(nearest.begin(), nearest.begin() + nearest.size() / 2, nearest.end());
  s.spacing = nearest[nearest.size() / 2];

  // Principal axes of the positions, and the extent of the receivers along each.
  Position mean{0, 0, 0};
  for (const Position& r : receivers)
    for (int a = 0; a < 3; ++a) mean[a] += r[a] / double(n);
  std::array<std::array<double, 3>, 3> cov{}, axes{};
  for (const Position& r : receivers)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) cov[a][b] += (r[a] - mean[a]) * (r[b] - mean[b]);
  symmetric_eigenvectors(cov, axes);
  std::array<double, 3> extent{};
  for (int e = 0; e < 3; ++e) {
    double lo = INFINITY, hi = -INFINITY;
    for (const Position& r : receivers) {
      double p = 0;
      for (int a = 0; a < 3; ++a) p += (r[a] - mean[a]) * axes[a][e];
      lo = std::min(lo, p);
      hi = std::max(hi, p);
    }
    extent[e] = hi - lo;
  }
  std::array<int, 3> by_extent{0, 1, 2};
  std::sort(by_extent.begin(), by_extent.end(), [&](int a, int b) { return extent[a] > extent[b]; });
  for (int e = 0; e < 3; ++e) {
    s.extent[e] = extent[size_t(by_extent[e])];
    for (int a = 0; a < 3; ++a) s.axis[e][a] = axes[a][size_t(by_extent[e])];
  }
  for (int e = 0; e < 3; ++e) extent[e] = s.extent[e];

  s.dense = s.spacing > 0 && s.spacing <= 0.5 * s.wavelength;
  if (!s.dense) return s;
  int long_axes = 0;
  for (int e = 0; e < 3; ++e)
    if (extent[e] >= long_wavelengths * s.wavelength) ++long_axes;
  long_axes = std::min(long_axes, 2);
  if (long_axes == 2) {
    // Areal only if the points fill at least half of their rectangle in bins of half a
    // wavelength (the density asked for): a cross of two lines spans a plane but does not fill it.
    // (At most ~4 million bins: a survey hundreds of wavelengths wide is judged on coarser ones.)
    const double bin = std::max(0.5 * s.wavelength, std::sqrt(extent[0] * extent[1] / 4e6));
    const long bx = long(extent[0] / bin) + 1, by = long(extent[1] / bin) + 1;
    std::vector<char> filled(size_t(bx) * size_t(by), 0);
    double lo0 = INFINITY, lo1 = INFINITY;
    std::vector<std::array<double, 2>> projected;
    for (const Position& r : receivers) {
      double p0 = 0, p1 = 0;
      for (int a = 0; a < 3; ++a) {
        p0 += (r[a] - mean[a]) * s.axis[0][a];
        p1 += (r[a] - mean[a]) * s.axis[1][a];
      }
      projected.push_back({p0, p1});
      lo0 = std::min(lo0, p0);
      lo1 = std::min(lo1, p1);
    }
    long count = 0;
    for (const std::array<double, 2>& p : projected) {
      const long i = std::min(bx - 1, long((p[0] - lo0) / bin)), j = std::min(by - 1, long((p[1] - lo1) / bin));
      char& cell = filled[size_t(j) * size_t(bx) + size_t(i)];
      if (!cell) cell = 1, ++count;
    }
    if (double(count) < 0.5 * double(bx) * double(by)) long_axes = 1;
  }
  s.dense_axes = long_axes;
  return s;
}

DataPhaseFilter choose_data_phase_filter(const ReceiverSpread& spread) {
  if (spread.dense_axes >= 2) return DataPhaseFilter::full;
  if (spread.dense_axes == 1) return DataPhaseFilter::half;
  return DataPhaseFilter::none;
}

std::vector<Position> acquisition_midpoints(const std::vector<Position>& sources,
                                            const std::vector<const std::vector<Position>*>& receivers,
                                            size_t limit) {
  if (receivers.size() != sources.size())
    throw std::invalid_argument("acquisition_midpoints: one spread per source");
  size_t pairs = 0;
  for (const std::vector<Position>* r : receivers) pairs += r->size();
  const size_t stride = std::max<size_t>(1, (pairs + limit - 1) / std::max<size_t>(limit, 1));
  std::vector<Position> mid;
  for (size_t s = 0; s < sources.size(); s += stride)
    for (const Position& r : *receivers[s])
      mid.push_back({0.5 * (sources[s][0] + r[0]), 0.5 * (sources[s][1] + r[1]),
                     0.5 * (sources[s][2] + r[2])});
  // Pairs sharing a midpoint (regular grids make many) are one point of the cloud: its spacing is
  // that of distinct midpoints.
  std::sort(mid.begin(), mid.end());
  mid.erase(std::unique(mid.begin(), mid.end(),
                        [](const Position& a, const Position& b) { return distance(a, b) < 1e-3; }),
            mid.end());
  return mid;
}

int acquisition_dense_dims(const std::vector<Position>& midpoints, double velocity, double f0,
                           ReceiverSpread* spread) {
  const ReceiverSpread s = describe_receiver_spread(midpoints, velocity, f0, 1.0);
  if (spread) *spread = s;
  return s.dense_axes;
}

double automatic_data_phase_order(int dense_dims) {
  // Halfway between a point's order 2 and a reflector's d / 2 only where that leaves both within
  // 45 degrees of zero phase (d = 2): each image's strongest lobe keeps its sign and its place.
  // With one dense direction halfway is 67.5 degrees off both (a flat reflector imaged 1.3 cells
  // off, negative; a dipping one 1.5 cells), with none 90 (a doublet each): the reflector's own
  // order then, which images a point in place but 135 or 180 degrees off (docs/rtm.md, 6a).
  if (dense_dims >= 2) return 1.5;
  return dense_dims == 1 ? 0.5 : 0.0;
}

std::string describe(const ReceiverSpread& s, const char* noun) {
  const char* kind = s.dense_axes >= 2 ? "areal" : s.dense_axes == 1 ? "line" : "points";
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: %d %s(s) %.3g m apart (median nearest neighbour; dense below half the "
                "dominant wavelength %.3g m), extents %.3g x %.3g x %.3g m along the principal axes",
                kind, s.receivers, noun, s.spacing, s.wavelength, s.extent[0], s.extent[1], s.extent[2]);
  return text;
}

void apply_data_phase_filter(std::vector<float>& traces, int nrec, int nt, double dt, double order,
                             double f0) {
  if (order == 0) return;
  if (traces.size() != size_t(nrec) * size_t(nt))
    throw std::invalid_argument("apply_data_phase_filter: traces must be [nrec][nt]");
  if (!(dt > 0) || !(f0 > 0)) throw std::invalid_argument("apply_data_phase_filter: dt, f0 > 0");
  size_t n = 1;
  while (n < 2 * size_t(nt)) n <<= 1; // zero padding keeps the filter's tails from wrapping round
  const size_t nk = n / 2 + 1;        // a real trace's spectrum: the bins 0 .. n/2
  // H(omega) = (|omega| / omega0)^order exp(-i order pi/2 sign(omega)) = (-i omega / omega0)^order,
  // the principal power: with the forward transform exp(-i omega t), d/dt is i omega. Hermitian,
  // H(-omega) = conj H(omega), so the filtered trace is real: its bins 0 .. n/2 say it all.
  std::vector<std::complex<double>> response(nk);
  const double omega0 = 2 * M_PI * f0;
  for (size_t k = 0; k < nk; ++k) {
    const double omega = 2 * M_PI * double(k) / (double(n) * dt);
    const double gain = std::pow(omega / omega0, order);
    response[k] = std::polar(gain, k == 0 ? 0.0 : -order * M_PI / 2);
  }
  // Nyquist: a real signal's bin must stay real; keep the real part (its cosine).
  response[n / 2] = std::complex<double>(response[n / 2].real(), 0.0);
  // Plans on scratch arrays, executed on each thread's own (FFTW_UNALIGNED: any std::vector).
  std::vector<double> samples(n);
  std::vector<std::complex<double>> spectrum(nk);
  auto* bins = reinterpret_cast<fftw_complex*>(spectrum.data()); // std::complex: FFTW's layout
  const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
  const FftwPlan forward("data phase filter", [&] {
    return fftw_plan_dft_r2c_1d(int(n), samples.data(), bins, flags);
  });
  const FftwPlan inverse("data phase filter", [&] {
    return fftw_plan_dft_c2r_1d(int(n), bins, samples.data(), flags);
  });
#pragma omp parallel for schedule(dynamic, 16) firstprivate(samples, spectrum)
  for (int r = 0; r < nrec; ++r) {
    float* trace = traces.data() + size_t(r) * size_t(nt);
    std::copy(trace, trace + nt, samples.begin());
    std::fill(samples.begin() + nt, samples.end(), 0.0);
    auto* own = reinterpret_cast<fftw_complex*>(spectrum.data());
    fftw_execute_dft_r2c(forward.get(), samples.data(), own);
    for (size_t k = 0; k < nk; ++k) spectrum[k] *= response[k];
    fftw_execute_dft_c2r(inverse.get(), own, samples.data()); // unnormalised: n times the trace
    for (int t = 0; t < nt; ++t) trace[t] = float(samples[size_t(t)] / double(n));
  }
}

} // namespace rtm
