// The small migration the GPU tests run on more than one path (tests/test_rtm_gpu.cpp,
// tests/test_fused_backward_gpu.cpp): a reflector at 200 m between 2000 and 2700 m/s on a 40x24x36
// grid of 10 m cells, 16 layer cells, an 18 Hz wavelet and 0.4 s of data modelled on the CPU,
// migrated in a constant 2000 m/s model.
#pragma once

#include <ostream>

#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"

namespace rtm::test {

struct TwoLayerMigration {
  VelocityModel truth = layered_model({40, 24, 36, 10, 10, 10}, {200}, {2000, 2700});
  VelocityModel migration = constant_model({40, 24, 36, 10, 10, 10}, 2000);
  ModelingParams modeling; // the CPU backend
  MigrationParams params;  // the backend left to the test

  TwoLayerMigration() {
    modeling.backend.backend = "cpu";
    modeling.wavelet.f0 = 18;
    modeling.boundary.width = 16;
    modeling.record_time = 0.4;
    params.boundary.width = 16;
  }

  // Two shots 30 m deep along a line (default_line_survey), modelled with `modeling`.
  ShotFile line_shots(std::ostream& log) const {
    return model_shots(truth, default_line_survey(truth, 2, 30.0, 1), modeling, log);
  }
};

} // namespace rtm::test
