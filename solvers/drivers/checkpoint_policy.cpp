#include "solvers/drivers/checkpoint_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace rtm {

namespace {
void check_seconds(double s, const char* what) {
  if (!(s >= 0) || !std::isfinite(s))
    throw std::invalid_argument(std::string("checkpoint policy: ") + what + " of " +
                                std::to_string(s) + " s");
}
} // namespace

int checkpoint_interval(const CheckpointCosts& c, double budget) {
  if (!(budget > 0 && budget <= 1)) throw std::invalid_argument("checkpoint policy: budget outside (0, 1]");
  check_seconds(c.shot_s, "a shot");
  check_seconds(c.loop_thread_s, "a checkpoint on the loop's thread");
  check_seconds(c.write_s, "a checkpoint's file");
  if (c.shot_s <= 0) return 1;
  // Beyond this k even the whole cost fits: cost(k) <= loop_thread_s + write_s <= budget k shot_s.
  const double bound = std::ceil((c.loop_thread_s + c.write_s) / (budget * c.shot_s));
  const int last = int(std::min(std::max(bound, 1.0), 1e9));
  for (int k = 1; k < last; ++k) {
    const double cost = c.loop_thread_s + std::max(0.0, c.write_s - k * c.shot_s);
    if (cost <= budget * k * c.shot_s) return k;
  }
  return last;
}

CheckpointCosts estimated_checkpoint_costs(double shot_s, uint64_t bytes, bool beside_loop) {
  CheckpointCosts c;
  c.shot_s = shot_s;
  const double write_s = double(bytes) / kAssumedCheckpointBytesPerSecond;
  (beside_loop ? c.write_s : c.loop_thread_s) = write_s;
  return c;
}

CheckpointPolicy::CheckpointPolicy(int every, int shots_to_do, int groups, uint64_t bytes,
                                   bool beside_loop)
    : every_(every), bytes_(bytes), beside_loop_(beside_loop) {
  if (every < kAutomaticCheckpoints)
    throw std::invalid_argument("checkpoint policy: an interval of " + std::to_string(every));
  periodic_ = automatic() ? shots_to_do > std::max(groups, 1) : every > 0;
}

bool CheckpointPolicy::periodic() const { return periodic_; }

void CheckpointPolicy::shot_finished(double seconds) {
  check_seconds(seconds, "a shot");
  ++shots_;
  shot_s_ += seconds;
}

void CheckpointPolicy::checkpoint_taken(double loop_thread_s) {
  check_seconds(loop_thread_s, "a checkpoint on the loop's thread");
  ++checkpoints_;
  loop_thread_s_ += loop_thread_s;
}

void CheckpointPolicy::file_written(double write_s) {
  check_seconds(write_s, "a checkpoint's file");
  ++files_;
  write_s_ += write_s;
}

CheckpointCosts CheckpointPolicy::costs() const {
  const double shot = shots_ > 0 ? shot_s_ / shots_ : 0.0;
  if (checkpoints_ == 0) return estimated_checkpoint_costs(shot, bytes_, beside_loop_);
  CheckpointCosts c;
  c.shot_s = shot;
  c.loop_thread_s = loop_thread_s_ / checkpoints_;
  // Beside the steps: the files written so far; while the first is still being written, the
  // estimate.
  if (beside_loop_)
    c.write_s = files_ > 0 ? write_s_ / files_ : estimated_checkpoint_costs(shot, bytes_, true).write_s;
  return c;
}

int CheckpointPolicy::interval() const {
  if (!automatic()) return every_;
  if (!periodic_) return 0;
  return checkpoint_interval(costs());
}

std::string CheckpointPolicy::describe() const {
  const int k = interval();
  if (!automatic()) return k > 0 ? "every " + std::to_string(k) + " shot(s) (--checkpoint-every)"
                                 : "none until stopped (--checkpoint-every 0)";
  if (!periodic_) return "none: no shot group has a second shot (only when stopped)";
  const CheckpointCosts c = costs();
  char file[96] = "";
  if (beside_loop_) std::snprintf(file, sizeof file, ", its file %.3f s beside the steps", c.write_s);
  const bool estimated = checkpoints_ == 0 || (beside_loop_ && files_ == 0);
  char text[320];
  std::snprintf(text, sizeof text,
                "every %d shot(s): a checkpoint %.3f s on the loop's thread%s, a shot %.3f s; at "
                "most %.0f%% of the loop%s",
                k, c.loop_thread_s, file, c.shot_s, 100 * kCheckpointBudget,
                estimated ? " (the checkpoint estimated at 1 GB/s until one is written)" : "");
  return text;
}

} // namespace rtm
