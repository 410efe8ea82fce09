#include "solvers/drivers/demo.h"

#include <algorithm>

#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/smoothing.h"

namespace rtm {

DemoSetup default_demo_setup(const std::string& backend) {
  DemoSetup s;
  if (backend == "cuda") {
    s.n = 256;
    s.shots_x = 4;
    s.shots_y = 3;
    // 37.5 m apart, still dense for the phase filter (below half the 150 m wavelength): 86 x 43
    // receivers keep the shot file at about 31 MB a shot and the time-dispersion transforms, which
    // run on the host, short.
    s.receiver_step = 3;
  }
  return s;
}

DemoSetup scaled_down(const DemoSetup& setup) {
  DemoSetup s = setup;
  s.n = setup.n / 2;
  s.spacing = 2 * setup.spacing;
  s.f0 = setup.f0 / 2;
  s.receiver_step = std::max(1, setup.receiver_step / 2);
  s.smooth = 2 * setup.smooth;
  return s;
}

VelocityModel demo_model(int n, double spacing) {
  ModelShape shape;
  shape.nx = n;
  shape.ny = n / 2;
  shape.nz = n / 2 + n / 4;
  shape.dx = shape.dy = shape.dz = spacing;
  // The gradient under the layers runs from 2380 m/s (at 32% of the depth) to 3600 m/s; the salt
  // top's reflection coefficient is 0.28, the layers' 0.077 and 0.063.
  VelocityModel m = salt_model(shape, 1800, 3600, 4500);
  const double depth = (shape.nz - 1) * shape.dz;
  for (int k = 0; k < m.nz; ++k) {
    const double z = k * m.dz;
    const float layer = z < 0.20 * depth ? 1800.0f : z < 0.32 * depth ? 2100.0f : 0.0f;
    if (layer == 0.0f) continue;
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = layer;
  }
  return m;
}

SlicePosition demo_slice_position(const VelocityModel& model) {
  SlicePosition p;
  // The crossline at a third of the width, between the CPU's shot columns (at 1/6, 3/6 and 5/6)
  // and through the salt; the inline through the middle, between the two shot rows; the depth
  // slice at 42% of the depth, through the salt's top.
  p.x = model.ox + (1.0 / 3.0) * (model.nx - 1) * model.dx;
  p.z = model.oz + 0.42 * (model.nz - 1) * model.dz;
  return p;
}

Acquisition demo_survey(const VelocityModel& model, const DemoSetup& setup) {
  SurveyLayout layout;
  layout.shots_x = setup.shots_x;
  layout.shots_y = setup.shots_y;
  layout.source_depth = layout.receiver_depth = 2 * model.dz;
  layout.receiver_step = setup.receiver_step;
  layout.receiver_grid = true;
  return make_survey(model, layout);
}

ModelingParams demo_modeling_params(const VelocityModel& model, const DemoSetup& setup) {
  ModelingParams params;
  params.backend = setup.backend;
  params.wavelet.f0 = setup.f0;
  params.time_dispersion_transform = setup.time_dispersion_transform;
  // The damping sponge of 20 cells (2-3% reflections, plenty for a picture): in a model this small
  // the layers are three quarters of the grid, and with the C-PML, even run inside the step, the
  // demo's shots took 2.5-3 times as long on the CPU (docs/rtm.md, section 11).
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = 20;
  // Long enough for the reflection off the model's base at the slowest velocity to come back.
  params.record_time = 1.6 * (model.nz * model.dz) / 1800.0 * 1.1;
  return params;
}

MigrationParams demo_migration_params(const VelocityModel& model, const DemoSetup& setup) {
  MigrationParams migration;
  migration.backend = setup.backend;
  migration.boundary.absorber = Absorber::sponge;
  migration.boundary.width = 20;
  migration.reconstruction = setup.reconstruction;
  // No data mute: it would cut the first reflector at every offset beyond a few hundred metres
  // (it arrives within 1.5 / f0 of the direct wave there), leaving it imaged only in patches under
  // the six shots. The direct wave's residue stays in the top of the image instead, which the
  // image's top mute removes: zero down to 13.5% of the model's depth, a half-cosine ramp to 18%;
  // the first reflector lies at 20% (docs/rtm.md, sections 6b and 11).
  migration.direct_wave = DirectWaveRemoval::none;
  const double depth = (model.nz - 1) * model.dz;
  migration.image_mute_depth = 0.135 * depth;
  migration.image_mute_taper = 0.045 * depth;
  return migration;
}

DemoRun run_demo_pipeline(const DemoSetup& setup, std::ostream& log) {
  DemoRun run;
  run.model = demo_model(setup.n, setup.spacing);
  const ModelingParams modeling = demo_modeling_params(run.model, setup);
  run.shots = model_shots(run.model, demo_survey(run.model, setup), modeling, log, &run.modeling);
  run.migration_model = smooth_model(run.model, setup.smooth);
  run.migration = migrate_shots(run.migration_model, run.shots, demo_migration_params(run.model, setup), log,
                                &run.migrating);
  run.focus = image_focus(run.model, run.migration.image);
  return run;
}

} // namespace rtm
