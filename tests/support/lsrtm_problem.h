// The least-squares RTM problem of tests/test_lsrtm.cpp and tests/test_lsrtm_gpu.cpp: Born data of
// a known perturbation m_true in a constant background, modelled by the operator LSRTM inverts.
#pragma once

#include <cmath>
#include <sstream>
#include <vector>

#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/lsrtm.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"

namespace rtm::test {

// The problem: a 20 x 8 x 16 model of 10 m cells at 2000 m/s; m_true a flat reflector at 100 m
// across the middle three quarters and a point scatterer at 60 m; three shots and a line of
// receivers 20 m deep; 0.2 s of Born data at 20 Hz. The operator pair of the adjoint test: the sponge,
// imaging every step, boundary saving in float32, no mute (Born data have no direct wave).
struct Problem {
  VelocityModel background;
  std::vector<float> truth;
  ShotFile data;
  LsrtmParams params;
};

inline const Problem& problem() {
  static const Problem p = [] {
    Problem q;
    const ModelShape shape{20, 8, 16, 10, 10, 10};
    q.background = constant_model(shape, 2000);
    q.truth.assign(size_t(q.background.cells()), 0.0f);
    auto cell = [&](int x, int y, int z) -> float& {
      return q.truth[(size_t(z) * shape.ny + size_t(y)) * shape.nx + size_t(x)];
    };
    for (int y = 0; y < shape.ny; ++y)
      for (int x = 3; x < 18; ++x) cell(x, y, 10) = 1.0f;
    cell(10, 4, 6) = 2.0f;
    MigrationParams& m = q.params.migration;
    m.backend.backend = "cpu";
    m.boundary.absorber = Absorber::sponge;
    m.boundary.width = 5; // reflects, but the data are the operator's own: that is all it needs
    m.imaging_interval = 1;
    m.reconstruction = Reconstruction::boundary;
    m.direct_wave = DirectWaveRemoval::none;
    m.data_phase_filter = DataPhaseFilter::none;
    q.params.iterations = 10;
    ModelingParams modeling;
    modeling.backend.backend = "cpu";
    modeling.wavelet.f0 = 20;
    modeling.boundary = m.boundary;
    modeling.record_time = 0.2;
    modeling.time_dispersion_transform = false;
    std::ostringstream log;
    const ShotFile geometry =
        model_shots(q.background, default_line_survey(q.background, 3, 20.0, 1), modeling, log);
    q.data = born_shot_file(q.background, geometry, m, q.truth, log);
    return q;
  }();
  return p;
}

// cos of the angle between two volumes: the correlation a scale factor does not change.
inline double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

} // namespace rtm::test
