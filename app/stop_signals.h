// Ending a long run cleanly on SIGINT (Ctrl-C) or SIGTERM (kill, a batch system's time limit):
// the handler records the signal and says at once what will happen ("rtm: SIGINT: finishing shot
// 3 of 6, then a checkpoint; Ctrl-C again to stop now and lose that shot"); the run looks at the
// signal at its next shot boundary, saves its work and stops (docs/robustness.md). A second
// signal of the same kind ends the process at once, as if no handler were installed, for a user
// who does not want to wait for the shot.
//
// SIGPIPE is ignored from then on, for the rest of the process: under `rtm ... | tee log` a
// Ctrl-C ends tee as well, and the run's later messages must fail quietly (EPIPE) instead of
// killing it before its checkpoint and its own exit status.
#pragma once

#include <string>

namespace rtm::app {

class StopOnSignals {
public:
  // Installs the handlers for SIGINT and SIGTERM. `announce`: the handler writes the
  // acknowledgement to stderr (world rank 0; other ranks stay quiet).
  explicit StopOnSignals(bool announce = true);
  ~StopOnSignals(); // restores the previous handlers (SIGPIPE stays ignored)
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // The signal received since the handlers were installed, or 0.
  static int requested();

  // What the run is doing, for the acknowledgement: "finishing shot 3 of 6, then a checkpoint",
  // and what a second signal costs: "lose that shot". Formatted here, outside the handler (which
  // may only call write(2)); call it whenever it changes (each shot).
  static void set_activity(const std::string& doing, const std::string& second_signal_loses);

  // The text the handler writes for `signal` now (for tests).
  static std::string acknowledgement(int signal);
};

// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int signal);

} // namespace rtm::app
