// How often a migration checkpoints by default (`rtm migrate --checkpoint-every auto`,
// docs/rtm.md section 11b): as often as costs at most kCheckpointBudget of the loop, from what
// the run measures of a checkpoint against what it measures of a shot. A run whose shot groups
// have one shot each keeps none (a checkpoint after a group's last shot is never taken: the
// output follows). A number the user gives wins.
//
// The cost of a checkpoint every k shots, per checkpoint, is what the loop's thread spends on it
// (the sums' snapshot; with the model split over a group, the file itself) plus the wait for the
// file before when it is written beside the steps and takes longer than the k shots between:
//
//   cost(k) = loop_thread_s + max(0, write_s - k shot_s)   <=   budget x k shot_s
//
// The interval is the smallest k that keeps it; cost(k) falls and the budget grows with k, so one
// exists whenever a shot takes any time.
#pragma once

#include <cstdint>
#include <string>

namespace rtm {

constexpr int kAutomaticCheckpoints = -1; // MigrationControl::checkpoint_every: this policy
constexpr double kCheckpointBudget = 0.05; // the share of the loop checkpoints may cost
// The write rate assumed for the first checkpoint of a run, before one has been measured: a
// shared file system's pace, so that a large checkpoint is not written only to learn it was too
// slow. The measured figures replace it as soon as a checkpoint has been written.
constexpr double kAssumedCheckpointBytesPerSecond = 1e9;

// What one checkpoint costs and one shot takes, in seconds.
struct CheckpointCosts {
  double shot_s = 0;        // a shot of the group, wall clock
  double loop_thread_s = 0; // the loop's thread per checkpoint (snapshot; the file, where it is
                            // written there)
  double write_s = 0;       // the file written beside the steps, per checkpoint (0: on the loop's
                            // thread, counted above)
};

// The smallest k >= 1 with cost(k) <= budget x k x shot_s; 1 when shot_s is not positive (nothing
// measured to weigh against). Throws std::invalid_argument for a negative or non-finite cost or a
// budget outside (0, 1].
int checkpoint_interval(const CheckpointCosts& costs, double budget = kCheckpointBudget);

// The costs of a checkpoint of `bytes` before any was measured, at kAssumedCheckpointBytesPerSecond:
// written beside the steps (`beside_loop`) or on the loop's thread.
CheckpointCosts estimated_checkpoint_costs(double shot_s, uint64_t bytes, bool beside_loop);

// The automatic policy's state over a run on one shot group: what it measured so far and the
// interval it gives. Every rank of a group must see the same figures for the group to agree (the
// driver shares its leader's).
class CheckpointPolicy {
public:
  // `every`: kAutomaticCheckpoints, or the user's interval (0: only when stopped), which wins.
  // `shots_to_do` and `groups`: the automatic policy keeps no checkpoints when no group can have a
  // second shot on its way. `bytes`: a checkpoint's size, for the estimate before one is measured;
  // `beside_loop`: whether its file is written beside the steps.
  CheckpointPolicy(int every, int shots_to_do, int groups, uint64_t bytes, bool beside_loop);

  bool automatic() const { return every_ == kAutomaticCheckpoints; }
  // Whether the run may checkpoint before it is stopped (false: the automatic policy with a shot
  // per group, or the user's 0): the pinned staging and the disk space are needed only then.
  bool periodic() const;

  void shot_finished(double seconds);
  // A checkpoint's time on the loop's thread (not waiting for the file before).
  void checkpoint_taken(double loop_thread_s);
  // A file written beside the steps, its time on the writer's thread.
  void file_written(double write_s);

  // The interval now: the user's, or (automatic) from the means measured so far, the estimate
  // where nothing was; 0: no periodic checkpoints.
  int interval() const;
  // The figures the interval came from.
  CheckpointCosts costs() const;
  // "every 3 shot(s): a checkpoint 0.2 s on the loop's thread, its file 2.1 s beside the steps,
  // a shot 7.3 s (estimated at 1 GB/s until one is written)".
  std::string describe() const;

private:
  int every_;
  bool periodic_;
  uint64_t bytes_;
  bool beside_loop_;
  int shots_ = 0, checkpoints_ = 0, files_ = 0;
  double shot_s_ = 0, loop_thread_s_ = 0, write_s_ = 0; // sums
};

} // namespace rtm
