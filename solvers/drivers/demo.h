// The pipeline of `rtm demo` (app/cmd_demo.cpp writes its files and figures): a built-in model,
// shots on a grid over an areal receiver spread, modeling in the true model, migration in the
// smoothed one, and the image's focus on the true interfaces (solvers/drivers/image_focus.h).
// docs/rtm.md, section 11, says why each choice is made.
#pragma once

#include <ostream>

#include "io/figure_spec.h"
#include "io/shot_file.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/image_focus.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/modeling.h"

namespace rtm {

struct DemoSetup {
  int n = 96;            // cells along x; ny = n / 2, nz = 3n / 4
  double spacing = 12.5; // m, all three axes
  double f0 = 12;        // Hz; a scaled-down copy (larger cells) scales it down with the spacing
  int shots_x = 3, shots_y = 2;
  int receiver_step = 2; // cells between receivers along x and y
  double smooth = 150;   // m: the migration model is the true one smoothed over this length
  Reconstruction reconstruction = Reconstruction::automatic;
  bool time_dispersion_transform = true;
  BackendOptions backend;
};

// The demo's setup on a backend ("cpu" or "cuda"): a larger model and more shots on a GPU.
DemoSetup default_demo_setup(const std::string& backend);
// The same model and survey in metres at half the resolution (cells twice as large, f0 halved so
// that a wavelength keeps its 12 cells, receivers 25 m apart as before, smoothing doubled): 1/16 of
// the work, for the tests. Its image is coarser than the demo's, but made the same way.
DemoSetup scaled_down(const DemoSetup& setup);

// Flat reflectors over a salt-like body in a gradient: n x n/2 x 3n/4 cells of `spacing` metres.
VelocityModel demo_model(int n, double spacing);
// Shots on a shots_x x shots_y grid evenly spread over the model and a receiver on every
// receiver_step-th cell of the x-y plane, both two cells deep.
Acquisition demo_survey(const VelocityModel& model, const DemoSetup& setup);
ModelingParams demo_modeling_params(const VelocityModel& model, const DemoSetup& setup);
MigrationParams demo_migration_params(const VelocityModel& model, const DemoSetup& setup);

// The image of the scaled-down demo (scaled_down(default_demo_setup("cpu"))) must put more than
// this share of its energy near the interfaces (tests/test_demo.cpp). Its near cells are 63% of its
// volume (3 cells of 25 m around each interface), so the bar is set well above that: the data
// mute without the image mute scores 0.75 there, the demo's choices 0.997.
constexpr double kDemoFocusThreshold = 0.9;

// Where the demo's figures slice the model: the inline and crossline through the middle, the depth
// slice through the salt's top.
SlicePosition demo_slice_position(const VelocityModel& model);

struct DemoRun {
  VelocityModel model;           // the true model
  VelocityModel migration_model; // smoothed
  ShotFile shots;
  MigrationResult migration;
  ImageFocus focus;              // of migration.image against the true model's interfaces
  RunStats modeling, migrating;
};
DemoRun run_demo_pipeline(const DemoSetup& setup, std::ostream& log);

} // namespace rtm
