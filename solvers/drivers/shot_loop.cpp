#include "solvers/drivers/shot_loop.h"

#include <stdexcept>

#include "solvers/drivers/shot_parallel.h"

namespace rtm {

std::vector<int> unfinished_shots(int total, const std::vector<char>& finished) {
  if (!finished.empty() && finished.size() != size_t(total))
    throw std::invalid_argument("unfinished_shots: `finished` must hold one flag per shot");
  std::vector<int> remaining;
  for (int s = 0; s < total; ++s)
    if (finished.empty() || !finished[size_t(s)]) remaining.push_back(s);
  return remaining;
}

ShotLoopSummary run_shot_loop(const ShotLoopPlan& plan, const ShotLoopControl& control,
                              const ParallelContext& parallel, std::ostream& log,
                              const ShotLoopBody& body, const ProgressClock& clock) {
  const std::vector<int> remaining = unfinished_shots(plan.total, plan.finished);
  ShotLoopSummary summary;
  summary.shots_to_do = int(remaining.size());
  summary.shots_resumed = plan.total - summary.shots_to_do;
  const int done_before = summary.shots_resumed;

  ShotProgress progress(log, parallel.is_root(), control.progress, clock);
  progress.start_run(plan.total, done_before, plan.phases, plan.cells_per_step,
                     parallel.group_count());
  ShotDispenser dispenser(parallel, summary.shots_to_do);
  int local_signal = 0, done_here = 0, unsaved = 0;
  summary.start_s = clock();
  int ahead = -1; // the number taken one shot ahead (body.prepare_shot), -1: none
  for (;;) {
    if (local_signal == 0 && control.stop_requested) local_signal = control.stop_requested();
    int next = -1;
    const bool prepared = ahead >= 0;
    if (prepared) // taken already; a stop drops it (the group agrees on its leader's word)
      next = dispenser.stop_group(local_signal != 0) ? -1 : ahead;
    else
      next = dispenser.next(local_signal != 0);
    ahead = -1;
    if (next < 0) break;
    // Due, and another shot is on its way (body.checkpoint says why only then).
    const int every = body.checkpoint && unsaved > 0 && plan.checkpoint_interval
                          ? plan.checkpoint_interval()
                          : plan.checkpoint_every;
    if (body.checkpoint && every > 0 && unsaved >= every) {
      body.checkpoint();
      unsaved = 0;
    }
    const int s = remaining[size_t(next)];
    if (parallel.is_root() && control.shot_started)
      control.shot_started(s, done_before + done_here + 1, plan.total);
    if (body.prepare_shot) {
      if (!prepared) body.prepare_shot(s); // the first shot: nothing runs beside it
      ahead = dispenser.next(local_signal != 0);
      if (ahead >= 0) body.prepare_shot(remaining[size_t(ahead)]);
    }
    progress.start_shot(s);
    body.run_shot(s, progress);
    progress.end_shot();
    if (body.keep_shot) body.keep_shot(s);
    ++done_here;
    ++unsaved;

    const double elapsed = clock() - summary.start_s;
    const double gcells = plan.cell_updates_per_shot * done_here / elapsed * 1e-9;
    if (parallel.is_leader())
      progress.line(shot_progress_line(parallel, plan.verb, s, done_here, done_before, plan.total,
                                       elapsed, gcells));
  }
  progress.finish();
  summary.end_s = clock();
  summary.done_here = done_here;

  // A stop on any rank stops them all: what is not saved yet is saved now.
  summary.stop_signal = agree_on_stop(parallel, local_signal);
  if (summary.stop_signal != 0 && body.checkpoint && unsaved > 0) body.checkpoint();
  return summary;
}

} // namespace rtm
