// The demo's focus figure (solvers/drivers/image_focus.h) on synthetic images, and a scaled-down
// copy of `rtm demo` (solvers/drivers/demo.h) whose image must be focused on the model's interfaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/demo.h"
#include "solvers/drivers/image_focus.h"
#include "solvers/drivers/image_mute.h"
#include "solvers/drivers/model_builder.h"

namespace rtm {
namespace {

// 20 x 12 x nz cells of 10 m, 2000 m/s above cell 15 (k < 15) and 2600 m/s from it down: R = 13%.
VelocityModel two_layers_of(int nz) {
  ModelShape shape;
  shape.nx = 20;
  shape.ny = 12;
  shape.nz = nz;
  shape.dx = shape.dy = shape.dz = 10;
  VelocityModel m = constant_model(shape, 2000);
  for (int k = 15; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = 2600;
  return m;
}
VelocityModel two_layers() { return two_layers_of(30); }

size_t cell(const VelocityModel& m, int i, int j, int k) {
  return (size_t(k) * m.ny + j) * m.nx + i;
}

TEST(ImageFocus, InterfacesAreBothCellsOfAJumpAndNotAGentleGradient) {
  VelocityModel m = two_layers();
  // A gradient of 0.5% per cell in the upper layer: R = 0.25% per cell, below the 1% threshold.
  for (int k = 0; k < 15; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) m.at(i, j, k) = float(2000 * std::pow(1.005, k));
  const std::vector<uint8_t> marked = interface_cells(m, kFocusMinReflection);
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i)
        EXPECT_EQ(marked[cell(m, i, j, k)], k == 14 || k == 15 ? 1 : 0) << i << "," << j << "," << k;
}

TEST(ImageFocus, NearIsTheCubeOfTheRadiusClippedAtTheEdges) {
  const int nx = 11, ny = 9, nz = 10;
  std::vector<uint8_t> marked(size_t(nx) * ny * nz, 0);
  marked[(size_t(5) * ny + 4) * nx + 5] = 1; // (5, 4, 5)
  marked[(size_t(0) * ny + 0) * nx + 0] = 1; // a corner
  const std::vector<uint8_t> near = cells_near(marked, nx, ny, nz, 3);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const bool centre = std::abs(i - 5) <= 3 && std::abs(j - 4) <= 3 && std::abs(k - 5) <= 3;
        const bool corner = i <= 3 && j <= 3 && k <= 3;
        EXPECT_EQ(near[(size_t(k) * ny + j) * nx + i], centre || corner ? 1 : 0)
            << i << "," << j << "," << k;
      }
  EXPECT_THROW(cells_near(marked, nx, ny, nz, -1), std::invalid_argument);
  EXPECT_THROW(cells_near(marked, nx, ny, nz + 1, 3), std::invalid_argument);
}

TEST(ImageFocus, AnImageOnTheInterfaceScoresOneAndOneAwayFromItZero) {
  const VelocityModel m = two_layers();
  std::vector<float> on(size_t(m.cells()), 0.0f), off(on), edge(on), beyond(on), mixed(on);
  for (int j = 0; j < m.ny; ++j)
    for (int i = 0; i < m.nx; ++i) {
      on[cell(m, i, j, 14)] = 1.0f;
      on[cell(m, i, j, 15)] = -0.5f;
      off[cell(m, i, j, 3)] = 2.0f;   // 11 cells above the interface
      off[cell(m, i, j, 26)] = -1.0f; // 11 cells below
      edge[cell(m, i, j, 11)] = 1.0f;   // exactly 3 cells above cell 14: near
      edge[cell(m, i, j, 18)] = 1.0f;   // exactly 3 cells below cell 15: near
      beyond[cell(m, i, j, 10)] = 1.0f; // 4 cells: not near
      beyond[cell(m, i, j, 19)] = 1.0f;
      mixed[cell(m, i, j, 15)] = 3.0f;  // energy 9 near
      mixed[cell(m, i, j, 0)] = 1.0f;   // energy 1 away
    }
  EXPECT_DOUBLE_EQ(image_focus(m, on).focus, 1.0);
  EXPECT_DOUBLE_EQ(image_focus(m, off).focus, 0.0);
  EXPECT_DOUBLE_EQ(image_focus(m, edge).focus, 1.0);
  EXPECT_DOUBLE_EQ(image_focus(m, beyond).focus, 0.0);
  EXPECT_DOUBLE_EQ(image_focus(m, mixed).focus, 0.9);
  EXPECT_DOUBLE_EQ(image_focus(m, std::vector<float>(on.size(), 0.0f)).focus, 0.0);
  // Cells 11..18 of 30 are near: 8 layers.
  const ImageFocus f = image_focus(m, on);
  EXPECT_DOUBLE_EQ(f.near_share, 8.0 / 30.0);
  EXPECT_EQ(f.interface_cells, 2 * m.nx * m.ny);
  // An even image scores the near cells' share.
  EXPECT_NEAR(image_focus(m, std::vector<float>(on.size(), 1.0f)).focus, 8.0 / 30.0, 1e-12);
  EXPECT_THROW(image_focus(m, std::vector<float>(on.size() - 1, 0.0f)), std::invalid_argument);
}

// The image's top mute: 0 down to the depth, the half-cosine ramp over the taper, 1 below; every
// column alike.
TEST(ImageMute, ZeroAboveTheDepthThenAHalfCosineRamp) {
  const VelocityModel m = two_layers(); // dz = 10 m
  std::vector<float> image(size_t(m.cells()), 2.0f);
  mute_image_top(image, m, 40, 40); // cells 0..4 (0..40 m) muted, 5..7 ramped, 8.. kept
  for (int k = 0; k < m.nz; ++k) {
    const double z = 10.0 * k;
    const double gain = z <= 40 ? 0 : z >= 80 ? 1 : 0.5 - 0.5 * std::cos(M_PI * (z - 40) / 40);
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i)
        EXPECT_NEAR(image[cell(m, i, j, k)], 2.0 * gain, 1e-6) << "cell " << k;
  }
  EXPECT_NEAR(image[cell(m, 3, 4, 6)], 1.0, 1e-6); // halfway down the ramp: half
  // No depth: unchanged; no taper: a hard cut below the depth.
  std::vector<float> kept(size_t(m.cells()), 2.0f), cut(kept);
  mute_image_top(kept, m, 0, 40);
  EXPECT_EQ(kept, std::vector<float>(size_t(m.cells()), 2.0f));
  mute_image_top(cut, m, 40, 0);
  EXPECT_EQ(cut[cell(m, 0, 0, 4)], 0.0f);
  EXPECT_EQ(cut[cell(m, 0, 0, 5)], 2.0f);
  EXPECT_THROW(mute_image_top(cut, m, 40, -1), InputError);
  EXPECT_THROW(mute_image_top(kept, two_layers_of(m.nz - 1), 40, 10), std::invalid_argument);
}

