#include "solvers/drivers/angle_gathers.h"

#include <cmath>
#include <complex>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

#include "solvers/drivers/fftw_plan.h"

namespace rtm {

void check_angle_gather_spec(const AngleGatherSpec& spec, const std::string& option) {
  if (spec.angles < 2)
    throw InputError(option + ": expected at least 2 angles, got " + std::to_string(spec.angles));
  if (!(spec.max_degrees > 0 && spec.max_degrees < 90))
    throw InputError(option + ": expected a largest angle above 0 and below 90 degrees, got " +
                     format_number(spec.max_degrees));
}

double angle_degrees(const AngleGatherSpec& spec, int a) {
  return -spec.max_degrees + 2.0 * spec.max_degrees * a / (spec.angles - 1);
}

namespace {

// fftwf_malloc'd storage (the alignment the plans were made for), freed on scope exit.
template <class T>
struct FftwBuffer {
  explicit FftwBuffer(size_t n) : p(static_cast<T*>(fftwf_malloc(sizeof(T) * (n ? n : 1)))) {
    if (!p) throw std::bad_alloc();
  }
  ~FftwBuffer() { fftwf_free(p); }
  FftwBuffer(const FftwBuffer&) = delete;
  FftwBuffer& operator=(const FftwBuffer&) = delete;
  T* p;
};

} // namespace

std::vector<float> angle_gathers(const std::vector<float>& offset, const OffsetGatherLayout& l,
                                 double dz, double dx, double dy, const AngleGatherSpec& spec) {
  if (int64_t(offset.size()) != l.values())
    throw std::invalid_argument("angle_gathers: expected " + std::to_string(l.values()) +
                                " offset-gather values, got " + std::to_string(offset.size()));
  if (spec.angles < 2 || !(spec.max_degrees > 0 && spec.max_degrees < 90) || !(dz > 0) ||
      !(dx > 0) || !(dy > 0))
    throw std::invalid_argument("angle_gathers: angles >= 2, 0 < max < 90 and positive spacings");
  const int nz = l.nz, nlag = l.nlag, na = spec.angles;
  // Twice the depths (even): the slant stack shifts by at most |h| tan(max) along z, and whatever
  // leaves the panel must fall into zeros rather than wrap onto the other end.
  const int nzp = 2 * nz + (2 * nz) % 2;
  const int nk = nzp / 2 + 1;
  const int64_t panels = int64_t(l.axes) * l.ngy * l.ngx;
  std::vector<float> out(size_t(panels * nz * na), 0.0f);

  // Plans made once, on scratch arrays (fftw_plan.h: under the planner's lock); executed on each
  // thread's own buffers of the same alignment (fftwf_malloc), which FFTW's new-array execute
  // functions allow.
  FftwBuffer<float> scratch_real{size_t(nzp)};
  FftwBuffer<fftwf_complex> scratch_spectrum{size_t(nk)};
  const FftwfPlan forward("angle_gathers", [&] {
    return fftwf_plan_dft_r2c_1d(nzp, scratch_real.p, scratch_spectrum.p, FFTW_ESTIMATE);
  });
  const FftwfPlan inverse("angle_gathers", [&] {
    return fftwf_plan_dft_c2r_1d(nzp, scratch_spectrum.p, scratch_real.p, FFTW_ESTIMATE);
  });
  std::vector<double> tangent(static_cast<size_t>(na));
  for (int a = 0; a < na; ++a) tangent[size_t(a)] = std::tan(angle_degrees(spec, a) * M_PI / 180.0);
  const double dkz = 2.0 * M_PI / (nzp * dz);

#pragma omp parallel
  {
    FftwBuffer<float> real{size_t(nzp)};
    FftwBuffer<fftwf_complex> spectrum{size_t(nk)};
    std::vector<std::complex<float>> lagged(size_t(nlag) * nk); // [lag][kz]
#pragma omp for schedule(dynamic)
    for (int64_t p = 0; p < panels; ++p) {
      const int axis = int(p / (int64_t(l.ngy) * l.ngx));
      const double dh = l.lag_step * (axis == 0 ? dx : dy);
      const float* panel = offset.data() + p * nz * nlag; // [z][lag]
      for (int lag = 0; lag < nlag; ++lag) {
        for (int z = 0; z < nz; ++z) real.p[z] = panel[int64_t(z) * nlag + lag];
        for (int z = nz; z < nzp; ++z) real.p[z] = 0.0f;
        fftwf_execute_dft_r2c(forward.get(), real.p, spectrum.p);
        for (int m = 0; m < nk; ++m)
          lagged[size_t(lag) * nk + m] = std::complex<float>(spectrum.p[m][0], spectrum.p[m][1]);
      }
      float* angles = out.data() + p * nz * na; // [z][angle]
      for (int a = 0; a < na; ++a) {
        for (int m = 0; m < nk; ++m) {
          const double kh = -m * dkz * tangent[size_t(a)];
          std::complex<double> sum = 0;
          if (std::abs(kh) * dh <= M_PI) { // sampled by the lags
            // exp(-i kh h) for h = (lag - lags) dh, by a running product from the first lag.
            const std::complex<double> step = std::polar(1.0, -kh * dh);
            std::complex<double> phase = std::polar(1.0, kh * dh * l.lags);
            for (int lag = 0; lag < nlag; ++lag) {
              sum += std::complex<double>(lagged[size_t(lag) * nk + m]) * phase;
              phase *= step;
            }
          }
          spectrum.p[m][0] = float(sum.real());
          spectrum.p[m][1] = float(sum.imag());
        }
        fftwf_execute_dft_c2r(inverse.get(), spectrum.p, real.p);
        for (int z = 0; z < nz; ++z) angles[int64_t(z) * na + a] = real.p[z] / float(nzp);
      }
    }
  }
  return out;
}


} // namespace rtm
