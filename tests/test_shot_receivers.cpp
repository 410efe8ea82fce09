// Per-shot receivers (docs/io.md, "Shot file"): shot files may hold each shot's own receivers
// (/shots/NNNN/receivers) beside or instead of the shared spread (/receivers). Round trips through
// HDF5 and SEG-Y keep each shot's receivers; a file of the shared-spread layout written before
// per-shot receivers existed still reads unchanged; modeling a moving spread gives the traces of
// separate one-shot runs with each spread, bit for bit; migrating a per-shot file equals migrating
// its shots as separate shared-spread files; receivers outside the model are refused naming the
// shot and the receiver.
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/hdf5_util.h"
#include "io/segy_file.h"
#include "io/shot_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "tests/support/file_edits.h"
#include "tests/support/max_difference.h"

namespace fs = std::filesystem;

namespace rtm {
namespace {

class ShotReceivers : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("rtm_receivers_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

using test::input_error;

bool has_link(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const bool exists = h5::link_exists(f, name);
  H5Fclose(f);
  return exists;
}

// Three shots: two with their own spreads of 2 and 4 receivers, one on the shared spread of 3.
ShotFile mixed_file() {
  ShotFile f;
  f.nt = 5;
  f.dt = 0.002;
  f.f0 = 15;
  f.t0 = 0.08;
  f.wavelet = {0.f, 0.5f, 1.f, 0.5f, 0.f};
  f.receivers = {{10, 20, 30}, {10, 20, 40}, {10, 20, 50}};
  const std::vector<std::vector<Position>> own = {
      {{12.5, 100.25, 7.0}, {12.5, 100.25, 17.5}}, {}, {{3, 1, 2}, {3, 1, 4}, {3, 2, 2}, {4, 2, 4}}};
  for (int s = 0; s < 3; ++s) {
    ShotGather g;
    g.id = 2 * s + 1;
    g.source = {5.0, 10.0 + s, 20.5 * s};
    g.receivers = own[size_t(s)];
    const size_t n = f.receivers_of(g).size() * size_t(f.nt);
    for (size_t k = 0; k < n; ++k) g.data.push_back(float(s) + 0.125f * float(k));
    f.shots.push_back(g);
  }
  return f;
}

void expect_same_shots(const ShotFile& a, const ShotFile& b) {
  EXPECT_EQ(a.nt, b.nt);
  EXPECT_EQ(a.dt, b.dt);
  ASSERT_EQ(a.shots.size(), b.shots.size());
  for (size_t s = 0; s < a.shots.size(); ++s) {
    EXPECT_EQ(a.shots[s].id, b.shots[s].id);
    EXPECT_EQ(a.shots[s].source, b.shots[s].source);
    EXPECT_EQ(a.receivers_of(a.shots[s]), b.receivers_of(b.shots[s])) << "shot " << s;
    EXPECT_EQ(a.shots[s].data, b.shots[s].data) << "shot " << s;
  }
}

// ---- HDF5 ---------------------------------------------------------------------------------------

TEST_F(ShotReceivers, PerShotLayoutRoundTripsThroughHdf5) {
  const ShotFile f = mixed_file();
  write_shot_file(path("mixed.h5"), f);
  const ShotFile back = read_shot_file(path("mixed.h5"));
  expect_same_shots(f, back);
  EXPECT_EQ(back.receivers, f.receivers);
  EXPECT_TRUE(back.shots[1].receivers.empty()); // the shared spread stays shared
  EXPECT_TRUE(back.has_per_shot_receivers());
  EXPECT_EQ(back.max_receivers(), 4u);
  EXPECT_EQ(back.min_receivers(), 2u);
  EXPECT_EQ(describe_receiver_counts(back), "per-shot spreads of 2 to 4 receivers");
  EXPECT_TRUE(has_link(path("mixed.h5"), "shots/0001/receivers"));
  EXPECT_FALSE(has_link(path("mixed.h5"), "shots/0003/receivers"));
  EXPECT_TRUE(has_link(path("mixed.h5"), "receivers"));

  // Every shot with its own: no shared /receivers at all, and it reads back the same.
  ShotFile own = f;
  own.shots.erase(own.shots.begin() + 1);
  own.receivers.clear();
  write_shot_file(path("own.h5"), own);
  EXPECT_FALSE(has_link(path("own.h5"), "receivers"));
  const ShotFile own_back = read_shot_file(path("own.h5"));
  expect_same_shots(own, own_back);
  EXPECT_TRUE(own_back.receivers.empty());

  // The geometry alone: no traces, the same receivers.
  const ShotFile geometry = read_shot_geometry(path("mixed.h5"));
  ASSERT_EQ(geometry.shots.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_TRUE(geometry.shots[s].data.empty());
    EXPECT_EQ(geometry.receivers_of(geometry.shots[s]), f.receivers_of(f.shots[s]));
  }
}

// tests/data/shots_shared_spread_v1.h5 was written by rtm before per-shot receivers existed
// (tests/data/shots_shared_spread_v1.md): it reads as it always did, and writes back in the same
// shared layout.
TEST_F(ShotReceivers, FileOfTheSharedSpreadLayoutStillReads) {
  const std::string old = std::string(RTM_TEST_DATA_DIR) + "/shots_shared_spread_v1.h5";
  const ShotFile f = read_shot_file(old);
  ASSERT_EQ(f.shots.size(), 2u);
  ASSERT_EQ(f.receivers.size(), 6u);
  EXPECT_EQ(f.nt, 63);
  EXPECT_FALSE(f.has_per_shot_receivers());
  for (size_t r = 0; r < 6; ++r) {
    EXPECT_DOUBLE_EQ(f.receivers[r][0], 20.0);
    EXPECT_DOUBLE_EQ(f.receivers[r][1], 35.0);
    EXPECT_DOUBLE_EQ(f.receivers[r][2], 30.0 * double(r));
  }
  double energy = 0;
  for (const ShotGather& g : f.shots) {
    EXPECT_TRUE(g.receivers.empty());
    ASSERT_EQ(g.data.size(), 6u * 63u);
    for (float v : g.data) energy += double(v) * v;
  }
  EXPECT_GT(energy, 0.0);
  EXPECT_EQ(describe_receiver_counts(f), "6 receivers");

  write_shot_file(path("again.h5"), f);
  EXPECT_FALSE(has_link(path("again.h5"), "shots/0000/receivers"));
  expect_same_shots(f, read_shot_file(path("again.h5")));
}

// Rewrites /shots/0000/receivers of `file` with `rows` rows (or removes it when rows == 0).
void replace_own_receivers(const std::string& file, size_t rows) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Ldelete(f, "shots/0000/receivers", H5P_DEFAULT);
  if (rows > 0) {
    const hid_t group = H5Gopen2(f, "shots/0000", H5P_DEFAULT);
    h5::write_positions(group, "receivers", std::vector<Position>(rows, Position{1, 2, 3}), file);
    H5Gclose(group);
  }
  H5Fclose(f);
}

TEST_F(ShotReceivers, ReaderRefusesCountsThatDisagree) {
  ShotFile f = mixed_file();
  f.shots.resize(1);
  f.shots[0].id = 0;
  f.receivers.clear(); // shot 0 has its own 2 receivers, and there is no shared spread
  write_shot_file(path("a.h5"), f);
  replace_own_receivers(path("a.h5"), 3);
  std::string message = input_error([&] { read_shot_file(path("a.h5")); });
  EXPECT_NE(message.find("/shots/0000/data has shape [2][5]"), std::string::npos) << message;
  EXPECT_NE(message.find("/shots/0000/receivers"), std::string::npos) << message;

  write_shot_file(path("b.h5"), f);
  replace_own_receivers(path("b.h5"), 0);
  message = input_error([&] { read_shot_file(path("b.h5")); });
  EXPECT_NE(message.find("/shots/0000 has no receivers"), std::string::npos) << message;

  // The writer refuses what the reader would: a shot without receivers, data of another count.
  ShotFile bad = f;
  bad.shots[0].receivers.clear();
  EXPECT_THROW(write_shot_file(path("c.h5"), bad), std::invalid_argument);
  bad = f;
  bad.shots[0].receivers.push_back({1, 1, 1});
  EXPECT_THROW(write_shot_file(path("c.h5"), bad), std::invalid_argument);
  EXPECT_FALSE(fs::exists(path("c.h5")));
}

// ---- SEG-Y --------------------------------------------------------------------------------------

TEST_F(ShotReceivers, PerShotSpreadsRoundTripThroughSegy) {
  if (!segy_supported()) GTEST_SKIP() << "built without libsegyio";
  ShotFile f = mixed_file();
  for (size_t s = 0; s < f.shots.size(); ++s) f.shots[s].id = int(s); // SEG-Y numbers shots 0..n-1
  write_segy_shots(path("mixed.sgy"), f);
  const ShotFile back = read_segy_shots(path("mixed.sgy"));
  expect_same_shots(f, back);
  EXPECT_EQ(back.nt, f.nt);
  // Each shot carries its receivers (the shared ones written into every trace of shot 1).
  EXPECT_TRUE(back.receivers.empty());
  EXPECT_EQ(back.shots[1].receivers, f.receivers);

  // Spreads that are all the same come back as the shared spread.
  ShotFile shared = f;
  for (ShotGather& g : shared.shots) {
    g.receivers.clear();
    g.data.resize(shared.receivers.size() * size_t(shared.nt), 1.5f);
  }
  write_segy_shots(path("shared.sgy"), shared);
  const ShotFile shared_back = read_segy_shots(path("shared.sgy"));
  EXPECT_EQ(shared_back.receivers, shared.receivers);
  EXPECT_FALSE(shared_back.has_per_shot_receivers());
  expect_same_shots(shared, shared_back);
}

// tests/data/segyio_streamer.sgy, written by segyio's Python package
// (tests/data/make_segy_fixtures.py): 3 shots of 4, 3 and 5 receivers that move with the source.
TEST_F(ShotReceivers, ReadsMovingSpreadsWrittenBySegyio) {
  if (!segy_supported()) GTEST_SKIP() << "built without libsegyio";
  const ShotFile f = read_segy_shots(std::string(RTM_TEST_DATA_DIR) + "/segyio_streamer.sgy");
  ASSERT_EQ(f.shots.size(), 3u);
  EXPECT_EQ(f.nt, 40);
  EXPECT_DOUBLE_EQ(f.dt, 0.004);
  const size_t counts[3] = {4, 3, 5};
  for (size_t s = 0; s < 3; ++s) {
    const ShotGather& g = f.shots[s];
    ASSERT_EQ(g.receivers.size(), counts[s]) << "shot " << s;
    const double sx = 200.0 + 50.0 * double(s);
    EXPECT_EQ(g.source, (Position{8.0, 300.0, sx}));
    for (size_t r = 0; r < counts[s]; ++r) {
      // Receivers trail the source every 12.5 m along x, 25 m behind the first; depth 6.5 m.
      EXPECT_EQ(g.receivers[r], (Position{6.5, 300.0, sx - 25.0 - 12.5 * double(r)}))
          << "shot " << s << " receiver " << r;
      for (int n = 0; n < f.nt; ++n)
        EXPECT_EQ(g.data[r * size_t(f.nt) + size_t(n)], float(100 * s + 10 * r) + 0.25f * float(n));
    }
  }
}

// ---- modeling and migration ---------------------------------------------------------------------

VelocityModel small_model() {
  return layered_model(ModelShape{22, 8, 16, 10, 10, 10}, {80}, {2000, 2600});
}

ModelingParams small_modeling() {
  ModelingParams p;
  p.backend.backend = "cpu";
  p.boundary.width = 6;
  p.wavelet.f0 = 20;
  p.record_time = 0.2;
  return p;
}

// Three shots along the centre line, each with a split spread of offsets -80 .. 60 m every 20 m,
// cut at the model's edges (x from 0 to 210 m).
Acquisition moving_line(const VelocityModel& m) {
  SurveyLayout layout;
  layout.shots_x = 3;
  Acquisition acq = make_survey(m, layout);
  MovingSpread spread;
  spread.x_min = -80;
  spread.x_max = 60;
  spread.dx = spread.dy = 20;
  spread.depth = 20;
  attach_moving_spread(acq, m, spread);
  return acq;
}

TEST(MovingSpread, ReceiversFollowTheSourceAndStopAtTheModelsEdge) {
  const VelocityModel m = small_model(); // x from 0 to 210 m
  const Acquisition acq = moving_line(m);
  ASSERT_EQ(acq.sources.size(), 3u);
  ASSERT_EQ(acq.shot_receivers.size(), 3u);
  EXPECT_TRUE(acq.receivers.empty());
  for (size_t s = 0; s < 3; ++s) {
    const Position& src = acq.sources[s];
    size_t expected = 0;
    for (int k = 0; k <= 7; ++k) {
      const double x = src[2] - 80 + 20 * k;
      if (x >= 0 && x <= 210) ++expected;
    }
    ASSERT_EQ(acq.shot_receivers[s].size(), expected) << "shot " << s;
    for (const Position& r : acq.shot_receivers[s]) {
      EXPECT_DOUBLE_EQ(r[0], 20.0);
      EXPECT_DOUBLE_EQ(r[1], src[1]);
      const double offset = r[2] - src[2];
      EXPECT_NEAR(std::remainder(offset + 80, 20.0), 0.0, 1e-9);
      EXPECT_GE(offset, -80 - 1e-9);
      EXPECT_LE(offset, 60 + 1e-9);
    }
  }
  // The first shot (x = 35 m) loses the receivers behind x = 0, the last (x = 175 m) those
  // beyond 210 m.
  EXPECT_LT(acq.shot_receivers[0].size(), acq.shot_receivers[1].size());

  // A patch: crossline offsets too.
  Acquisition patch = make_survey(m, SurveyLayout{});
  MovingSpread spread;
  spread.x_min = -20, spread.x_max = 20, spread.y_min = -10, spread.y_max = 10;
  spread.dx = spread.dy = 10;
  attach_moving_spread(patch, m, spread);
  EXPECT_EQ(patch.shot_receivers[0].size(), 5u * 3u);

  // Offsets that leave a shot nothing inside the model are refused, naming the shot.
  Acquisition far = make_survey(m, SurveyLayout{});
  spread = MovingSpread{};
  spread.x_min = 1000, spread.x_max = 1100, spread.dx = spread.dy = 10;
  const std::string message = input_error([&] { attach_moving_spread(far, m, spread); });
  EXPECT_NE(message.find("shot 0"), std::string::npos) << message;
}

// Modeled once for the tests below: the moving-spread run and, for each shot, a one-shot run with
// that shot's spread as the shared one.
struct MovingRun {
  VelocityModel model;
  Acquisition acq;
  ShotFile moving;
  std::vector<ShotFile> separate;
};

const MovingRun& moving_run() {
  static const MovingRun run = [] {
    MovingRun r;
    r.model = small_model();
    r.acq = moving_line(r.model);
    std::ostringstream log;
    r.moving = model_shots(r.model, r.acq, small_modeling(), log);
    for (size_t s = 0; s < r.acq.sources.size(); ++s) {
      Acquisition one;
      one.sources = {r.acq.sources[s]};
      one.receivers = r.acq.shot_receivers[s];
      r.separate.push_back(model_shots(r.model, one, small_modeling(), log));
    }
    return r;
  }();
  return run;
}

TEST(MovingSpread, ModelingEqualsOneShotRunsWithEachSpreadBitForBit) {
  const MovingRun& run = moving_run();
  ASSERT_EQ(run.moving.shots.size(), 3u);
  EXPECT_TRUE(run.moving.receivers.empty());
  for (size_t s = 0; s < 3; ++s) {
    const ShotGather& g = run.moving.shots[s];
    const ShotGather& one = run.separate[s].shots[0];
    EXPECT_EQ(g.receivers, run.acq.shot_receivers[s]);
    EXPECT_EQ(g.source, one.source);
    ASSERT_EQ(g.data.size(), one.data.size());
    EXPECT_TRUE(g.data == one.data) << "shot " << s << " differs from its one-shot run";
    double energy = 0;
    for (float v : g.data) energy += double(v) * v;
    EXPECT_GT(energy, 0.0);
  }
}

// A modeling run stopped after its first shot and resumed from its checkpoint (each finished shot
// a shot file of its own, io/shot_checkpoint.h) keeps every shot's own receivers: the result equals
// the uninterrupted run bit for bit.
TEST(MovingSpread, StoppedAndResumedModelingKeepsEachShotsReceivers) {
  const MovingRun& run = moving_run();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("rtm_receivers_resume_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string output = (dir / "moving.h5").string();
  std::ostringstream log;
  ModelingControl stop;
  stop.checkpoint_output = output;
  int started = 0;
  stop.shot_started = [&](int, int, int) { ++started; };
  stop.stop_requested = [&] { return started >= 1 ? 15 : 0; };
  const ShotFile stopped = model_shots(run.model, run.acq, small_modeling(), log, nullptr, nullptr, &stop);
  EXPECT_EQ(stop.stop_signal, 15);
  EXPECT_TRUE(stopped.shots.empty());
  ModelingControl resume;
  resume.checkpoint_output = output;
  resume.resume = true;
  const ShotFile resumed =
      model_shots(run.model, run.acq, small_modeling(), log, nullptr, nullptr, &resume);
  EXPECT_GE(resume.shots_resumed, 1);
  ASSERT_EQ(resumed.shots.size(), run.moving.shots.size());
  for (size_t s = 0; s < resumed.shots.size(); ++s) {
    EXPECT_EQ(resumed.shots[s].receivers, run.moving.shots[s].receivers) << "shot " << s;
    EXPECT_TRUE(resumed.shots[s].data == run.moving.shots[s].data) << "shot " << s;
  }
  fs::remove_all(dir);
}

MigrationParams small_migration() {
  MigrationParams p;
  p.backend.backend = "cpu";
  p.boundary.width = 6;
  // Named, so each separate file gets the filter of the combined run (auto decides per file).
  p.data_phase_filter = DataPhaseFilter::half;
  return p;
}

using test::max_abs;

// The per-shot file against the same shots as separate shared-spread files. A migration sums its
// shots into one image step by step, so the stack of the three separate raw images (each from
// zero) adds the same terms in another order: equal to float rounding, within 1e-5 of the largest
// value (measured: see the printed figure). A one-shot stack has no other order: bit for bit.
TEST(MovingSpread, MigrationOfPerShotFileEqualsSeparateSharedSpreadFiles) {
  const MovingRun& run = moving_run();
  std::ostringstream log;
  const MigrationResult combined = migrate_shots(run.model, run.moving, small_migration(), log);
  std::vector<double> raw(combined.raw_image.size(), 0.0), illumination(raw.size(), 0.0);
  for (size_t s = 0; s < run.separate.size(); ++s) {
    const MigrationResult one = migrate_shots(run.model, run.separate[s], small_migration(), log);
    for (size_t c = 0; c < raw.size(); ++c) {
      raw[c] += one.raw_image[c];
      illumination[c] += one.illumination[c];
    }
    if (s == 0) {
      // The first shot alone, as a per-shot file of one shot: bit for bit its shared-spread twin.
      ShotFile first = run.moving;
      first.shots.resize(1);
      const MigrationResult per_shot = migrate_shots(run.model, first, small_migration(), log);
      EXPECT_TRUE(per_shot.raw_image == one.raw_image);
      EXPECT_TRUE(per_shot.illumination == one.illumination);
      EXPECT_TRUE(per_shot.image == one.image);
    }
  }
  double raw_difference = 0, illumination_difference = 0;
  for (size_t c = 0; c < raw.size(); ++c) {
    raw_difference = std::max(raw_difference, std::fabs(raw[c] - combined.raw_image[c]));
    illumination_difference =
        std::max(illumination_difference, std::fabs(illumination[c] - combined.illumination[c]));
  }
  const double raw_scale = max_abs(combined.raw_image);
  const double illumination_scale = max_abs(combined.illumination);
  std::printf("per-shot file vs separate files: max |difference| / max = %.3g (raw image), %.3g "
              "(illumination)\n",
              raw_difference / raw_scale, illumination_difference / illumination_scale);
  ASSERT_GT(raw_scale, 0.0);
  EXPECT_LE(raw_difference, 1e-5 * raw_scale);
  EXPECT_LE(illumination_difference, 1e-5 * illumination_scale);

}

TEST(MovingSpread, ReceiversOutsideTheModelAreRefusedNamingShotAndReceiver) {
  const MovingRun& run = moving_run();
  // Migration: shot 2's receiver 1 moved 1 km beyond the model.
  ShotFile shots = run.moving;
  shots.shots[2].receivers[1][2] += 1000;
  std::ostringstream log;
  std::string message = input_error([&] { migrate_shots(run.model, shots, small_migration(), log); });
  EXPECT_NE(message.find("shot " + std::to_string(shots.shots[2].id) + ": receiver 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("outside the model"), std::string::npos) << message;

  // Modeling: the same in an acquisition.
  Acquisition acq = run.acq;
  acq.shot_receivers[1][0][1] = -500;
  message = input_error([&] { model_shots(run.model, acq, small_modeling(), log); });
  EXPECT_NE(message.find("shot 1: receiver 0"), std::string::npos) << message;

  // Counts: one spread per source.
  acq = run.acq;
  acq.shot_receivers.pop_back();
  message = input_error([&] { model_shots(run.model, acq, small_modeling(), log); });
  EXPECT_NE(message.find("2 per-shot receiver spreads for 3 sources"), std::string::npos) << message;
}

} // namespace
} // namespace rtm
