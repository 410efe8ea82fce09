// Progress inside a shot (docs/robustness.md, "Progress and Ctrl-C"): the time loops of modeling
// and migration tick a ShotProgress once per wave step (every sweep of the grid counts: migration's
// forward source sweep, its backward source re-propagation and its receiver sweep), and at most
// once per interval it prints where the run is: the shot, steps done of the shot's total, Gcells/s,
// and the time left for the shot and for the run. On a terminal it is one line rewritten in place
// ('\r'); in a pipe or a log, plain lines.
//
// The estimate: a shot is a sequence of phases (modeling: one; migration: the forward source sweep,
// then the backward sweeps, which also image and restore the boundary), each timed on its own: the
// time per step measured in each phase times its steps left, plus the measured time between shots
// (checkpoint writes, data upload) for each shot still to come. A phase not yet timed is guessed
// from a timed one and the ratio of their `relative_cost`s, so a long first shot is estimated
// before its backward sweeps start. Exact when every step costs the same; within 25% once 10% of
// the run is done when the phases differ (tests/test_progress.cpp).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace rtm {

// One phase of a shot: how many steps it ticks, and what one of its steps costs relative to the
// other phases' (a guess, used only until the phase has been timed).
struct ProgressPhase {
  long long steps = 0;
  double relative_cost = 1;
};

// Seconds on some monotonic clock. Injectable, so tests drive the estimate deterministically.
using ProgressClock = std::function<double()>;
double steady_seconds(); // std::chrono::steady_clock

struct ProgressOptions {
  double interval_s = 3; // at most one update per interval; <= 0: no updates
  bool in_place = false; // a terminal: one line rewritten in place; otherwise plain lines
  int width = 0;         // in place: the terminal's columns (a longer line would wrap and scroll
                         // instead of being rewritten, so it is cut); 0: unknown, not cut
  int check_every = 8;   // ticks between two reads of the clock (keeps the loops cheap)
};

// Whether stderr is a terminal (isatty), for ProgressOptions::in_place, and its width in columns
// (0 when unknown).
bool stderr_is_terminal();
int stderr_terminal_width();

class ShotProgress {
public:
  // A reporter that prints to `out`; a disabled one counts but prints nothing (ranks that stay
  // quiet), so the loops need no conditions.
  ShotProgress(std::ostream& out, bool enabled, ProgressOptions options = {},
               ProgressClock clock = steady_seconds);
  ShotProgress(const ShotProgress&) = delete;
  ShotProgress& operator=(const ShotProgress&) = delete;

  // The run: `shots_total` shots of which `shots_before` were finished by an earlier run, each
  // made of `phases` (their steps summed: the shot's wave steps, all sweeps), `cells_per_step`
  // cells updated by one step (for Gcells/s), shared by `groups` shot groups working at once (the
  // run's time left assumes the other groups go as fast as this one). Starts the run's clock.
  void start_run(int shots_total, int shots_before, std::vector<ProgressPhase> phases,
                 double cells_per_step, int groups = 1);
  // A shot starts (in phase 0): `shot_id` is its number in the acquisition (for the message).
  void start_shot(int shot_id);
  // The current shot moves on to phase `phase`.
  void start_phase(int phase);
  // `steps` wave steps of the current shot are done.
  void tick(int steps = 1) {
    shot_steps_ += steps;
    run_steps_ += steps;
    phase_steps_ += steps;
    untimed_ += steps;
    if (++ticks_ >= options_.check_every) {
      ticks_ = 0;
      poll();
    }
  }
  void end_shot();
  // A line of its own (ending in '\n'), e.g. the per-shot summary: on a terminal the updating line
  // is cleared first, so the two never mix.
  void line(const std::string& text);
  // Clears the updating line (terminal); call before the run's final messages.
  void finish();

  // The estimates at this moment, in seconds (0 before any step is timed).
  double shot_seconds_left() const;
  double run_seconds_left() const;
  // The text of one update (no '\r', no newline).
  std::string status() const;

private:
  void poll();
  void account(double now); // the time since the last reading goes to the current phase
  double elapsed() const;
  double seconds_per_step(size_t phase) const; // 0: nothing timed yet

  std::ostream& out_;
  bool enabled_;
  ProgressOptions options_;
  ProgressClock clock_;
  int shots_total_ = 0, shots_before_ = 0, groups_ = 1;
  int started_here_ = 0; // shots this group started in this run
  int shot_id_ = -1;
  std::vector<ProgressPhase> phases_;
  std::vector<double> phase_seconds_;   // measured, per phase, over the run
  std::vector<long long> phase_timed_;  // steps those seconds cover
  size_t phase_ = 0;
  long long steps_per_shot_ = 0, shot_steps_ = 0, run_steps_ = 0, phase_steps_ = 0, untimed_ = 0;
  double between_seconds_ = 0; // measured between one shot's end and the next one's start
  int betweens_ = 0;
  bool in_shot_ = false;
  double cells_per_step_ = 0;
  double run_start_ = 0, last_print_ = 0, last_reading_ = 0;
  int ticks_ = 0;
  bool line_open_ = false; // an in-place line is on the terminal
};

// "42 s", "3 min 05 s", "2 h 07 min": a duration for people.
std::string human_duration(double seconds);

} // namespace rtm
