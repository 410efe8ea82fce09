// The automatic checkpoint interval (solvers/drivers/checkpoint_policy.h) as a pure function of
// what a run measured: the smallest interval whose checkpoints cost at most 5% of the loop, the
// estimate before a checkpoint was measured, no checkpoints for a shot per group, and the user's
// interval winning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "solvers/drivers/checkpoint_policy.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

double cost(const CheckpointCosts& c, int k) {
  return c.loop_thread_s + std::max(0.0, c.write_s - k * c.shot_s);
}

TEST(CheckpointInterval, EveryShotWhenTheFileIsWrittenBesideAShortStep) {
  // The 512^3 case: 45 ms of queued copies, a 1 s file beside a 7.3 s shot.
  EXPECT_EQ(checkpoint_interval({7.3, 0.045, 1.0}), 1);
}

TEST(CheckpointInterval, AFileSlowerThanAShotIsWaitedForOnlyPastTheBudget) {
  // 46 GB at 2 GB/s beside 8.2 s shots: k = 2 would wait 23 - 16.4 = 6.6 s > 5% of 16.4 s; k = 3
  // waits for nothing.
  EXPECT_EQ(checkpoint_interval({8.2, 0.0, 23.0}), 3);
  // With 1 s on the loop's thread, 5% of k shots must cover it too: k >= 1 / 0.41 -> 3.
  EXPECT_EQ(checkpoint_interval({8.2, 1.0, 23.0}), 3);
  EXPECT_EQ(checkpoint_interval({8.2, 2.0, 23.0}), 5);
}

TEST(CheckpointInterval, OnTheLoopsThreadTheWholeFileCounts) {
  // The z-slab split writes on the loop's thread: 46 s against 8.2 s shots -> 46 / 0.41 = 112.2.
  EXPECT_EQ(checkpoint_interval({8.2, 46.0, 0.0}), 113);
  EXPECT_EQ(checkpoint_interval({8.2, 46.0, 0.0}, 0.5), 12); // 46 / 4.1 = 11.2
}

TEST(CheckpointInterval, IsTheSmallestIntervalWithinTheBudget) {
  std::mt19937 random(31);
  std::uniform_real_distribution<double> seconds(0.0, 50.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const CheckpointCosts c{seconds(random) + 0.01, seconds(random) * (trial % 3 == 0 ? 0 : 1),
                            seconds(random) * (trial % 5 == 0 ? 0 : 1)};
    const int k = checkpoint_interval(c);
    ASSERT_GE(k, 1);
    EXPECT_LE(cost(c, k), kCheckpointBudget * k * c.shot_s * (1 + 1e-12)) << trial;
    if (k > 1) {
      EXPECT_GT(cost(c, k - 1), kCheckpointBudget * (k - 1) * c.shot_s) << trial;
    }
  }
}

TEST(CheckpointInterval, OneWithoutAShotToWeighAgainstAndRefusesNonsense) {
  EXPECT_EQ(checkpoint_interval({0.0, 5.0, 5.0}), 1);
  EXPECT_THROW(checkpoint_interval({-1.0, 0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(checkpoint_interval({1.0, std::nan(""), 0.0}), std::invalid_argument);
  EXPECT_THROW(checkpoint_interval({1.0, 0.0, INFINITY}), std::invalid_argument);
  EXPECT_THROW(checkpoint_interval({1.0, 0.0, 0.0}, 0.0), std::invalid_argument);
}

TEST(CheckpointPolicy, NoneWhenEveryGroupHasOneShot) {
  const CheckpointPolicy one_shot(kAutomaticCheckpoints, 1, 1, 1000, true);
  EXPECT_FALSE(one_shot.periodic());
  EXPECT_EQ(one_shot.interval(), 0);
  EXPECT_THAT(one_shot.describe(), HasSubstr("none"));
  EXPECT_FALSE(CheckpointPolicy(kAutomaticCheckpoints, 4, 4, 1000, true).periodic());
  EXPECT_TRUE(CheckpointPolicy(kAutomaticCheckpoints, 5, 4, 1000, true).periodic());
}

TEST(CheckpointPolicy, TheUsersIntervalWins) {
  CheckpointPolicy every2(2, 1, 1, uint64_t(1e12), false); // even one shot, even a huge file
  EXPECT_FALSE(every2.automatic());
  EXPECT_TRUE(every2.periodic());
  every2.shot_finished(1.0);
  every2.checkpoint_taken(100.0);
  EXPECT_EQ(every2.interval(), 2);
  const CheckpointPolicy never(0, 10, 1, 1000, true);
  EXPECT_FALSE(never.periodic());
  EXPECT_EQ(never.interval(), 0);
  EXPECT_THROW(CheckpointPolicy(-2, 10, 1, 1000, true), std::invalid_argument);
}

TEST(CheckpointPolicy, EstimatesTheFirstThenUsesWhatItMeasured) {
  // 46e9 bytes on the loop's thread at the assumed 1 GB/s: 46 s against 8.2 s shots.
  CheckpointPolicy slabs(kAutomaticCheckpoints, 200, 1, uint64_t(46e9), false);
  slabs.shot_finished(8.0);
  slabs.shot_finished(8.4); // the mean, 8.2
  EXPECT_EQ(slabs.interval(), 113);
  EXPECT_THAT(slabs.describe(), HasSubstr("estimated at 1 GB/s"));
  slabs.checkpoint_taken(4.1); // measured: 10 times faster than assumed
  EXPECT_EQ(slabs.interval(), 10);
  EXPECT_THAT(slabs.describe(), ::testing::Not(HasSubstr("estimated")));

  // Beside the steps: the snapshot measured at once, the file's time only once written.
  CheckpointPolicy beside(kAutomaticCheckpoints, 200, 1, uint64_t(23e9), true);
  beside.shot_finished(8.2);
  EXPECT_EQ(beside.interval(), 3); // the file estimated at 23 s
  beside.checkpoint_taken(0.05);
  EXPECT_EQ(beside.costs().write_s, 23.0);
  beside.file_written(4.0); // faster than a shot: nothing waited for
  EXPECT_EQ(beside.interval(), 1);
  EXPECT_DOUBLE_EQ(beside.costs().loop_thread_s, 0.05);
  EXPECT_THAT(beside.describe(), HasSubstr("every 1 shot(s)"));
}

} // namespace
} // namespace rtm
