// The shot loop (solvers/drivers/shot_loop.h) with fake shots: every unfinished shot runs exactly
// once over the shot groups, resumed shots are skipped, checkpoints fall due every K shots but
// never after a group's last one, a stop asked for after shot k ends every rank at its next shot
// boundary with one agreed signal and a last checkpoint, and the per-shot lines and progress say
// where the run is (a fake clock makes the times exact). Runs as one rank without a launcher, and
// under mpiexec with several ranks (ctest test_shot_loop_np<n>): every rank must call the loop alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/shot_loop.h"
#include "tests/support/mpi_test_main.h"

using namespace rtm;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// What a fake run saw on this rank.
struct Record {
  std::vector<int> shots;       // run_shot calls, in order
  std::vector<int> kept;        // keep_shot calls, in order
  std::vector<int> checkpoints; // shots kept when each checkpoint was written
  std::vector<std::string> events; // "run 3", "keep 3", "checkpoint" in order
};

// A fake run: each shot ticks `steps` steps, each tick one second on `now`; each shot also waits
// `pause` of real time (to make one rank slower than another).
ShotLoopBody fake_body(Record& r, double& now, int steps, bool checkpoints,
                       std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  ShotLoopBody body;
  body.run_shot = [&r, &now, steps, pause](int s, ShotProgress& progress) {
    std::this_thread::sleep_for(pause);
    r.shots.push_back(s);
    r.events.push_back("run " + std::to_string(s));
    for (int n = 0; n < steps; ++n) {
      now += 1.0;
      progress.tick();
    }
  };
  body.keep_shot = [&r](int s) {
    r.kept.push_back(s);
    r.events.push_back("keep " + std::to_string(s));
  };
  if (checkpoints)
    body.checkpoint = [&r] {
      r.checkpoints.push_back(int(r.kept.size()));
      r.events.push_back("checkpoint");
    };
  return body;
}

ShotLoopPlan fake_plan(int total, int steps) {
  ShotLoopPlan plan;
  plan.total = total;
  plan.verb = "faked";
  plan.phases = {{steps, 1.0}};
  plan.cells_per_step = 1e9;
  plan.cell_updates_per_shot = 1e9 * steps;
  return plan;
}

ShotLoopControl quiet() {
  ShotLoopControl control;
  control.progress.interval_s = 0; // no in-shot updates
  return control;
}

// Every shot number any rank's group ran, each counted once per group (its leader's record).
std::vector<int> shots_over_groups(const Record& r, const ParallelContext& parallel, int total) {
  std::vector<int> count(size_t(total), 0);
  if (parallel.is_leader())
    for (int s : r.shots) ++count[size_t(s)];
  if (parallel.uses_mpi())
    MPI_Allreduce(MPI_IN_PLACE, count.data(), total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return count;
}

int sum_over_ranks(int value, const ParallelContext& parallel) {
  if (parallel.uses_mpi()) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return value;
}

} // namespace

