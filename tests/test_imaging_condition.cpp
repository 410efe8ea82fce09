// The imaging conditions of `rtm migrate --imaging-condition` (docs/rtm.md, section 5c): the
// table and its refusals; each condition on the CPU against a direct computation written here on
// its own (double precision, indices clamped into the box by hand) on small random fields; the
// separated condition's signs on plane waves going down and up; ISIC and the separated condition
// against the plain cross-correlation above a strong velocity contrast (the backscatter); both
// reconstructions alike; the checkpoints' identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/imaging_condition.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"

namespace rtm {
namespace {

// ---- the table --------------------------------------------------------------------------------

TEST(ImagingConditionTable, EveryConditionHasOneRowAndItsName) {
  const std::vector<ImagingCondition> all = {ImagingCondition::cross, ImagingCondition::isic,
                                             ImagingCondition::separated};
  ASSERT_EQ(imaging_condition_table().size(), all.size());
  for (ImagingCondition c : all) {
    const ImagingConditionInfo& row = imaging_condition_info(c);
    EXPECT_EQ(row.id, c);
    EXPECT_EQ(parse_imaging_condition(row.name), c);
  }
  EXPECT_TRUE(imaging_condition_info(ImagingCondition::cross).laplacian_filter);
  EXPECT_FALSE(imaging_condition_info(ImagingCondition::isic).laplacian_filter);
  EXPECT_TRUE(imaging_condition_info(ImagingCondition::separated).uses_previous_level);
}

TEST(ImagingConditionTable, UnknownNamesAndUnsupportedRunsAreRefusedNamingTheOption) {
  try {
    parse_imaging_condition("poynting");
    FAIL() << "an unknown name was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--imaging-condition"), std::string::npos) << message;
    EXPECT_NE(message.find("isic"), std::string::npos) << message;
    EXPECT_NE(message.find("poynting"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(check_imaging_condition(ImagingCondition::cross, Physics::tti, 4));
  for (ImagingCondition c : {ImagingCondition::isic, ImagingCondition::separated}) {
    EXPECT_NO_THROW(check_imaging_condition(c, Physics::acoustic, 1));
    try {
      check_imaging_condition(c, Physics::acoustic, 2);
      FAIL() << "a z-slab split was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--ranks-per-shot 2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(check_imaging_condition(c, Physics::tti, 1), InputError);
  }
}

// ---- each condition against a direct computation ----------------------------------------------

// A grid with unequal spacings and a box that touches the grid's edge on some faces and not on
// others, so that the clamping into the box shows.
struct SmallFields {
  static constexpr int nx = 14, ny = 11, nz = 12;
  static constexpr double hx = 10, hy = 12.5, hz = 8;
  Box box{1, 13, 0, 9, 2, 12};
  GridLayout g = make_layout(nx, ny, nz);
  std::vector<float> s, s_prev, r, r_prev; // padded

  PropagatorSetup setup() const {
    PropagatorSetup p;
    p.layout = g;
    p.weights = make_laplacian_weights(hx, hy, hz);
    p.v2dt2.assign(size_t(nx) * ny * nz, 0.1f);
    return p;
  }
  void fill_random(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::vector<float>* f : {&s, &s_prev, &r, &r_prev}) {
      f->assign(size_t(g.size), 0.0f);
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) (*f)[size_t(g.index(i, j, k))] = u(rng);
    }
  }
  // A field's value at box cell (i, j, k) moved by (di, dj, dk), clamped into the box.
  double at(const std::vector<float>& f, int i, int j, int k, int di, int dj, int dk) const {
    return f[size_t(g.index(std::clamp(i + di, box.x0, box.x1 - 1),
                            std::clamp(j + dj, box.y0, box.y1 - 1),
                            std::clamp(k + dk, box.z0, box.z1 - 1)))];
  }
  // d/dx (axis 0), d/dy, d/dz by the 8th-order first derivative, and the 8th-order Laplacian.
  double derivative(const std::vector<float>& f, int i, int j, int k, int axis) const {
    const double h = axis == 0 ? hx : axis == 1 ? hy : hz;
    double d = 0;
    for (int q = 1; q <= 4; ++q) {
      const int di = axis == 0 ? q : 0, dj = axis == 1 ? q : 0, dk = axis == 2 ? q : 0;
      d += kFirstDerivC[q] / h * (at(f, i, j, k, di, dj, dk) - at(f, i, j, k, -di, -dj, -dk));
    }
    return d;
  }
  double laplacian(const std::vector<float>& f, int i, int j, int k) const {
    double lap = kStencilC[0] * (1 / (hx * hx) + 1 / (hy * hy) + 1 / (hz * hz)) * at(f, i, j, k, 0, 0, 0);
    for (int q = 1; q <= 4; ++q) {
      lap += kStencilC[q] / (hx * hx) * (at(f, i, j, k, q, 0, 0) + at(f, i, j, k, -q, 0, 0));
      lap += kStencilC[q] / (hy * hy) * (at(f, i, j, k, 0, q, 0) + at(f, i, j, k, 0, -q, 0));
      lap += kStencilC[q] / (hz * hz) * (at(f, i, j, k, 0, 0, q) + at(f, i, j, k, 0, 0, -q));
    }
    return lap;
  }
  // -S_t dS/dz up to a positive factor (the vertical Poynting component, z down), from the two
  // levels: the later (previous) minus the earlier, and the derivative of their sum.
  double vertical_flux(const std::vector<float>& cur, const std::vector<float>& prev, int i, int j,
                       int k) const {
    double dz = 0;
    for (int q = 1; q <= 4; ++q)
      dz += kFirstDerivC[q] / hz *
            ((at(cur, i, j, k, 0, 0, q) + at(prev, i, j, k, 0, 0, q)) -
             (at(cur, i, j, k, 0, 0, -q) + at(prev, i, j, k, 0, 0, -q)));
    return -(at(prev, i, j, k, 0, 0, 0) - at(cur, i, j, k, 0, 0, 0)) * dz;
  }
};

// The CPU fields' image after one accumulate_image(weight) from zero, with the test's fields.
std::vector<float> cpu_image(const SmallFields& f, ImagingCondition c, float weight,
                             std::vector<float>* illumination = nullptr) {
  CpuShotFields fields(f.setup());
  fields.source().set_state(f.s_prev, f.s);
  fields.receiver().set_state(f.r_prev, f.r);
  fields.allocate_image(f.box, c);
  fields.accumulate_image(weight);
  if (illumination) *illumination = fields.download_illumination();
  return fields.download_image();
}

double largest(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

TEST(ImagingConditionCells, CrossAndIsicMatchADirectComputation) {
  SmallFields f;
  f.fill_random(11);
  const float weight = 3.0f;
  for (ImagingCondition c : {ImagingCondition::cross, ImagingCondition::isic}) {
    std::vector<float> illumination;
    const std::vector<float> image = cpu_image(f, c, weight, &illumination);
    std::vector<double> expected, expected_illumination;
    for (int k = f.box.z0; k < f.box.z1; ++k)
      for (int j = f.box.y0; j < f.box.y1; ++j)
        for (int i = f.box.x0; i < f.box.x1; ++i) {
          const double sv = f.at(f.s, i, j, k, 0, 0, 0), rv = f.at(f.r, i, j, k, 0, 0, 0);
          double value = sv * rv;
          if (c == ImagingCondition::isic) {
            double grad = 0;
            for (int axis = 0; axis < 3; ++axis)
              grad += f.derivative(f.s, i, j, k, axis) * f.derivative(f.r, i, j, k, axis);
            value = -(rv * f.laplacian(f.s, i, j, k) + grad);
          }
          expected.push_back(weight * value);
          expected_illumination.push_back(weight * sv * sv);
        }
    ASSERT_EQ(image.size(), expected.size());
    const double scale = largest(expected);
    double worst = 0, worst_illumination = 0;
    for (size_t d = 0; d < expected.size(); ++d) {
      worst = std::max(worst, std::abs(image[d] - expected[d]) / scale);
      worst_illumination = std::max(worst_illumination,
                                    std::abs(illumination[d] - expected_illumination[d]) /
                                        largest(expected_illumination));
    }
    std::printf("%s: largest |difference| / largest |value| %.2e (image), %.2e (illumination)\n",
                imaging_condition_info(c).name, worst, worst_illumination);
    EXPECT_LT(worst, 1e-5) << imaging_condition_info(c).name;
    EXPECT_LT(worst_illumination, 1e-6) << imaging_condition_info(c).name;
  }
}

// The derivation of docs/rtm.md, section 5c: ISIC's -R lap S is the wave step's own second time
// difference, -R (S[n+1] - 2 S[n] + S[n-1]) / v2dt2 with S[n+1] made by the CPU step (no source,
// no damping), in the box's interior (4 cells from its faces, where no index is clamped); summed
// over the steps by parts it is (1/v^2) sum_n D_t S D_t R.
TEST(ImagingConditionCells, IsicsLaplacianTermIsTheStepsSecondTimeDifference) {
  SmallFields f;
  f.box = Box{0, f.nx, 0, f.ny, 0, f.nz};
  f.fill_random(13);
  const float v2dt2 = 40.0f; // one step only: stability does not matter, a large term does
  PropagatorSetup setup = f.setup();
  setup.v2dt2.assign(setup.v2dt2.size(), v2dt2);
  CpuShotFields fields(setup);
  fields.source().set_state(f.s_prev, f.s);
  fields.receiver().set_state(f.r_prev, f.r);
  fields.allocate_image(f.box, ImagingCondition::isic);
  fields.accumulate_image(1.0f);
  const std::vector<float> image = fields.download_image();
  fields.source().step();
  std::vector<float> s_now, s_next;
  fields.source().get_state(s_now, s_next);
  std::vector<double> expected, got;
  for (int k = 4; k < f.nz - 4; ++k)
    for (int j = 4; j < f.ny - 4; ++j)
      for (int i = 4; i < f.nx - 4; ++i) {
        const size_t c = size_t(f.g.index(i, j, k));
        double grad = 0;
        for (int axis = 0; axis < 3; ++axis)
          grad += f.derivative(f.s, i, j, k, axis) * f.derivative(f.r, i, j, k, axis);
        const double second = (double(s_next[c]) - 2.0 * f.s[c] + f.s_prev[c]) / v2dt2;
        expected.push_back(-f.r[c] * second - grad);
        got.push_back(image[(size_t(k) * f.ny + j) * f.nx + i]);
      }
  ASSERT_GT(expected.size(), 50u);
  double worst = 0;
  for (size_t d = 0; d < expected.size(); ++d) worst = std::max(worst, std::abs(got[d] - expected[d]));
  worst /= largest(expected);
  std::printf("isic against the step's second time difference: %.2e of the largest value (%zu "
              "cells)\n", worst, expected.size());
  EXPECT_LT(worst, 1e-4);
}

TEST(ImagingConditionCells, SeparatedKeepsSRWhereTheSourceGoesDownAndTheReceiverUp) {
  SmallFields f;
  f.fill_random(12);
  const float weight = 2.0f;
  const std::vector<float> image = cpu_image(f, ImagingCondition::separated, weight);
  int kept = 0, compared = 0;
  double worst = 0;
  size_t d = 0;
  for (int k = f.box.z0; k < f.box.z1; ++k)
    for (int j = f.box.y0; j < f.box.y1; ++j)
      for (int i = f.box.x0; i < f.box.x1; ++i, ++d) {
        const double ps = f.vertical_flux(f.s, f.s_prev, i, j, k);
        const double pr = f.vertical_flux(f.r, f.r_prev, i, j, k);
        // A sign decided by rounding is not a test of the rule: such cells are left out.
        if (std::abs(ps) < 1e-4 || std::abs(pr) < 1e-4) continue;
        ++compared;
        const bool keep = ps > 0 && pr < 0;
        kept += keep;
        const double expected =
            keep ? weight * f.at(f.s, i, j, k, 0, 0, 0) * f.at(f.r, i, j, k, 0, 0, 0) : 0.0;
        worst = std::max(worst, std::abs(image[d] - expected));
      }
  std::printf("separated: %d of %d cells kept, largest |difference| %.2e\n", kept, compared, worst);
  EXPECT_GT(compared, int(0.95 * double(f.box.cells())));
  // Random signs: about a quarter of the cells pass both tests.
  EXPECT_GT(kept, compared / 8);
  EXPECT_LT(kept, compared / 2);
  EXPECT_LT(worst, 1e-6);
}

// Plane waves along z: S going down (its later level is its earlier one moved down) and R going
// up keep every cell's S R; the reverse directions keep none.
TEST(ImagingConditionCells, SeparatedOnPlaneWavesKeepsDownGoingSourceAgainstUpGoingReceiver) {
  SmallFields f;
  for (std::vector<float>* v : {&f.s, &f.s_prev, &f.r, &f.r_prev}) v->assign(size_t(f.g.size), 0.0f);
  const double shift = 0.6; // cells the waves move between the two levels
  auto wave = [](double z) { return std::exp(0.05 * z); }; // increasing with depth everywhere
  for (int k = 0; k < f.nz; ++k)
    for (int j = 0; j < f.ny; ++j)
      for (int i = 0; i < f.nx; ++i) {
        const size_t c = size_t(f.g.index(i, j, k));
        f.s[c] = float(wave(k));
        f.s_prev[c] = float(wave(k - shift)); // later: moved down
        f.r[c] = float(0.5 * wave(k));
        f.r_prev[c] = float(0.5 * wave(k + shift)); // later: moved up
      }
  const std::vector<float> cross = cpu_image(f, ImagingCondition::cross, 1.0f);
  const std::vector<float> down_up = cpu_image(f, ImagingCondition::separated, 1.0f);
  ASSERT_EQ(cross.size(), down_up.size());
  for (size_t d = 0; d < cross.size(); ++d) ASSERT_EQ(down_up[d], cross[d]) << "cell " << d;
  std::swap(f.s_prev, f.r_prev); // now S goes up and R down: both tests fail
  for (size_t c = 0; c < f.s.size(); ++c) f.s_prev[c] *= 2, f.r_prev[c] *= 0.5f;
  const std::vector<float> up_down = cpu_image(f, ImagingCondition::separated, 1.0f);
  for (float v : up_down) ASSERT_EQ(v, 0.0f);
}

// ---- a strong contrast: the backscatter above it ------------------------------------------------

constexpr int kLayerCells = 10; // a thin sponge, as tests/test_imaging_interval.cpp

// A strong velocity contrast migrated in the true velocity: the sharp interface reflects the
// source field and the receiver field alike, and their correlation along the shared paths is the
// low-wavenumber backscatter above it. By default a flat interface, 2000 over 4500 m/s at 260 m
// (32x12x40 cells of 10 m); RTM_IMAGING_CONDITION_MODEL=salt takes the salt model of `rtm
// generate-model --type salt` instead (1500 to 3000 m/s with a 4500 m/s body; 40x16x36, as
// tests/test_imaging_interval.cpp), whose factors depend more on the set-up (docs/rtm.md, 5c).
// One shot over the centre, a receiver on every cell of the centre inline, 15 Hz, 0.45 s.
struct ContrastSurvey {
  VelocityModel truth;
  ShotFile shots;
  std::vector<int> top; // per (j, i) column: the first cell of 4500 m/s, -1 where none
};

const ContrastSurvey& contrast() {
  static const ContrastSurvey survey = [] {
    ContrastSurvey s;
    const char* model = std::getenv("RTM_IMAGING_CONDITION_MODEL");
    const bool salt_body = model && std::string(model) == "salt";
    const ModelShape shape = salt_body ? ModelShape{40, 16, 36, 10, 10, 10}
                                       : ModelShape{32, 12, 40, 10, 10, 10};
    s.truth = salt_body ? salt_model(shape, 1500, 3000, 4500)
                        : layered_model(shape, {260.0}, {2000, 4500});
    ModelingParams params;
    params.backend.backend = "cpu";
    params.wavelet.f0 = 15;
    params.boundary.absorber = Absorber::sponge;
    params.boundary.width = kLayerCells;
    params.record_time = 0.45;
    std::ostringstream log;
    s.shots = model_shots(s.truth, default_line_survey(s.truth, 1, 30.0, 1), params, log);
    s.top.assign(size_t(shape.nx) * shape.ny, -1);
    for (int j = 0; j < shape.ny; ++j)
      for (int i = 0; i < shape.nx; ++i)
        for (int k = 0; k < shape.nz; ++k)
          if (s.truth.at(i, j, k) >= 4500.0f) {
            s.top[size_t(j) * shape.nx + i] = k;
            break;
          }
    return s;
  }();
  return survey;
}

MigrationResult migrate_contrast(ImagingCondition condition, bool laplacian,
                                 Reconstruction reconstruction = Reconstruction::boundary) {
  const ContrastSurvey& s = contrast();
  MigrationParams params;
  params.reconstruction = reconstruction;
  params.snapshot_precision = RingPrecision::full;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = kLayerCells;
  params.imaging_condition = condition;
  params.laplacian_filter = laplacian;
  std::ostringstream log;
  return migrate_shots(s.truth, s.shots, params, log);
}

// The low-wavenumber energy above the contrast against the energy on it. The image is smoothed by
// a box of 2 kSmooth + 1 cells along each axis (about the vertical wavelength of a reflector's
// image, 7.5 cells at 15 Hz over 2 x 2300 m/s: a reflector's image, whose wavelet has no zero
// frequency, averages away, while the one-signed backscatter stays); its mean square from kShallow
// cells down to kClear cells above the contrast's top (no interface there) over the mean square of
// the unsmoothed image within 2 cells of the top; over the columns under the contrast within 2
// cells of the receiver line (the crossline is imaged by one line only).
constexpr int kSmooth = 3;
constexpr int kShallow = 6; // below the source's and the receivers' own residue (at 3 cells)
constexpr int kClear = 4;
double backscatter_ratio(const std::vector<float>& image) {
  const ContrastSurvey& s = contrast();
  const VelocityModel& m = s.truth;
  auto at = [&](int i, int j, int k) {
    return double(image[(size_t(std::clamp(k, 0, m.nz - 1)) * m.ny + std::clamp(j, 0, m.ny - 1)) *
                            m.nx +
                        std::clamp(i, 0, m.nx - 1)]);
  };
  double above = 0, on = 0;
  long long above_cells = 0, on_cells = 0;
  for (int j = m.ny / 2 - 2; j <= m.ny / 2 + 2; ++j)
    for (int i = 0; i < m.nx; ++i) {
      const int top = s.top[size_t(j) * m.nx + i];
      if (top < 0) continue;
      for (int k = 0; k < m.nz; ++k) {
        if (k >= kShallow && k <= top - kClear) {
          double low = 0;
          for (int dk = -kSmooth; dk <= kSmooth; ++dk)
            for (int dj = -kSmooth; dj <= kSmooth; ++dj)
              for (int di = -kSmooth; di <= kSmooth; ++di) low += at(i + di, j + dj, k + dk);
          low /= std::pow(2 * kSmooth + 1, 3);
          above += low * low, ++above_cells;
        }
        if (std::abs(k - top) <= 2) on += at(i, j, k) * at(i, j, k), ++on_cells;
      }
    }
  return (above / std::max(1LL, above_cells)) / (on / std::max(1LL, on_cells));
}

// The factors of docs/rtm.md, section 5c: the backscatter ratio of the plain cross-correlation
// without the Laplacian filter over each condition's (ISIC: no filter, its default; separated:
// without the filter, to see the condition alone). RTM_IMAGING_CONDITION_ALL=1 adds the rows with
// the filter (cross and separated) and the separated condition with snapshots.
TEST(ImagingConditionContrast, IsicAndSeparatedLowerTheBackscatterAboveTheContrast) {
  const MigrationResult cross_run = migrate_contrast(ImagingCondition::cross, false);
  const MigrationResult isic_run = migrate_contrast(ImagingCondition::isic, true);
  const MigrationResult separated_run = migrate_contrast(ImagingCondition::separated, false);
  const double cross = backscatter_ratio(cross_run.image);
  const double isic = backscatter_ratio(isic_run.image);
  const double separated = backscatter_ratio(separated_run.image);
  std::printf("low-wavenumber energy above the contrast / energy on it: cross %.3e, isic %.3e, "
              "separated %.3e; factors against cross: isic %.2f, separated %.2f\n",
              cross, isic, separated, cross / isic, cross / separated);
  if (std::getenv("RTM_IMAGING_CONDITION_ALL")) {
    const double cross_laplacian =
        backscatter_ratio(migrate_contrast(ImagingCondition::cross, true).image);
    const double separated_laplacian =
        backscatter_ratio(migrate_contrast(ImagingCondition::separated, true).image);
    const double separated_snapshots = backscatter_ratio(
        migrate_contrast(ImagingCondition::separated, false, Reconstruction::snapshots).image);
    std::printf("factors against cross: cross + Laplacian %.2f, separated + Laplacian %.2f, "
                "separated with snapshots %.2f\n",
                cross / cross_laplacian, cross / separated_laplacian, cross / separated_snapshots);
  }
  if (const char* dir = std::getenv("RTM_IMAGING_CONDITION_DUMP")) { // float32 [nz][ny][nx] files
    auto dump = [&](const char* name, const std::vector<float>& v) {
      const std::string path = std::string(dir) + "/" + name + ".f32";
      if (FILE* out = std::fopen(path.c_str(), "wb")) {
        std::fwrite(v.data(), sizeof(float), v.size(), out);
        std::fclose(out);
      }
    };
    dump("cross", cross_run.image);
    dump("isic", isic_run.image);
    dump("separated", separated_run.image);
    dump("velocity", contrast().truth.vp);
  }
  EXPECT_GT(cross / isic, 3.0);
  EXPECT_GT(cross / separated, 1.5);
}

// ---- both reconstructions, the checkpoints ------------------------------------------------------

double relative_l2(const std::vector<float>& a, const std::vector<float>& reference) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - reference[i]) * (double(a[i]) - reference[i]);
    norm += double(reference[i]) * reference[i];
  }
  return std::sqrt(diff / norm);
}