// The demo at half its resolution (48 x 24 x 36 cells of 25 m, f0 = 6 Hz: the same model and survey
// in metres, the same picture in cells), on the CPU: its image must lie on the interfaces, and the
// strongest event of each slice the figure draws (through the middle of the model) must be on one.
TEST(Demo, ScaledDownImageIsFocusedOnTheInterfaces) {
  DemoSetup setup = scaled_down(default_demo_setup("cpu"));
  setup.backend.backend = "cpu";
  std::ostringstream log;
  const DemoRun run = run_demo_pipeline(setup, log);
  const VelocityModel& m = run.model;
  std::printf("scaled-down demo: %dx%dx%d, %zu shots, focus %.3f (near cells %.3f of the volume)\n",
              m.nx, m.ny, m.nz, run.shots.shots.size(), run.focus.focus, run.focus.near_share);
  EXPECT_GT(run.focus.focus, kDemoFocusThreshold);

  const std::vector<uint8_t> near =
      cells_near(interface_cells(m, kFocusMinReflection), m.nx, m.ny, m.nz, kFocusRadius);
  const std::vector<float>& image = run.migration.image;
  struct Peak {
    double value = -1;
    size_t at = 0;
    void take(double v, size_t c) {
      if (std::abs(v) > value) value = std::abs(v), at = c;
    }
  } inline_peak, crossline_peak, depth_peak;
  const SliceCells slices = locate_slices(demo_slice_position(m), m); // as the figure's
  const int ic = slices.i, jc = slices.j, kc = slices.k;
  for (int k = 0; k < m.nz; ++k)
    for (int j = 0; j < m.ny; ++j)
      for (int i = 0; i < m.nx; ++i) {
        const size_t c = cell(m, i, j, k);
        if (j == jc) inline_peak.take(image[c], c);
        if (i == ic) crossline_peak.take(image[c], c);
        if (k == kc) depth_peak.take(image[c], c);
      }
  EXPECT_TRUE(near[inline_peak.at]) << "inline's strongest cell " << inline_peak.at;
  EXPECT_TRUE(near[crossline_peak.at]) << "crossline's strongest cell " << crossline_peak.at;
  EXPECT_TRUE(near[depth_peak.at]) << "depth slice's strongest cell " << depth_peak.at;
}