TEST(ShotLoop, UnfinishedShotsSkipTheResumedOnes) {
  EXPECT_EQ(unfinished_shots(4, {}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(unfinished_shots(5, {1, 0, 0, 1, 0}), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(unfinished_shots(2, {1, 1}), std::vector<int>{});
  EXPECT_THROW(unfinished_shots(3, {1, 0}), std::invalid_argument);
}

TEST(ShotLoop, EveryShotRunsOnceOverTheGroupsInOrderWithinEach) {
  const ParallelContext parallel(1);
  Record r;
  double now = 0;
  std::ostringstream log;
  const ShotLoopSummary summary = run_shot_loop(fake_plan(7, 3), quiet(), parallel, log,
                                                fake_body(r, now, 3, false), [&now] { return now; });
  EXPECT_EQ(summary.stop_signal, 0);
  EXPECT_EQ(summary.shots_resumed, 0);
  EXPECT_EQ(summary.shots_to_do, 7);
  EXPECT_EQ(summary.done_here, int(r.shots.size()));
  EXPECT_EQ(r.kept, r.shots); // each shot kept after it ran
  EXPECT_TRUE(std::is_sorted(r.shots.begin(), r.shots.end())); // the dispenser counts up
  EXPECT_EQ(shots_over_groups(r, parallel, 7), std::vector<int>(7, 1));
  EXPECT_EQ(sum_over_ranks(summary.done_here, parallel), 7);
  if (parallel.size() == 1) {
    EXPECT_EQ(summary.seconds(), 21.0); // 7 shots x 3 steps x 1 s on the fake clock
    EXPECT_EQ(r.events.front(), "run 0");
    EXPECT_EQ(r.events[1], "keep 0");
  }
}

TEST(ShotLoop, ResumedShotsAreSkippedAndCounted) {
  const ParallelContext parallel(1);
  ShotLoopPlan plan = fake_plan(6, 2);
  plan.finished = {1, 0, 1, 1, 0, 0};
  Record r;
  double now = 0;
  ShotLoopControl control = quiet();
  std::vector<int> ordinals;
  control.shot_started = [&ordinals](int, int ordinal, int total) {
    EXPECT_EQ(total, 6);
    ordinals.push_back(ordinal);
  };
  std::ostringstream log;
  const ShotLoopSummary summary =
      run_shot_loop(plan, control, parallel, log, fake_body(r, now, 2, false), [&now] { return now; });
  EXPECT_EQ(summary.shots_resumed, 3);
  EXPECT_EQ(summary.shots_to_do, 3);
  EXPECT_EQ(shots_over_groups(r, parallel, 6), (std::vector<int>{0, 1, 0, 0, 1, 1}));
  if (parallel.size() == 1) {
    EXPECT_EQ(r.shots, (std::vector<int>{1, 4, 5}));
    EXPECT_EQ(ordinals, (std::vector<int>{4, 5, 6})); // resumed shots counted
    // The per-shot lines count the resumed shots too, and the time left is exact here.
    EXPECT_THAT(log.str(), HasSubstr("rtm: faked shot 4/6, 1.00 Gcells/s, 2.0 s elapsed, ~4.0 s left\n"));
    EXPECT_THAT(log.str(), HasSubstr("rtm: faked shot 6/6, 1.00 Gcells/s, 6.0 s elapsed, ~0.0 s left\n"));
  } else if (!parallel.is_root()) {
    EXPECT_TRUE(ordinals.empty()); // world rank 0 alone is told
  }
}

TEST(ShotLoop, CheckpointsFallDueEveryKShotsButNotAfterTheLast) {
  const ParallelContext parallel(1);
  for (int every : {1, 2, 3}) {
    SCOPED_TRACE("checkpoint every " + std::to_string(every));
    ShotLoopPlan plan = fake_plan(7, 1);
    plan.checkpoint_every = every;
    Record r;
    double now = 0;
    std::ostringstream log;
    run_shot_loop(plan, quiet(), parallel, log, fake_body(r, now, 1, true), [&now] { return now; });
    // Written before the next shot once `every` are unsaved: after shots every, 2 every, ... of
    // this group, never after its last (the final output follows at once).
    std::vector<int> expected;
    for (int k = every; k < int(r.kept.size()); k += every) expected.push_back(k);
    EXPECT_EQ(r.checkpoints, expected);
    if (parallel.size() == 1 && every == 2) {
      EXPECT_EQ(r.checkpoints, (std::vector<int>{2, 4, 6}));
      const auto first = std::find(r.events.begin(), r.events.end(), "checkpoint");
      ASSERT_NE(first, r.events.end());
      EXPECT_EQ(*(first - 1), "keep 1");
      EXPECT_EQ(*(first + 1), "run 2");
    }
  }
}

// An interval function (the automatic checkpoint policy) replaces checkpoint_every: asked at every
// boundary with unsaved shots and another on its way, its answer of the moment used.
TEST(ShotLoop, AnIntervalFunctionIsAskedWithUnsavedShotsAndItsAnswerUsed) {
  const ParallelContext parallel(1);
  ShotLoopPlan plan = fake_plan(7, 1);
  plan.checkpoint_every = 1; // replaced
  Record r;
  int asked = 0;
  std::vector<int> asked_with_kept;
  plan.checkpoint_interval = [&] {
    asked_with_kept.push_back(int(r.kept.size()));
    return ++asked == 1 ? 1 : 3; // the first after one shot, then every 3
  };
  double now = 0;
  std::ostringstream log;
  run_shot_loop(plan, quiet(), parallel, log, fake_body(r, now, 1, true), [&now] { return now; });
  // Asked before every shot but the group's first (no unsaved shot then), never after the last.
  ASSERT_EQ(asked_with_kept.size(), r.kept.empty() ? 0 : r.kept.size() - 1);
  for (size_t k = 0; k < asked_with_kept.size(); ++k) EXPECT_EQ(asked_with_kept[k], int(k) + 1);
  std::vector<int> expected;
  for (int k = 1; k < int(r.kept.size()); k += 3) expected.push_back(k); // after 1, 4, 7, ...
  EXPECT_EQ(r.checkpoints, expected);
  if (parallel.size() == 1) {
    EXPECT_EQ(r.checkpoints, (std::vector<int>{1, 4}));
  }
}

TEST(ShotLoop, NoPeriodicCheckpointWithKZero) {
  const ParallelContext parallel(1);
  ShotLoopPlan plan = fake_plan(5, 1);
  plan.checkpoint_every = 0;
  Record r;
  double now = 0;
  std::ostringstream log;
  run_shot_loop(plan, quiet(), parallel, log, fake_body(r, now, 1, true), [&now] { return now; });
  EXPECT_TRUE(r.checkpoints.empty());
}

TEST(ShotLoop, AStopAfterShotKEndsEveryRankWithOneSignalAndACheckpoint) {
  const ParallelContext parallel(1);
  const int total = 12, k = 3;
  ShotLoopPlan plan = fake_plan(total, 1);
  plan.checkpoint_every = 100; // none due before the stop
  Record r;
  double now = 0;
  ShotLoopControl control = quiet();
  int boundaries = 0;
  // World rank 0 is asked to stop at its (k+1)-th shot boundary, after k shots; the others never,
  // and their shots take longer, so that rank 0 surely gets k shots.
  control.stop_requested = [&] { return parallel.is_root() && ++boundaries > k ? 15 : 0; };
  const auto pause = std::chrono::milliseconds(parallel.is_root() ? 0 : 20);
  std::ostringstream log;
  const ShotLoopSummary summary = run_shot_loop(plan, control, parallel, log,
                                                fake_body(r, now, 1, true, pause), [&now] { return now; });
  EXPECT_EQ(summary.stop_signal, 15); // on every rank
  if (parallel.is_root()) {
    EXPECT_EQ(r.shots.size(), size_t(k));
  }
  // No shot twice, and not all of them: the counter was emptied for every group.
  const std::vector<int> count = shots_over_groups(r, parallel, total);
  EXPECT_EQ(*std::max_element(count.begin(), count.end()), 1);
  EXPECT_LT(sum_over_ranks(parallel.is_leader() ? summary.done_here : 0, parallel), total);
  // Each group saves what it had not saved: one checkpoint after its shots, none if it had none.
  if (r.kept.empty()) {
    EXPECT_TRUE(r.checkpoints.empty());
  } else {
    EXPECT_EQ(r.checkpoints, std::vector<int>{int(r.kept.size())});
  }
  EXPECT_EQ(r.events.empty() ? "" : r.events.back(), r.kept.empty() ? "" : "checkpoint");
}

TEST(ShotLoop, AStopBeforeTheFirstShotRunsNothingAndSavesNothing) {
  const ParallelContext parallel(1);
  Record r;
  double now = 0;
  ShotLoopControl control = quiet();
  control.stop_requested = [] { return 2; };
  std::ostringstream log;
  const ShotLoopSummary summary = run_shot_loop(fake_plan(4, 1), control, parallel, log,
                                                fake_body(r, now, 1, true), [&now] { return now; });
  EXPECT_EQ(summary.stop_signal, 2);
  EXPECT_EQ(summary.done_here, 0);
  EXPECT_TRUE(r.shots.empty());
  EXPECT_TRUE(r.checkpoints.empty());
  EXPECT_EQ(log.str(), "");
}

// A body that prepares: the loop names each shot of the group to prepare_shot one shot ahead, so
// prepare k+1 comes between prepare k and run k, and every shot run was prepared first.
ShotLoopBody preparing(ShotLoopBody body, Record& r, std::vector<int>& prepared) {
  body.prepare_shot = [&r, &prepared](int s) {
    prepared.push_back(s);
    r.events.push_back("prepare " + std::to_string(s));
  };
  return body;
}

TEST(ShotLoop, PrepareShotNamesTheNextShotWhileThisOneRuns) {
  const ParallelContext parallel(1);
  ShotLoopPlan plan = fake_plan(7, 2);
  plan.finished = {0, 0, 1, 0, 0, 0, 0};
  Record r;
  std::vector<int> prepared;
  double now = 0;
  std::ostringstream log;
  const ShotLoopSummary summary =
      run_shot_loop(plan, quiet(), parallel, log, preparing(fake_body(r, now, 2, false), r, prepared),
                    [&now] { return now; });
  EXPECT_EQ(summary.stop_signal, 0);
  EXPECT_EQ(prepared, r.shots); // each shot run was prepared, none prepared and dropped
  EXPECT_EQ(shots_over_groups(r, parallel, 7), (std::vector<int>{1, 1, 0, 1, 1, 1, 1}));
  // Within the group: "prepare a, prepare b, run a, keep a, prepare c, run b, ..."
  for (size_t i = 0; i + 1 < r.shots.size(); ++i) {
    const auto prepare_next = std::find(r.events.begin(), r.events.end(),
                                        "prepare " + std::to_string(r.shots[i + 1]));
    const auto run_this = std::find(r.events.begin(), r.events.end(),
                                    "run " + std::to_string(r.shots[i]));
    EXPECT_LT(prepare_next, run_this) << "shot " << r.shots[i + 1] << " prepared after shot "
                                      << r.shots[i] << " ran";
  }
  if (parallel.size() == 1) {
    EXPECT_EQ(std::vector<std::string>(r.events.begin(), r.events.begin() + 4),
              (std::vector<std::string>{"prepare 0", "prepare 1", "run 0", "keep 0"}));
  }
}

TEST(ShotLoop, AStopDropsTheShotPreparedAhead) {
  const ParallelContext parallel(1);
  const int total = 12, k = 3;
  ShotLoopPlan plan = fake_plan(total, 1);
  plan.checkpoint_every = 100;
  Record r;
  std::vector<int> prepared;
  double now = 0;
  ShotLoopControl control = quiet();
  int boundaries = 0;
  // As in the stop test above: world rank 0 asked to stop after k shots, the others slower.
  control.stop_requested = [&] { return parallel.is_root() && ++boundaries > k ? 15 : 0; };
  const auto pause = std::chrono::milliseconds(parallel.is_root() ? 0 : 20);
  std::ostringstream log;
  const ShotLoopSummary summary =
      run_shot_loop(plan, control, parallel, log,
                    preparing(fake_body(r, now, 1, true, pause), r, prepared), [&now] { return now; });
  EXPECT_EQ(summary.stop_signal, 15);
  if (parallel.is_root()) {
    EXPECT_EQ(r.shots.size(), size_t(k));
    // Not ASSERT: every rank must reach the collective checks below.
    EXPECT_EQ(prepared.size(), size_t(k + 1)); // the one taken ahead, dropped
    if (!prepared.empty()) {
      EXPECT_EQ(std::find(r.shots.begin(), r.shots.end(), prepared.back()), r.shots.end());
    }
  }
  const std::vector<int> count = shots_over_groups(r, parallel, total);
  EXPECT_EQ(*std::max_element(count.begin(), count.end()), 1);
  EXPECT_LT(sum_over_ranks(parallel.is_leader() ? summary.done_here : 0, parallel), total);
  if (!r.kept.empty()) {
    EXPECT_EQ(r.checkpoints, std::vector<int>{int(r.kept.size())});
  }
}

TEST(ShotLoop, ProgressInsideTheShotOnWorldRankZero) {
  const ParallelContext parallel(1);
  Record r;
  double now = 0;
  ShotLoopControl control;
  control.progress.interval_s = 4;
  control.progress.check_every = 1;
  std::ostringstream log;
  run_shot_loop(fake_plan(2, 10), control, parallel, log, fake_body(r, now, 10, false),
                [&now] { return now; });
  if (parallel.is_root() && parallel.group_count() == 1) {
    // Step 4 of shot 1 at 4 s: 6 s left of the shot, 16 s of the run.
    EXPECT_THAT(log.str(), HasSubstr("rtm: shot 1/2, step 4/10, 1.00 Gcells/s, ~6.0 s left (run: ~16 s)\n"));
    EXPECT_THAT(log.str(), HasSubstr("rtm: faked shot 1/2, 1.00 Gcells/s, 10.0 s elapsed, ~10.0 s left\n"));
  }
  if (!parallel.is_root()) {
    EXPECT_THAT(log.str(), Not(HasSubstr("step ")));
  }
}

int main(int argc, char** argv) {
  MpiRuntime mpi(&argc, &argv); // MPI only under a launcher
  ::testing::InitGoogleTest(&argc, argv);
  rtm::test::report_on_rank_0_only();
  return RUN_ALL_TESTS();
}
