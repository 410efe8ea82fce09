// Many shots without idle time (docs/rtm.md, "Many shots"): with MigrationParams::overlap_shots the
// next shot's set-up runs on a thread of its own while a shot steps and the point sets stay from
// shot to shot (PointSet::replace). The image must not change: overlapped and sequential runs of
// a multi-shot file agree bit for bit on the CPU, for the shared spread and for per-shot spreads
// whose sizes change from shot to shot (sets replaced where the size allows, made anew where not),
// and the profile says where the set-up went.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/shot_prefetch.h"

namespace rtm {
namespace {

// A small two-layer model and its shots along the centre line, recorded by one line of receivers.
struct Survey {
  VelocityModel truth, migration;
  ShotFile shots;
};

Survey small_survey(int nshots) {
  Survey s;
  const ModelShape shape{20, 8, 16, 10, 10, 10};
  s.truth = layered_model(shape, {100}, {2000, 2600});
  s.migration = constant_model(shape, 2000);
  ModelingParams params;
  params.backend.backend = "cpu";
  params.wavelet.f0 = 25;
  params.boundary.absorber = Absorber::sponge; // small grids: the C-PML would be most of the cost
                                               // (these tests took 2.6x as long with it)
  params.boundary.width = 6;
  params.record_time = 0.15;
  std::ostringstream log;
  s.shots = model_shots(s.truth, default_line_survey(s.truth, nshots, 20.0, 1), params, log);
  return s;
}

// The same shots, each recorded by its own part of the line: n, n/2, n/2, n, ... receivers, so
// that the second of each equal pair reuses the set of the shot before and the others remake it.
ShotFile moving_spreads(const ShotFile& shared) {
  ShotFile moving = shared;
  const size_t n = shared.receivers.size(), nt = size_t(shared.nt);
  for (size_t shot = 0; shot < moving.shots.size(); ++shot) {
    ShotGather& gather = moving.shots[shot];
    const size_t count = (shot % 4 == 1 || shot % 4 == 2) ? n / 2 : n;
    const size_t first = shot % 2 == 0 ? 0 : n - count;
    gather.receivers.assign(shared.receivers.begin() + long(first),
                            shared.receivers.begin() + long(first + count));
    gather.data.assign(shared.shots[shot].data.begin() + long(first * nt),
                       shared.shots[shot].data.begin() + long((first + count) * nt));
  }
  return moving;
}

// The shot loop names the shot about to run and then the next one before the first runs
// (ShotLoopBody::prepare_shot): both jobs must be held, each run on a thread of its own, and each
// shot's result handed to that shot.
TEST(ShotPrefetch, HoldsTheShotAboutToRunAndTheNextOneTogether) {
  const std::thread::id caller = std::this_thread::get_id();
  auto job = [caller](int shot) {
    return [caller, shot] { return std::this_thread::get_id() == caller ? -1 : 10 * shot; };
  };
  ShotPrefetch<int> prefetch;
  prefetch.start(3, job(3)); // the group's first shot
  prefetch.start(5, job(5)); // the one taken ahead
  EXPECT_TRUE(prefetch.holds(3));
  EXPECT_TRUE(prefetch.holds(5));
  EXPECT_EQ(prefetch.take(3), 30);
  EXPECT_FALSE(prefetch.holds(3));
  prefetch.start(7, job(7)); // named as shot 5 starts
  EXPECT_EQ(prefetch.take(5), 50);
  EXPECT_EQ(prefetch.take(7), 70);
  EXPECT_FALSE(prefetch.holds(7));
  EXPECT_THROW(prefetch.take(7), std::logic_error);
}

TEST(ShotPrefetch, KeepsAtMostTheLastTwoAndRethrowsAtTake) {
  ShotPrefetch<int> prefetch;
  prefetch.start(0, [] { return 0; });
  prefetch.start(1, [] { return 1; });
  prefetch.start(2, []() -> int { throw InputError("shot 2's data"); });
  EXPECT_FALSE(prefetch.holds(0)); // never taken: dropped by the third start
  EXPECT_TRUE(prefetch.holds(1));
  EXPECT_THROW(prefetch.take(2), InputError); // and shot 1's, started before it, dropped
  EXPECT_FALSE(prefetch.holds(1));
  prefetch.start(4, [] { return 4; }); // never taken: waited for by the destructor
}

MigrationParams small_params(bool overlap) {
  MigrationParams params;
  params.backend.backend = "cpu";
  params.boundary.absorber = Absorber::sponge;
  params.boundary.width = 6;
  params.overlap_shots = overlap;
  params.profile = true;
  return params;
}

void expect_same_images(const MigrationResult& a, const MigrationResult& b) {
  ASSERT_FALSE(a.raw_image.empty());
  EXPECT_EQ(a.raw_image, b.raw_image);
  EXPECT_EQ(a.illumination, b.illumination);
  EXPECT_EQ(a.image, b.image);
}

TEST(ShotOverlap, SharedSpreadImageEqualsTheSequentialRunBitForBit) {
  const Survey s = small_survey(4);
  std::ostringstream overlapped_log, sequential_log;
  const MigrationResult overlapped =
      migrate_shots(s.migration, s.shots, small_params(true), overlapped_log);
  const MigrationResult sequential =
      migrate_shots(s.migration, s.shots, small_params(false), sequential_log);
  expect_same_images(overlapped, sequential);

  // The profile: the set-up of shots 2..4 was made ahead (on the prefetch thread), and the first
  // shot's there too (waited for whole), none in the sequential run; the idle line and the
  // PERFORMANCE fields are printed.
  const MigrationProfile& p = overlapped.profile;
  EXPECT_TRUE(p.overlap_shots);
  EXPECT_EQ(p.shots, 4);
  EXPECT_EQ(p.prefetched_shots, 4);
  EXPECT_GT(p.prefetch_s, 0.0);
  EXPECT_GT(p.setup_wait_s, 0.0);
  EXPECT_LE(p.setup_wait_s, p.host_s() + 1e-3);
  EXPECT_NEAR(p.idle_fraction(), p.host_s() / p.loop_s, 1e-12);
  EXPECT_FALSE(sequential.profile.overlap_shots);
  EXPECT_EQ(sequential.profile.prefetch_s, 0.0);
  EXPECT_EQ(sequential.profile.prefetched_shots, 0);
  const std::string report = overlapped_log.str();
  for (const char* expected : {"of which shot set-up", "rtm: profile: idle ", "idle_fraction=",
                               "setup_wait_s=", "prefetch_s=", "overlap_shots=1"})
    EXPECT_NE(report.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                        << report;
  EXPECT_NE(sequential_log.str().find("overlap_shots=0"), std::string::npos);
}

TEST(ShotOverlap, PerShotSpreadsOfChangingSizeImageAsTheSequentialRun) {
  const Survey s = small_survey(4);
  const ShotFile moving = moving_spreads(s.shots);
  ASSERT_TRUE(moving.has_per_shot_receivers());
  std::ostringstream log;
  const MigrationResult overlapped = migrate_shots(s.migration, moving, small_params(true), log);
  const MigrationResult sequential = migrate_shots(s.migration, moving, small_params(false), log);
  expect_same_images(overlapped, sequential);
}

// A stop after the first shot drops the shot prepared ahead; what the run returns is a stopped
// run's (no image), and nothing is left running (the prefetch is waited for).
TEST(ShotOverlap, AStopDropsTheShotPreparedAhead) {
  const Survey s = small_survey(3);
  MigrationControl control;
  int boundaries = 0;
  control.stop_requested = [&boundaries] { return ++boundaries > 1 ? 15 : 0; };
  control.progress.interval_s = 0;
  std::ostringstream log;
  const MigrationResult stopped =
      migrate_shots(s.migration, s.shots, small_params(true), log, nullptr, control);
  EXPECT_EQ(stopped.stop_signal, 15);
  EXPECT_TRUE(stopped.image.empty());
}

} // namespace
} // namespace rtm