// The pipeline's wiring on a model small enough for the sanitized stage of .ci/run, which leaves the
// scaled-down demo above to the plain suite (its focus bar means something only at its size): 16 x 8
// x 12 cells of 50 m, f0 = 3 Hz (still 12 cells a wavelength), two shots. Each shot of the grid gives
// a gather with every receiver of the spread, the migration model is the smoothed one, and the image
// lies on the model's grid, finite, zero down to the image mute's depth and not below its ramp.
TEST(Demo, PipelineWiresEachStepOnATinyModel) {
  DemoSetup setup = default_demo_setup("cpu");
  setup.backend.backend = "cpu";
  setup.n = 16;
  setup.spacing = 50;
  setup.f0 = 3;
  setup.shots_x = 2;
  setup.shots_y = 1;
  setup.receiver_step = 1;
  setup.smooth = 300;
  std::ostringstream log;
  const DemoRun run = run_demo_pipeline(setup, log);
  const VelocityModel& m = run.model;
  ASSERT_EQ(m.nx, 16);
  ASSERT_EQ(m.cells(), run.migration_model.cells());
  EXPECT_NE(m.vp, run.migration_model.vp) << "the migration model is not smoothed";

  const size_t receivers = demo_survey(m, setup).receivers.size();
  ASSERT_EQ(receivers, size_t(m.nx) * size_t(m.ny));
  ASSERT_EQ(run.shots.shots.size(), 2u);
  for (const ShotGather& g : run.shots.shots) {
    EXPECT_EQ(run.shots.receivers_of(g).size(), receivers);
    EXPECT_EQ(g.data.size(), receivers * size_t(run.shots.nt));
  }

  const std::vector<float>& image = run.migration.image;
  ASSERT_EQ(image.size(), size_t(m.cells()));
  const MigrationParams params = demo_migration_params(m, setup);
  double above = 0, below = 0;
  for (int k = 0; k < m.nz; ++k)
    for (int c = 0; c < m.nx * m.ny; ++c) {
      const float v = image[size_t(k) * m.nx * m.ny + c];
      ASSERT_TRUE(std::isfinite(v)) << "cell " << c << " of level " << k;
      if (k * m.dz <= params.image_mute_depth) above = std::max(above, double(std::abs(v)));
      if (k * m.dz >= params.image_mute_depth + params.image_mute_taper)
        below = std::max(below, double(std::abs(v)));
    }
  EXPECT_EQ(above, 0.0) << "the image mute left something above " << params.image_mute_depth << " m";
  EXPECT_GT(below, 0.0) << "nothing imaged below the image mute";
  EXPECT_GT(run.focus.focus, 0.0);
  EXPECT_LE(run.focus.focus, 1.0);
}

} // namespace
} // namespace rtm
