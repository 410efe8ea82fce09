// Progress inside a shot (solvers/drivers/progress.h): the time-left estimates driven by a fake clock, so
// the figures are exact and the test cannot be flaky: exact when every step costs the same, within
// 25% once 10% of the run is done when the sweeps of a shot cost differently (migration's backward
// sweeps also image), and the output: plain lines in a log, one line rewritten on a terminal, at
// most one update per interval.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "solvers/drivers/progress.h"

using namespace rtm;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// A run of `shots` shots on a fake clock: per shot `forward` steps costing `forward_cost` seconds
// each, then `backward` steps costing `backward_cost`, then `between` seconds outside the loop (a
// checkpoint). After every tick the estimates are compared with the truth (the fake clock's own
// remaining time); returns the largest relative error of the run estimate seen after
// `after_fraction` of the run, and of the shot estimate likewise.
struct Errors {
  double run = 0, shot = 0;
  int checked = 0;
};

Errors simulate(int shots, int forward, double forward_cost, int backward, double backward_cost,
                double between, double after_fraction, int groups = 1, double prior = 1.3) {
  double now = 100.0; // any origin
  std::ostringstream sink;
  ProgressOptions options;
  options.interval_s = 1e9; // no output; estimates are asked directly
  options.check_every = 1;
  ShotProgress progress(sink, false, options, [&now] { return now; });
  const double shot_time = forward * forward_cost + backward * backward_cost;
  const int my_shots = (shots + groups - 1) / groups;
  const double total = my_shots * shot_time + (my_shots - 1) * between;
  progress.start_run(shots, 0, {{forward, 1.0}, {backward, prior}}, 1e6, groups);
  const double start = now;
  Errors errors;
  for (int s = 0; s < my_shots; ++s) {
    if (s > 0) now += between;
    progress.start_shot(s);
    for (int k = 0; k < forward + backward; ++k) {
      if (k == forward) progress.start_phase(1);
      now += k < forward ? forward_cost : backward_cost;
      progress.tick();
      const double elapsed = now - start;
      const double run_left = total - elapsed;
      const double shot_done = k < forward ? (k + 1) * forward_cost
                                           : forward * forward_cost + (k + 1 - forward) * backward_cost;
      const double shot_left = shot_time - shot_done;
      if (elapsed < after_fraction * total) continue;
      ++errors.checked;
      if (run_left > 0)
        errors.run = std::max(errors.run, std::abs(progress.run_seconds_left() - run_left) / run_left);
      else
        EXPECT_EQ(progress.run_seconds_left(), 0.0);
      if (shot_left > 0 && s == 0) // within the first shot the shot estimate is the rate's alone
        errors.shot = std::max(errors.shot, std::abs(progress.shot_seconds_left() - shot_left) / shot_left);
    }
    progress.end_shot();
  }
  return errors;
}

} // namespace

TEST(Progress, ConstantStepRateGivesExactEstimates) {
  // The phases' guessed relative costs say "alike" too: nothing is guessed wrong.
  const Errors e = simulate(6, 100, 0.01, 299, 0.01, 0.0, 0.0, 1, 1.0);
  EXPECT_GT(e.checked, 1000);
  EXPECT_LT(e.run, 1e-6); // exact but for rounding (relative to a time left near 0 at the end)
  EXPECT_LT(e.shot, 1e-6);
}

TEST(Progress, EstimateWithinAQuarterAfterTenPercentWhenSweepsDiffer) {
  // Migration with boundary saving: nt forward steps, then 2 nt - 1 backward steps that also image
  // and restore the boundary (measured on the CPU: about 1.5x a forward step), and a checkpoint
  // between shots.
  for (const double backward_cost : {1.5, 2.5}) {
    SCOPED_TRACE(backward_cost);
    const Errors e = simulate(6, 200, 1.0, 399, backward_cost, 50.0, 0.10);
    EXPECT_GT(e.checked, 100);
    EXPECT_LT(e.run, 0.25);
  }
  // One long shot: the first 10% is all forward steps; still within a quarter.
  EXPECT_LT(simulate(1, 300, 1.0, 599, 1.5, 0.0, 0.10).run, 0.25);
  // Several shot groups at once: each does a third of the shots.
  EXPECT_LT(simulate(12, 200, 1.0, 399, 1.5, 20.0, 0.10, 3).run, 0.25);
}