// Snapshots (float32) and boundary saving image at the same steps; ISIC reads the same fields, so
// the images agree to rounding. The separated condition's source direction comes from two
// snapshots k steps apart instead of two steps, so its image differs by the cells whose
// direction the two differences judge differently.
TEST(ImagingConditionContrast, SnapshotsImageAsBoundarySaving) {
  for (ImagingCondition c : {ImagingCondition::isic, ImagingCondition::separated}) {
    const MigrationResult boundary = migrate_contrast(c, false);
    const MigrationResult snapshots = migrate_contrast(c, false, Reconstruction::snapshots);
    const double error = relative_l2(snapshots.raw_image, boundary.raw_image);
    std::printf("%s: snapshots against boundary saving, raw image %.2e (relative L2)\n",
                imaging_condition_info(c).name, error);
    EXPECT_LT(error, c == ImagingCondition::isic ? 1e-4 : 0.5) << imaging_condition_info(c).name;
  }
}

TEST(ImagingConditionCheckpoints, TheIdentityNamesAConditionOtherThanCross) {
  const ContrastSurvey& s = contrast();
  MigrationParams params;
  const CheckpointIdentity cross = migration_identity(s.truth, s.shots, "", params);
  EXPECT_EQ(cross.parameters.find("imaging_condition"), std::string::npos)
      << "a plain run's identity is what it was before the conditions";
  params.imaging_condition = ImagingCondition::isic;
  const CheckpointIdentity isic = migration_identity(s.truth, s.shots, "", params);
  params.imaging_condition = ImagingCondition::separated;
  const CheckpointIdentity separated = migration_identity(s.truth, s.shots, "", params);
  EXPECT_NE(isic.parameters, cross.parameters);
  EXPECT_NE(separated.parameters, isic.parameters);
  EXPECT_NE(isic.parameters.find("imaging_condition = isic"), std::string::npos);
}

