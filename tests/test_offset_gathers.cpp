// Subsurface-offset and angle gathers of `rtm migrate --offset-lags` (docs/rtm.md, section 5d):
// the CPU gathers against a direct sum on small random fields; step_both images them as the
// separate calls do; the refusals and the memory estimate; the offset-to-angle transform on
// synthetic panels; and a flat reflector migrated in the true velocity (focused at zero lag, flat
// in angle) and 10% too slow and too fast (curving up and down, against the moveout formula
// z(theta) = z0 sqrt(rho^2 + (rho^2 - 1) tan^2 theta), rho = migration / true velocity).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/array_file.h"
#include "io/figure_source.h"
#include "io/segy_file.h"
#include "io/volume_file.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/offset_gathers.h"
#include "solvers/drivers/angle_gathers.h"
#include "solvers/drivers/gather_datasets.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"

namespace rtm {
namespace {

// ---- the CPU gathers against a direct sum -----------------------------------------------------

struct RandomFields {
  static constexpr int nx = 17, ny = 9, nz = 6;
  Box box{2, 15, 1, 8, 1, 6}; // inside the grid on every side: a shift may leave the box, not the grid
  GridLayout g = make_layout(nx, ny, nz);
  PropagatorSetup setup() const {
    PropagatorSetup p;
    p.layout = g;
    p.weights = make_laplacian_weights(10, 10, 10);
    p.v2dt2.assign(size_t(nx) * ny * nz, 0.1f);
    return p;
  }
  std::vector<float> random(unsigned seed) const {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> f(size_t(g.size), 0.0f);
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) f[size_t(g.index(i, j, k))] = u(rng);
    return f;
  }
  bool in_box(int i, int j) const { return i >= box.x0 && i < box.x1 && j >= box.y0 && j < box.y1; }
};

TEST(OffsetGathers, MatchADirectSumOnRandomFields) {
  const RandomFields f;
  OffsetGatherSpec spec;
  spec.lags = 3;
  spec.lag_step = 2;
  spec.stride_x = 4;
  spec.stride_y = 3;
  CpuShotFields fields(f.setup());
  fields.allocate_image(f.box);
  fields.allocate_offset_gathers(spec);
  const OffsetGatherLayout l = fields.gather_layout();
  EXPECT_EQ(l.ngx, 4); // x = 2, 6, 10, 14 of 2..14
  EXPECT_EQ(l.ngy, 3); // y = 1, 4, 7 of 1..7
  EXPECT_EQ(l.nlag, 7);
  EXPECT_EQ(l.axes, 2);
  // Two imaging steps with other fields and weights: the gathers sum them.
  const float weights[2] = {1.5f, -0.25f};
  std::vector<std::vector<float>> s(2), r(2);
  for (int step = 0; step < 2; ++step) {
    s[size_t(step)] = f.random(100 + step);
    r[size_t(step)] = f.random(200 + step);
    fields.source().set_state(s[size_t(step)], s[size_t(step)]);
    fields.receiver().set_state(r[size_t(step)], r[size_t(step)]);
    fields.accumulate_image(weights[step]);
  }
  const std::vector<float> got = fields.download_offset_gathers();
  ASSERT_EQ(int64_t(got.size()), l.values());
  double worst = 0, largest = 0;
  int zeros = 0;
  for (int axis = 0; axis < 2; ++axis)
    for (int gy = 0; gy < l.ngy; ++gy)
      for (int gx = 0; gx < l.ngx; ++gx)
        for (int z = 0; z < l.nz; ++z)
          for (int lag = 0; lag < l.nlag; ++lag) {
            const int i = f.box.x0 + gx * spec.stride_x, j = f.box.y0 + gy * spec.stride_y;
            const int k = f.box.z0 + z, h = (lag - spec.lags) * spec.lag_step;
            const int hx = axis == 0 ? h : 0, hy = axis == 1 ? h : 0;
            double expected = 0;
            if (f.in_box(i - hx, j - hy) && f.in_box(i + hx, j + hy))
              for (int step = 0; step < 2; ++step)
                expected += double(weights[step]) *
                            s[size_t(step)][size_t(f.g.index(i - hx, j - hy, k))] *
                            r[size_t(step)][size_t(f.g.index(i + hx, j + hy, k))];
            else
              ++zeros;
            const float value = got[size_t(l.index(axis, gy, gx, z, lag))];
            if (expected == 0) {
              EXPECT_EQ(value, 0.0f);
            }
            worst = std::max(worst, std::abs(value - expected));
            largest = std::max(largest, std::abs(expected));
          }
  std::printf("offset gathers against a direct sum: largest |difference| %.2e of %.2e; %d values "
              "with a shifted cell outside the box\n", worst, largest, zeros);
  EXPECT_GT(zeros, 0);
  EXPECT_LT(worst, 1e-6 * largest);
  // The zero lag of the x axis is the raw image (cross-correlation) at the gathers' positions.
  const std::vector<float> image = fields.download_image();
  for (int gx = 0; gx < l.ngx; ++gx)
    for (int z = 0; z < l.nz; ++z) {
      const size_t d = (size_t(z) * f.box.ny() + 0) * f.box.nx() + size_t(gx * spec.stride_x);
      EXPECT_FLOAT_EQ(got[size_t(l.index(0, 0, gx, z, spec.lags))], image[d]);
    }
}

TEST(OffsetGathers, OneCellAlongYHasOnlyTheXLags) {
  const RandomFields f;
  Box flat = f.box;
  flat.y1 = flat.y0 + 1;
  OffsetGatherSpec spec;
  spec.lags = 2;
  const OffsetGatherLayout l = offset_gather_layout(flat, spec);
  EXPECT_EQ(l.axes, 1);
  EXPECT_EQ(l.ngy, 1);
  EXPECT_EQ(l.ngx, flat.nx());
  EXPECT_THROW(offset_gather_layout(flat, OffsetGatherSpec{}), std::invalid_argument);
  spec.stride_x = 0;
  EXPECT_THROW(offset_gather_layout(flat, spec), std::invalid_argument);
}

// step_both images the gathers through the separate calls (no fused kernel has them): the same
// values as accumulate_image followed by the two steps.
TEST(OffsetGathers, StepBothImagesThemAsTheSeparateCalls) {
  const test::RtmProblem p = test::layered_problem(24, 10, 20, 6, 60);
  OffsetGatherSpec spec;
  spec.lags = 2;
  spec.stride_x = 5;
  spec.stride_y = 4;
  std::vector<float> gathers[2];
  for (int fused = 0; fused < 2; ++fused) {
    test::ShotPair pair = test::make_shot_pair(p, "cpu");
    pair.fields->allocate_image(p.box);
    pair.fields->allocate_offset_gathers(spec);
    for (int n = 0; n < 30; ++n) {
      pair.source->inject(n, 1.0f);
      pair.S().step();
    }
    // A receiver field that is not zero: the source field's state, shifted by a few cells.
    std::vector<float> prev, cur;
    pair.S().get_state(prev, cur);
    std::rotate(prev.begin(), prev.begin() + 3, prev.end());
    std::rotate(cur.begin(), cur.begin() + 3, cur.end());
    pair.R().set_state(prev, cur);
    for (int n = 0; n < 5; ++n) {
      if (fused) {
        pair.fields->step_both(2.0f);
      } else {
        pair.fields->accumulate_image(2.0f);
        pair.R().step();
        pair.S().step();
      }
    }
    gathers[fused] = pair.fields->download_offset_gathers();
  }
  ASSERT_FALSE(gathers[0].empty());
  EXPECT_EQ(gathers[0], gathers[1]);
  double energy = 0;
  for (float v : gathers[0]) energy += double(v) * v;
  EXPECT_GT(energy, 0);
}

TEST(OffsetGathers, RefusedWhereTheRunCannotMakeThem) {
  MigrationParams params;
  EXPECT_NO_THROW(check_offset_gathers(params, Physics::tti, 4, true)); // no gathers: nothing to refuse
  params.offset_gathers.lags = 5;
  EXPECT_NO_THROW(check_offset_gathers(params, Physics::acoustic, 1, false));
  auto message = [&](Physics physics, int ranks, bool resume) {
    try {
      check_offset_gathers(params, physics, ranks, resume);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const std::string& m : {message(Physics::tti, 1, false), message(Physics::acoustic, 2, false),
                               message(Physics::acoustic, 1, true)})
    EXPECT_NE(m.find("--offset-lags 5"), std::string::npos) << m;
  EXPECT_NE(message(Physics::acoustic, 2, false).find("--ranks-per-shot 2"), std::string::npos);
  EXPECT_NE(message(Physics::acoustic, 1, true).find("--resume"), std::string::npos);
  // The physics row's refusal (solvers/contracts/physics.h), worded as before it was a row.
  EXPECT_EQ(message(Physics::tti, 1, false),
            "--offset-lags 5 is not offered with --physics tti (the TTI fields have no offset "
            "gathers yet); leave --offset-lags out");
}

TEST(OffsetGathers, CountedInTheMemoryEstimate) {
  RunMemoryPlan plan;
  plan.layout = make_layout(40, 30, 20);
  plan.box = Box{4, 36, 4, 26, 0, 16};
  plan.nt = 100;
  plan.receivers = 10;
  const MemoryEstimate without = estimate_run_memory(plan);
  OffsetGatherSpec spec;
  spec.lags = 10;
  spec.stride_x = spec.stride_y = 4;
  const OffsetGatherLayout l = offset_gather_layout(plan.box, spec);
  plan.offset_gather_values = l.values();
  plan.angle_gather_values = l.values() / l.nlag * 61;
  const MemoryEstimate with = estimate_run_memory(plan);
  EXPECT_EQ(with.device_bytes() - without.device_bytes(), uint64_t(l.bytes()));
  EXPECT_EQ(with.host_bytes() - without.host_bytes(),
            uint64_t(plan.offset_gather_values + plan.angle_gather_values) * sizeof(float));
  EXPECT_EQ(l.values(), int64_t(8) * 6 * 16 * 21 * 2);
}

// ---- the offset-to-angle transform ------------------------------------------------------------

// One panel (one gather, the x lags) of nz depths: I(z, h) = g(z - z0 - h tan(theta0)), a smooth
// band-limited event with slope dz/dh = tan(theta0) through (z0, 0).
struct Panel {
  OffsetGatherLayout layout;
  std::vector<float> values;
};
Panel sloped_event(int nz, int lags, double dz, double dh, double z0, double theta0_degrees,
                   bool lag_zero_only = false) {
  Panel p;
  Box box{0, 1, 0, 1, 0, nz};
  OffsetGatherSpec spec;
  spec.lags = lags;
  p.layout = offset_gather_layout(box, spec);
  p.values.assign(size_t(p.layout.values()), 0.0f);
  const double t = std::tan(theta0_degrees * M_PI / 180.0);
  for (int z = 0; z < nz; ++z)
    for (int lag = 0; lag < p.layout.nlag; ++lag) {
      const int h = lag - lags;
      if (lag_zero_only && h != 0) continue;
      const double u = (z * dz - z0 - h * dh * t) / (3 * dz);
      p.values[size_t(p.layout.index(0, 0, 0, z, lag))] = float((1 - 2 * u * u) * std::exp(-u * u));
    }
  return p;
}

TEST(AngleGathers, AnEventAtZeroLagIsTheSameAtEveryAngle) {
  const int nz = 64;
  const Panel p = sloped_event(nz, 8, 10, 10, 300, 0, true);
  AngleGatherSpec spec;
  spec.angles = 13;
  spec.max_degrees = 60;
  const std::vector<float> a = angle_gathers(p.values, p.layout, 10, 10, 10, spec);
  ASSERT_EQ(a.size(), size_t(nz * spec.angles));
  double worst = 0;
  for (int z = 0; z < nz; ++z)
    for (int k = 0; k < spec.angles; ++k)
      worst = std::max(worst, std::abs(double(a[size_t(z) * spec.angles + k]) -
                                       p.values[size_t(p.layout.index(0, 0, 0, z, 8))]));
  std::printf("an event at zero lag: largest difference across the angles %.2e (peak 1)\n", worst);
  EXPECT_LT(worst, 0.02); // the unsampled k_h beyond the lags' Nyquist is the only loss
}

TEST(AngleGathers, ASlopedEventStacksAtItsAngleAndDepth) {
  const int nz = 80, lags = 10;
  AngleGatherSpec spec;
  spec.angles = 25; // 5 degree steps
  spec.max_degrees = 60;
  for (double theta0 : {-30.0, 20.0}) {
    const Panel p = sloped_event(nz, lags, 10, 10, 400, theta0);
    const std::vector<float> a = angle_gathers(p.values, p.layout, 10, 10, 10, spec);
    int best_z = 0, best_a = 0;
    for (int z = 0; z < nz; ++z)
      for (int k = 0; k < spec.angles; ++k)
        if (a[size_t(z) * spec.angles + k] > a[size_t(best_z) * spec.angles + best_a])
          best_z = z, best_a = k;
    std::printf("an event of slope tan(%g deg): largest at %g deg, depth %d cells (expected 40), "
                "value %.2f of %d lags\n", theta0, angle_degrees(spec, best_a), best_z,
                a[size_t(best_z) * spec.angles + best_a], 2 * lags + 1);
    EXPECT_NEAR(angle_degrees(spec, best_a), theta0, 0.1);
    EXPECT_NEAR(best_z, 40, 1);
    EXPECT_GT(a[size_t(best_z) * spec.angles + best_a], 0.8 * (2 * lags + 1));
  }
}

// ---- the output file and the exports ----------------------------------------------------------

// The arrays of gather_arrays written by write_volumes and read back by read_array with their axes;
// exported to NumPy (the shape in the header) and SEG-Y (one trace per position and lag, read here
// byte by byte: big-endian headers and IEEE samples).
TEST(GatherFiles, WrittenWithTheirAxesAndExported) {
  const std::string dir = ::testing::TempDir() + "gather_files_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  VelocityModel grid;
  grid.nx = 9, grid.ny = 4, grid.nz = 5, grid.dx = 10, grid.dy = 12.5, grid.dz = 8;
  grid.ox = 100, grid.oy = 50;
  OffsetGatherSpec spec;
  spec.lags = 2;
  spec.lag_step = 3;
  spec.stride_x = 4;
  spec.stride_y = 2;
  const OffsetGatherLayout l = offset_gather_layout(Box{0, 9, 0, 4, 0, 5}, spec);
  std::vector<float> offsets(size_t(l.values()));
  for (size_t n = 0; n < offsets.size(); ++n) offsets[n] = float(n) * 0.5f - 3.0f;
  const GatherArrays out = gather_arrays(grid, l, offsets, {}, AngleGatherSpec{}, true);
  ASSERT_EQ(out.arrays.size(), 2u); // x and y lags
  const std::vector<float> image(size_t(grid.cells()), 1.0f);
  const std::string path = dir + "/gathers.h5";
  write_volumes(path, grid, {{"image", &image, ""}}, {}, out.arrays);
  ArrayInfo info;
  const std::vector<float> y = read_array(path, "offset_gathers_y", info);
  EXPECT_EQ(info.dims, (std::vector<long long>{2, 3, 5, 5}));
  EXPECT_EQ(info.axes, (std::vector<std::string>{"y", "x", "z", "h"}));
  EXPECT_EQ(info.spacing, (std::vector<double>{25, 40, 8, 37.5}));
  EXPECT_EQ(info.origin, (std::vector<double>{50, 100, 0, -75}));
  EXPECT_EQ(y, std::vector<float>(offsets.begin() + l.per_axis(), offsets.end()));
  EXPECT_THROW(read_array(path, "angle_gathers_x", info), InputError);

  // rtm plot's panel: the gather nearest x = 190, y = 70 m is (gx 2, gy 1) at (180, 75) m.
  PlotRequest request;
  request.dataset = "offset_gathers_y";
  request.slice = "x=190,y=70";
  const Figure figure = plot_figure(path, request);
  ASSERT_EQ(figure.views.size(), 1u);
  const View& panel = figure.views[0];
  EXPECT_NE(figure.title.find("at x = 180, y = 75 m"), std::string::npos) << figure.title;
  EXPECT_EQ(panel.columns, 5);
  EXPECT_EQ(panel.rows, 5);
  EXPECT_DOUBLE_EQ(panel.left, -75 - 18.75);
  EXPECT_DOUBLE_EQ(panel.bottom, 36);
  EXPECT_EQ(panel.values, std::vector<float>(y.begin() + (1 * 3 + 2) * 25, y.begin() + (1 * 3 + 3) * 25));
  request.slice = "x=190,z=8";
  EXPECT_THROW(plot_figure(path, request), InputError);
  request.slice = "x=900";
  EXPECT_THROW(plot_figure(path, request), InputError);

  write_npy_array(dir + "/y.npy", y, info.dims);
  std::ifstream npy(dir + "/y.npy", std::ios::binary);
  std::string header(128, '\0');
  npy.read(&header[0], 128);
  EXPECT_NE(header.find("'shape': (2, 3, 5, 5)"), std::string::npos) << header;

  if (!segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  write_segy_gathers(dir + "/y.sgy", info, y, "offset_gathers_y");
  std::ifstream segy(dir + "/y.sgy", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(segy)), std::istreambuf_iterator<char>());
  const size_t trace_bytes = 240 + 4 * 5, traces = 2 * 3 * 5;
  ASSERT_EQ(bytes.size(), 3600 + traces * trace_bytes);
  auto int32_at = [&](size_t at) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v = (v << 8) | uint8_t(bytes[at + size_t(b)]);
    return int32_t(v);
  };
  auto float_at = [&](size_t at) {
    const uint32_t v = uint32_t(int32_at(at));
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  };
  const size_t t = (1 * 3 + 2) * 5 + 4; // gather y 1, gather x 2, lag 4 (h = +75 m)
  const size_t at = 3600 + t * trace_bytes;
  EXPECT_EQ(int32_at(at + 188), 2); // inline = gather y + 1
  EXPECT_EQ(int32_at(at + 192), 3); // crossline = gather x + 1
  EXPECT_EQ(int32_at(at + 36), 75); // offset: the lag in metres
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(float_at(at + 240 + 4 * size_t(k)), y[((size_t(1) * 3 + 2) * 5 + size_t(k)) * 5 + 4]);
  std::filesystem::remove_all(dir);
}

// ---- a flat reflector ---------------------------------------------------------------------------

// 2000 m/s over 2600 m/s at 280 m, 91 x 1 x 40 cells of 10 m, a thin sponge (the crossline's
// single cell between two layers: a line of the 3-D code whose kinematics in the x-z plane are
// the 2-D ones). One shot over the centre at 20 m, a receiver on every cell at 20 m, 20 Hz, 0.45 s.
// One shot images each point at one angle (half the source-receiver offset over the depth); the
// gathers of a flat reflector are the same at every position for the same angle, so the gathers
// summed over the positions cover the angles the spread illuminates (to about 35 degrees).
constexpr int kSponge = 10;
constexpr double kTrueVelocity = 2000, kReflectorDepth = 280, kDatum = 20, kMuteDepth = 140;

struct FlatSurvey {
  VelocityModel truth;
  ShotFile shots;
};

const FlatSurvey& flat_survey() {
  static const FlatSurvey survey = [] {
    FlatSurvey s;
    const ModelShape shape{91, 1, 40, 10, 10, 10};
    s.truth = layered_model(shape, {kReflectorDepth}, {kTrueVelocity, 2600});
    ModelingParams params;
    params.backend.backend = "cpu";
    params.wavelet.f0 = 20;
    params.boundary.absorber = Absorber::sponge;
    params.boundary.width = kSponge;
    params.record_time = 0.45;
    std::ostringstream log;
    s.shots = model_shots(s.truth, default_line_survey(s.truth, 1, kDatum, 1), params, log);
    return s;
  }();
  return survey;
}

constexpr int kLags = 10;
AngleGatherSpec flat_angles() {
  AngleGatherSpec a;
  a.angles = 19; // 5 degree steps
  a.max_degrees = 45;
  return a;
}

MigrationResult migrate_flat(double velocity_ratio) {
  const FlatSurvey& s = flat_survey();
  VelocityModel model = constant_model({s.truth.nx, s.truth.ny, s.truth.nz, s.truth.dx, s.truth.dy,
                                        s.truth.dz},
                                       kTrueVelocity * velocity_ratio);
  MigrationParams params;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = kSponge;
  params.reconstruction = Reconstruction::snapshots;
  params.snapshot_precision = RingPrecision::full;
  params.direct_wave_velocity = kTrueVelocity;
  // The top mute the gathers share with the image: down to 140 m, ramped over 30 m more.
  params.image_mute_depth = kMuteDepth;
  params.image_mute_taper = 30;
  params.offset_gathers.lags = kLags;
  params.offset_gathers.stride_x = 2;
  params.make_angle_gathers = true;
  params.angle_gathers = flat_angles();
  std::ostringstream log;
  return migrate_shots(model, s.shots, params, log);
}

// The gathers of axis 0 summed over the positions: [z][lag or angle].
std::vector<double> stacked(const std::vector<float>& gathers, const OffsetGatherLayout& l, int n) {
  std::vector<double> sum(size_t(l.nz) * n, 0.0);
  for (int gx = 0; gx < l.ngx; ++gx)
    for (int z = 0; z < l.nz; ++z)
      for (int c = 0; c < n; ++c)
        sum[size_t(z) * n + c] += gathers[((size_t(gx) * l.nz) + z) * n + c];
  return sum;
}

// The depth (cells from the model's top) of the strongest lobe of column c of a [z][n] panel below
// kShallowest, of
// the sign `sign` (the reflector's wavelet has a strong central lobe), interpolated by a parabola
// through it and its neighbours.
// Picks look within kWindow cells of the depth where the reflector is expected (the raw
// correlation's residue around the sources and receivers, near the top, reaches the larger angles
// through the slant stack: at 45 degrees a lag of h cells reads h cells shallower).
constexpr int kWindow = 5;
// An angle counts as illuminated where its energy around the reflector is at least this part of
// the largest angle's.
constexpr double kIlluminated = 0.2;

// The depth (cells from the model's top) of the strongest lobe of column c of a [z][n] panel
// within kWindow cells of `expected`, of the sign `sign` (the reflector's wavelet has a strong
// central lobe), interpolated by a parabola through it and its neighbours.
double peak_depth(const std::vector<double>& panel, int nz, int n, int c, double sign,
                  double expected) {
  const int first = std::max(1, int(std::lround(expected)) - kWindow);
  const int last = std::min(nz - 2, int(std::lround(expected)) + kWindow);
  int best = first;
  for (int z = first; z <= last; ++z)
    if (sign * panel[size_t(z) * n + c] > sign * panel[size_t(best) * n + c]) best = z;
  const double a = panel[size_t(best - 1) * n + c], b = panel[size_t(best) * n + c],
               d = panel[size_t(best + 1) * n + c];
  const double denominator = a - 2 * b + d;
  return best + (denominator != 0 ? 0.5 * (a - d) / denominator : 0.0);
}

// The sign of the strongest value within kWindow cells of `expected` in column c.
double lobe_sign(const std::vector<double>& panel, int nz, int n, int c, double expected) {
  const int first = std::max(0, int(std::lround(expected)) - kWindow);
  const int last = std::min(nz - 1, int(std::lround(expected)) + kWindow);
  double strongest = 0;
  for (int z = first; z <= last; ++z)
    if (std::abs(panel[size_t(z) * n + c]) > std::abs(strongest)) strongest = panel[size_t(z) * n + c];
  return strongest >= 0 ? 1.0 : -1.0;
}

// The energy of each column within kWindow cells of `expected`, relative to the largest.
std::vector<double> window_energy(const std::vector<double>& panel, int nz, int n, double expected) {
  std::vector<double> e(size_t(n), 0.0);
  const int first = std::max(0, int(std::lround(expected)) - kWindow);
  const int last = std::min(nz - 1, int(std::lround(expected)) + kWindow);
  for (int z = first; z <= last; ++z)
    for (int c = 0; c < n; ++c) e[size_t(c)] += panel[size_t(z) * n + c] * panel[size_t(z) * n + c];
  const double top = *std::max_element(e.begin(), e.end());
  for (double& v : e) v /= top;
  return e;
}

TEST(FlatReflector, TrueVelocityFocusesAtZeroLagAndIsFlatInAngle) {
  const MigrationResult run = migrate_flat(1.0);
  const OffsetGatherLayout& l = run.gather_layout;
  ASSERT_EQ(l.axes, 1);
  const double reflector = kReflectorDepth / 10; // cells
  const std::vector<double> offsets = stacked(run.offset_gathers, l, l.nlag);
  // Energy per lag around the reflector: largest at zero lag, falling away from it.
  const std::vector<double> lag_energy = window_energy(offsets, l.nz, l.nlag, reflector);
  std::printf("true velocity, offset gathers' energy per lag around the reflector / the largest:");
  for (int lag = 0; lag < l.nlag; ++lag) std::printf(" %.3f", lag_energy[size_t(lag)]);
  std::printf("\n");
  EXPECT_EQ(lag_energy[size_t(kLags)], 1.0);
  for (int lag = kLags + 1; lag < l.nlag; ++lag) {
    EXPECT_LE(lag_energy[size_t(lag)], lag_energy[size_t(lag - 1)] + 0.01) << "lag " << lag - kLags;
    EXPECT_LE(lag_energy[size_t(2 * kLags - lag)], lag_energy[size_t(2 * kLags - lag + 1)] + 0.01)
        << "lag " << kLags - lag;
  }
  EXPECT_LT(lag_energy[size_t(kLags + 3)], 0.1);
  EXPECT_LT(lag_energy[size_t(kLags - 3)], 0.1);

  const AngleGatherSpec a = flat_angles();
  const std::vector<double> angles = stacked(run.angle_gathers, l, a.angles);
  const std::vector<double> energy = window_energy(angles, l.nz, a.angles, reflector);
  const int zero = a.angles / 2;
  const double sign = lobe_sign(angles, l.nz, a.angles, zero, reflector);
  const double z_zero = peak_depth(angles, l.nz, a.angles, zero, sign, reflector);
  double lowest = z_zero, highest = z_zero, widest = 0;
  std::printf("true velocity, angle gathers: angle, energy, depth (cells)\n");
  for (int c = 0; c < a.angles; ++c) {
    const double z = peak_depth(angles, l.nz, a.angles, c, sign, z_zero);
    std::printf("  %5.1f  %.3f  %.2f\n", angle_degrees(a, c), energy[size_t(c)], z);
    if (energy[size_t(c)] < kIlluminated) continue;
    widest = std::max(widest, std::abs(angle_degrees(a, c)));
    lowest = std::min(lowest, z), highest = std::max(highest, z);
  }
  std::printf("illuminated to %.0f degrees; depth from %.2f to %.2f cells (interface at %.1f)\n",
              widest, lowest, highest, reflector);
  EXPECT_GE(widest, 30.0);
  EXPECT_LE(highest - lowest, 1.0);
  EXPECT_NEAR(z_zero, reflector, 1.5);
}

// Migrated 10% too slow the reflector rises with angle, 10% too fast it sinks; the measured
// moveout z(theta) - z(0) against z0 [sqrt(rho^2 + (rho^2 - 1) tan^2 theta) - rho], z0 the
// reflector's depth below the sources and receivers, summed over the illuminated angles from 20
// degrees out (where the moveout is larger than the picks' error).
TEST(FlatReflector, WrongVelocitiesCurveTheRightWayByTheFormulasMoveout) {
  const AngleGatherSpec a = flat_angles();
  const int zero = a.angles / 2;
  const double z0 = (kReflectorDepth - kDatum) / 10; // cells
  for (double rho : {0.9, 1.1}) {
    const MigrationResult run = migrate_flat(rho);
    const OffsetGatherLayout& l = run.gather_layout;
    const std::vector<double> angles = stacked(run.angle_gathers, l, a.angles);
    const double expected = kDatum / 10 + rho * z0; // at zero angle
    const double sign = lobe_sign(angles, l.nz, a.angles, zero, expected);
    const double z_zero = peak_depth(angles, l.nz, a.angles, zero, sign, expected);
    const std::vector<double> energy = window_energy(angles, l.nz, a.angles, z_zero);
    std::printf("rho %.1f: zero-angle depth %.2f cells (formula %.2f)\n", rho, z_zero, expected);
    double measured_sum = 0, predicted_sum = 0;
    for (int c = 0; c < a.angles; ++c) {
      const double theta = angle_degrees(a, c) * M_PI / 180;
      const double predicted =
          z0 * (std::sqrt(rho * rho + (rho * rho - 1) * std::tan(theta) * std::tan(theta)) - rho);
      const double z = peak_depth(angles, l.nz, a.angles, c, sign, z_zero);
      std::printf("  %5.1f deg  energy %.3f  moveout %+.2f cells  formula %+.2f\n",
                  angle_degrees(a, c), energy[size_t(c)], z - z_zero, predicted);
      if (energy[size_t(c)] < kIlluminated || std::abs(angle_degrees(a, c)) < 20) continue;
      measured_sum += z - z_zero;
      predicted_sum += predicted;
    }
    std::printf("rho %.1f: summed moveout over the illuminated angles from 20 deg: measured "
                "%+.2f, formula %+.2f cells (ratio %.2f)\n",
                rho, measured_sum, predicted_sum, measured_sum / predicted_sum);
    ASSERT_NE(predicted_sum, 0.0);
    // The right way (the sign of the ratio), and by about the formula's amount.
    EXPECT_GT(measured_sum / predicted_sum, 0.6) << "rho " << rho;
    EXPECT_LT(measured_sum / predicted_sum, 1.4) << "rho " << rho;
    EXPECT_NEAR(z_zero, expected, 1.5) << "rho " << rho;
  }
}

} // namespace
} // namespace rtm
