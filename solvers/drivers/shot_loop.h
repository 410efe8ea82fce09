// The one shot loop of modeling and migration (docs/design.md, "The shot loop"): it hands the
// shots still to do out to the shot groups (solvers/drivers/shot_parallel.h), asks at every shot
// boundary whether the run must stop, writes a checkpoint when one is due, reports progress
// (inside a shot and a line per finished shot, with the time left) and agrees on the stop over
// every rank. What a shot computes, what a checkpoint holds and how results are collected stay
// with the driver, which passes them in as callbacks:
//
//   set-up (grid, propagators, resume state)  ->  run_shot_loop(plan, control, ..., body)
//                                              ->  finishing (collect or sum, write)
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/progress.h"

namespace rtm {

// What a run is told from outside (app/stop_signals.h, the progress options); the shared part of
// ModelingControl and MigrationControl. The default: never stopped, nobody told, progress every
// 3 s.
struct ShotLoopControl {
  // Asked at every shot boundary: a signal number when the run must stop, 0 to go on.
  std::function<int()> stop_requested;
  // Called on world rank 0 as its group starts a shot: the shot's number, its ordinal among all the
  // run's shots (resumed ones counted; exact with one shot group) and the number of shots.
  std::function<void(int shot, int ordinal, int total)> shot_started;
  ProgressOptions progress; // inside-the-shot progress on world rank 0 (solvers/drivers/progress.h)
};

// The shots of a run and what they cost, for the dispenser and the progress output.
struct ShotLoopPlan {
  int total = 0;              // shots of the run, numbered 0 .. total-1
  std::vector<char> finished; // [total], 1: finished by an earlier run (resumed); empty: none
  const char* verb = "computed"; // of the per-shot line: "rtm: <verb> shot 3/10, ..."
  std::vector<ProgressPhase> phases; // of one shot: the steps ShotProgress is ticked with
  double cells_per_step = 0;         // cells one wave step updates (the progress's Gcells/s)
  double cell_updates_per_shot = 0;  // cells x steps x sweeps of one shot (the lines' Gcells/s)
  // Checkpoint after every `checkpoint_every` shots a group finishes (0: only when stopped).
  int checkpoint_every = 0;
  // When set, replaces checkpoint_every: asked for the interval at every shot boundary with unsaved
  // shots, on every rank of the group at the same boundaries (it may be collective over the group;
  // solvers/drivers/checkpoint_policy.h). 0: only when stopped.
  std::function<int()> checkpoint_interval;
};

// What a driver does per shot. Every callback is called on every rank of the shot group (they are
// collective over it where the propagator is split).
struct ShotLoopBody {
  // Computes shot `shot`, ticking `progress` once per wave step (and start_phase between sweeps).
  std::function<void(int shot, ShotProgress& progress)> run_shot;
  // After the shot's clock stopped: keeps its result (saves it, adds it to a list). May be empty.
  std::function<void(int shot)> keep_shot;
  // Saves the group's work so far. Called when `checkpoint_every` shots are unsaved and another
  // shot is on its way (after a group's last shot the driver's final output follows at once, so a
  // checkpoint there would be wasted), and once more when the run is stopped with shots unsaved.
  // Empty: the run keeps no checkpoints (or keeps each shot in keep_shot).
  std::function<void()> checkpoint;
  // When set, every shot is named to prepare_shot before it runs: the group's first at its start,
  // and each next one as the shot before starts (its number taken one shot ahead), so that the
  // driver can make that shot's set-up ready while this one steps (docs/rtm.md, section 11b). A
  // stop asked for during a shot drops the shot taken ahead (it is not run, and stays unfinished
  // for a resumed run). Empty: each number is taken at the boundary before its shot.
  std::function<void(int shot)> prepare_shot;
};

struct ShotLoopSummary {
  int stop_signal = 0;   // agreed over every rank: the largest asked for, 0 when none was
  int shots_resumed = 0; // finished by an earlier run
  int shots_to_do = 0;   // the rest, over every group (all of them done unless stopped)
  int done_here = 0;     // by this rank's group
  double start_s = 0, end_s = 0; // the loop on the plan's clock: from the first shot boundary to
                                 // the last (before the stop is agreed)
  double seconds() const { return end_s - start_s; }
};

// The shot numbers not finished yet, in order.
std::vector<int> unfinished_shots(int total, const std::vector<char>& finished);

// Runs every unfinished shot of `plan` once over the ranks of `parallel` (collective: every rank
// calls it with the same plan), as `body` says, under `control`. Progress goes to `log`: the
// in-shot updates on world rank 0 (when control.progress allows), a line per finished shot on each
// group's leader. `clock` times the progress and the summary (injectable for tests).
ShotLoopSummary run_shot_loop(const ShotLoopPlan& plan, const ShotLoopControl& control,
                              const ParallelContext& parallel, std::ostream& log,
                              const ShotLoopBody& body,
                              const ProgressClock& clock = steady_seconds);

} // namespace rtm