// A run stopped after one of three shots and resumed from its checkpoint images as an
// uninterrupted one, bit for bit, with each condition and each reconstruction (the checkpoints
// carry the raw image and the illumination, whatever condition made them); another condition's
// checkpoint is refused.
TEST(ImagingConditionCheckpoints, StoppedAndResumedEqualsUninterrupted) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("rtm_test_imaging_condition_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const ModelShape shape{20, 12, 18, 10, 10, 10};
  const VelocityModel truth = layered_model(shape, {110}, {2000, 2600});
  const VelocityModel migration = constant_model(shape, 2000);
  ModelingParams modeling;
  modeling.backend.backend = "cpu";
  modeling.wavelet.f0 = 20;
  modeling.boundary.width = 6;
  modeling.boundary.absorber = Absorber::sponge;
  modeling.record_time = 0.2;
  std::ostringstream log;
  const ShotFile shots =
      model_shots(truth, default_line_survey(truth, 3, 20.0, 1), modeling, log);
  const std::pair<ImagingCondition, Reconstruction> runs[] = {
      {ImagingCondition::isic, Reconstruction::boundary},
      {ImagingCondition::separated, Reconstruction::snapshots}};
  for (const auto& [c, reconstruction] : runs) {
    SCOPED_TRACE(std::string(imaging_condition_info(c).name) + ", " +
                   reconstruction_name(reconstruction));
      MigrationParams params;
      params.backend.backend = "cpu";
      params.boundary.width = 6;
      params.boundary.absorber = Absorber::sponge;
      params.reconstruction = reconstruction;
      params.imaging_condition = c;
      const MigrationResult whole = migrate_shots(migration, shots, params, log);
      const std::string output =
          (dir / (std::string(imaging_condition_info(c).name) + reconstruction_name(reconstruction) +
                  ".h5"))
              .string();
      MigrationControl control;
      control.checkpoint_output = output;
      control.identity = migration_identity(migration, shots, "shots.h5", params);
      int boundaries = 0; // stop at the 2nd shot boundary: after 1 shot
      control.stop_requested = [&boundaries] { return ++boundaries > 1 ? 15 : 0; };
      ASSERT_EQ(migrate_shots(migration, shots, params, log, nullptr, control).stop_signal, 15);
      control.stop_requested = nullptr;
      control.resume = true;
      MigrationParams cross = params;
      cross.imaging_condition = ImagingCondition::cross;
      MigrationControl other = control;
      other.identity = migration_identity(migration, shots, "shots.h5", cross);
      EXPECT_THROW(migrate_shots(migration, shots, cross, log, nullptr, other), InputError);
      const MigrationResult resumed = migrate_shots(migration, shots, params, log, nullptr, control);
      EXPECT_EQ(resumed.shots_migrated, 2);
      EXPECT_EQ(resumed.raw_image, whole.raw_image);
      EXPECT_EQ(resumed.illumination, whole.illumination);
      EXPECT_EQ(resumed.image, whole.image);
    }
  fs::remove_all(dir);
}

} // namespace
} // namespace rtm
