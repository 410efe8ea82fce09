// One trace of a point source in a homogeneous medium, for the tests that measure what the
// rounding of v2dt2 to half does to a seismogram (tests/test_half_v2dt2.cpp and its GPU part).
// Header-only; any backend's Wavefield runs it.
#pragma once

#include <memory>
#include <vector>

#include "solvers/contracts/propagator.h"
#include "solvers/contracts/wavefield.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/wavelet.h"

namespace rtm::test {

// The bench's point medium on a small grid: 2000 m/s, 10 m cells, the drivers' CFL step, a
// 16 Hz Ricker (5 cells per shortest wavelength) in the centre, the receiver 15 cells away along
// x. 110 steps: the direct wave has passed the receiver before the first reflection (from the
// face behind the receiver, 33 cells of path) arrives.
struct PointTraceCase {
  static constexpr int kN = 48, kSteps = 110, kOffset = 15;
  static constexpr double kH = 10.0, kV = 2000.0;
  double dt = choose_dt(0.0, kV, kH, kH, kH);
  double f0 = kV / (5.0 * kH * kRickerFmaxOverF0);
  float v2dt2 = float(kV * kV * dt * dt);
  double travel_time() const { return kOffset * kH / kV; }

  // The setup with every v2dt2 equal to `value`.
  PropagatorSetup setup(float value) const {
    PropagatorSetup s;
    s.layout = make_layout(kN, kN, kN);
    s.weights = make_laplacian_weights(kH, kH, kH);
    s.v2dt2.assign(size_t(s.layout.interior_cells()), value);
    return s;
  }
  // inject, step, record; one value per step. Injection scales the wavelet by the field's own
  // v2dt2 (PointSet::inject): `source_factor` corrects that, so that a field holding a rounded
  // v2dt2 injects what one holding the exact value does, as half_v2dt2 does (its injection reads
  // the float model; only its step reads the half copy).
  std::vector<double> trace(Wavefield& field, double source_factor = 1.0) const {
    const int c = kN / 2;
    const auto source = field.add_points({point_at_cell(c, c, c)}, kSteps);
    const auto receiver = field.add_points({point_at_cell(c + kOffset, c, c)}, kSteps);
    source->upload_series(ricker_wavelet(kSteps, dt, f0, default_ricker_delay(f0)));
    const float scale = float(source_factor / (kH * kH * kH));
    for (int t = 0; t < kSteps; ++t) {
      source->inject(t, scale);
      field.step();
      receiver->record(t);
    }
    const std::vector<float> recorded = receiver->download_series();
    return std::vector<double>(recorded.begin(), recorded.end());
  }
};

} // namespace rtm::test