TEST(Progress, ResumedShotsAreNotCountedAsLeft) {
  double now = 0;
  std::ostringstream sink;
  ShotProgress progress(sink, false, {}, [&now] { return now; });
  progress.start_run(10, 7, {{100, 1.0}}, 1e6); // 3 shots left
  progress.start_shot(7);
  for (int k = 0; k < 50; ++k) {
    now += 0.5;
    progress.tick();
  }
  EXPECT_DOUBLE_EQ(progress.shot_seconds_left(), 25.0);
  EXPECT_DOUBLE_EQ(progress.run_seconds_left(), 25.0 + 2 * 50.0);
  EXPECT_THAT(progress.status(), HasSubstr("shot 8/10, step 50/100"));
}

TEST(Progress, PlainLinesInALogAtMostOncePerInterval) {
  double now = 0;
  std::ostringstream log;
  ProgressOptions options;
  options.interval_s = 3;
  options.check_every = 4;
  ShotProgress progress(log, true, options, [&now] { return now; });
  progress.start_run(2, 0, {{1000, 1.0}}, 2e9);
  for (int s = 0; s < 2; ++s) {
    progress.start_shot(s);
    for (int k = 0; k < 1000; ++k) {
      now += 1.0 / 64; // 15.6 s per shot (exact in binary): 31.25 s in all, an update every 3 s
      progress.tick();
    }
    progress.end_shot();
    progress.line("rtm: shot done\n");
  }
  const std::string text = log.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10 + 2) << text;
  EXPECT_THAT(text, Not(HasSubstr("\r")));
  // The first after 3 s, at step 192: 2e9 cells per step at 64 steps/s are 128 Gcells/s; 808
  // steps left in the shot (12.6 s), 1808 in the run (28.25 s).
  EXPECT_THAT(text, ::testing::StartsWith("rtm: shot 1/2, step 192/1000, 128.00 Gcells/s, ~13 s "
                                          "left (run: ~28 s)\n"));
}

TEST(Progress, OneLineRewrittenInPlaceOnATerminal) {
  double now = 0;
  std::ostringstream terminal;
  ProgressOptions options;
  options.interval_s = 1;
  options.in_place = true;
  ShotProgress progress(terminal, true, options, [&now] { return now; });
  progress.start_run(1, 0, {{400, 1.0}}, 1e6);
  progress.start_shot(0);
  for (int k = 0; k < 200; ++k) {
    now += 0.02;
    progress.tick();
  }
  EXPECT_THAT(terminal.str(), Not(HasSubstr("\n")));
  EXPECT_EQ(terminal.str().front(), '\r');
  EXPECT_THAT(terminal.str(), HasSubstr("\033[K"));
  // Each update is cut to the terminal's width less one column, so it never wraps.
  std::ostringstream narrow;
  options.width = 40;
  ShotProgress cut(narrow, true, options, [&now] { return now; });
  cut.start_run(1, 0, {{400, 1.0}}, 1e6);
  cut.start_shot(0);
  for (int k = 0; k < 56; ++k) { // one update, after 1 s, at the clock reading after step 56
    now += 0.02;
    cut.tick();
  }
  EXPECT_EQ(narrow.str(), "\r" + cut.status().substr(0, 39) + "\033[K");
  progress.line("rtm: a message\n"); // clears the progress line first
  EXPECT_THAT(terminal.str(), ::testing::EndsWith("\r\033[Krtm: a message\n"));
  progress.finish(); // nothing open any more: nothing written
  EXPECT_THAT(terminal.str(), ::testing::EndsWith("rtm: a message\n"));
}

TEST(Progress, DisabledOrZeroIntervalPrintsNothingButLines) {
  for (const bool enabled : {false, true}) {
    double now = 0;
    std::ostringstream log;
    ProgressOptions options;
    options.interval_s = enabled ? 0 : 1; // disabled, or interval 0: no updates either way
    ShotProgress progress(log, enabled, options, [&now] { return now; });
    progress.start_run(1, 0, {{100, 1.0}}, 1e6);
    progress.start_shot(0);
    for (int k = 0; k < 100; ++k) {
      now += 1;
      progress.tick();
    }
    progress.line("rtm: shot line\n");
    EXPECT_EQ(log.str(), "rtm: shot line\n");
  }
}

TEST(Progress, HumanDurations) {
  EXPECT_EQ(human_duration(4.26), "4.3 s");
  EXPECT_EQ(human_duration(42.4), "42 s");
  EXPECT_EQ(human_duration(185), "3 min 05 s");
  EXPECT_EQ(human_duration(7640), "2 h 07 min");
  EXPECT_EQ(human_duration(-1), "0.0 s");
}
