#include "solvers/drivers/time_dispersion.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include "solvers/drivers/fftw_plan.h"

namespace rtm {
namespace {

using complex = std::complex<double>;

// The frequencies of the output grid (bins k = 0 .. N/2 of the padded length N) and where each
// reads the input's spectrum: theta = the warped w dt. Bins the transform leaves empty (the
// inverse's W dt >= 2) are not listed.
struct WarpedBins {
  std::vector<int> k;
  std::vector<double> theta;
  std::vector<double> weight; // 1/N for k = 0 and N/2, 2/N otherwise: a real signal's two halves
};

WarpedBins warped_bins(int n_padded, TimeDispersion direction) {
  WarpedBins bins;
  for (int k = 0; k <= n_padded / 2; ++k) {
    const double w_dt = 2.0 * M_PI * k / n_padded;
    double theta;
    if (direction == TimeDispersion::add) {
      theta = 2.0 * std::sin(0.5 * w_dt);
    } else {
      if (w_dt >= 2.0) break; // beyond what the time stepping reaches: no content to recover
      theta = 2.0 * std::asin(0.5 * w_dt);
    }
    bins.k.push_back(k);
    bins.theta.push_back(theta);
    bins.weight.push_back((k == 0 || 2 * k == n_padded ? 1.0 : 2.0) / n_padded);
  }
  return bins;
}

} // namespace

int time_dispersion_padded_length(int nt) {
  if (nt < 1) throw std::invalid_argument("time-dispersion transform: nt must be >= 1");
  int n = 2;
  while (n < 2 * nt) n *= 2;
  return n;
}

std::vector<double> time_dispersion_direct(const std::vector<double>& x, TimeDispersion direction) {
  const int nt = int(x.size());
  const int n_padded = time_dispersion_padded_length(nt);
  const WarpedBins bins = warped_bins(n_padded, direction);
  std::vector<complex> unit(static_cast<size_t>(n_padded)); // exp(2 pi i j / N), exact for every k m mod N
  for (int j = 0; j < n_padded; ++j) unit[size_t(j)] = std::polar(1.0, 2.0 * M_PI * j / n_padded);
  std::vector<double> y(size_t(nt), 0.0);
  for (size_t b = 0; b < bins.k.size(); ++b) {
    // X(theta) = sum_n x[n] exp(-i theta n), the input's spectrum where bin k reads it.
    const complex step = std::polar(1.0, -bins.theta[b]);
    complex z = 1.0, spectrum = 0.0;
    for (int n = 0; n < nt; ++n) {
      spectrum += x[size_t(n)] * z;
      z *= step;
    }
    const long long k = bins.k[b];
    for (int m = 0; m < nt; ++m)
      y[size_t(m)] += bins.weight[b] * (spectrum * unit[size_t((k * m) % n_padded)]).real();
  }
  return y;
}

std::vector<float> time_dispersion_transformed(const std::vector<float>& trace,
                                               TimeDispersion direction) {
  const std::vector<double> out =
      time_dispersion_direct(std::vector<double>(trace.begin(), trace.end()), direction);
  return std::vector<float>(out.begin(), out.end());
}

TimeDispersionTransform::TimeDispersionTransform(int nt, TimeDispersion direction)
    : nt_(nt), direction_(direction) {
  const int n_padded = time_dispersion_padded_length(nt);
  if (nt > kMaxMatrixSamples) return; // direct evaluation per trace
  const WarpedBins bins = warped_bins(n_padded, direction);
  matrix_.assign(size_t(nt) * size_t(nt), 0.0f);
  // Column n is the transform of the unit impulse at n: its warped spectrum exp(-i theta n) on
  // the bins, taken back to time by one inverse real FFT. The real inverse sums each interior bin
  // twice (with its conjugate) and bins 0 and N/2 once, which is what the weights 2/N and 1/N
  // say: every bin enters with 1/N. A real signal's bin N/2 is real: its real part
  // (Re(X exp(i pi m)) = Re(X) (-1)^m).
  // One plan on scratch arrays, executed on each thread's own (FFTW_UNALIGNED: any std::vector).
  const size_t nk = size_t(n_padded / 2 + 1);
  std::vector<complex> spectrum(nk);
  std::vector<double> column(static_cast<size_t>(n_padded));
  const FftwPlan inverse("time-dispersion transform", [&] {
    return fftw_plan_dft_c2r_1d(n_padded, reinterpret_cast<fftw_complex*>(spectrum.data()),
                                column.data(), FFTW_ESTIMATE | FFTW_UNALIGNED);
  });
  const double scale = 1.0 / n_padded;
#pragma omp parallel for schedule(static) firstprivate(spectrum, column)
  for (int n = 0; n < nt; ++n) {
    std::fill(spectrum.begin(), spectrum.end(), complex(0.0));
    for (size_t b = 0; b < bins.k.size(); ++b)
      spectrum[size_t(bins.k[b])] = scale * std::polar(1.0, -bins.theta[b] * n);
    spectrum[nk - 1].imag(0.0);
    fftw_execute_dft_c2r(inverse.get(), reinterpret_cast<fftw_complex*>(spectrum.data()),
                         column.data());
    for (int m = 0; m < nt; ++m) matrix_[size_t(m) * nt + size_t(n)] = float(column[size_t(m)]);
  }
}

void TimeDispersionTransform::apply(std::vector<float>& traces) const {
  if (traces.size() % size_t(nt_) != 0)
    throw std::invalid_argument("time-dispersion transform: " + std::to_string(traces.size()) +
                                " samples are not whole traces of " + std::to_string(nt_));
  const long long ntraces = static_cast<long long>(traces.size() / size_t(nt_));
  const size_t nt = size_t(nt_);
  if (matrix_.empty()) {
#pragma omp parallel for schedule(dynamic, 1)
    for (long long r = 0; r < ntraces; ++r) {
      float* trace = traces.data() + size_t(r) * nt;
      const std::vector<double> out =
          time_dispersion_direct(std::vector<double>(trace, trace + nt), direction_);
      for (size_t m = 0; m < nt; ++m) trace[m] = float(out[m]);
    }
    return;
  }
  // Blocks of kBlock traces: each matrix element is read once per block and feeds kBlock
  // independent sums (which vectorise). Every trace's sum runs over n in order, so its result
  // does not depend on the blocking or the threads.
  constexpr long long kBlock = 8;
  const long long nblocks = (ntraces + kBlock - 1) / kBlock;
#pragma omp parallel
  {
    std::vector<double> in(nt * kBlock);
#pragma omp for schedule(dynamic, 1)
    for (long long block = 0; block < nblocks; ++block) {
      const long long first = block * kBlock;
      const long long count = std::min(kBlock, ntraces - first);
      std::fill(in.begin(), in.end(), 0.0);
      for (long long j = 0; j < count; ++j)
        for (size_t n = 0; n < nt; ++n) in[n * kBlock + size_t(j)] = traces[size_t(first + j) * nt + n];
      for (size_t m = 0; m < nt; ++m) {
        const float* row = matrix_.data() + m * nt;
        double sum[kBlock] = {};
        for (size_t n = 0; n < nt; ++n) {
          const double a = row[n];
          const double* x = in.data() + n * kBlock;
          for (long long j = 0; j < kBlock; ++j) sum[j] += a * x[j];
        }
        for (long long j = 0; j < count; ++j) traces[size_t(first + j) * nt + m] = float(sum[j]);
      }
    }
  }
}

} // namespace rtm
