// Ending a long run cleanly on SIGINT (Ctrl-C) or SIGTERM (kill, a batch system's time limit):
// the handler only records the signal; the run looks at it at its next shot boundary, writes its
// checkpoint and stops (docs/robustness.md). A second signal of the same kind ends the process at
// once, as if no handler were installed, for a user who does not want to wait for the shot.
#pragma once

namespace rtm::app {

class StopOnSignals {
public:
  StopOnSignals();  // installs the handlers for SIGINT and SIGTERM
  ~StopOnSignals(); // restores the previous ones
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // The signal received since the handlers were installed, or 0.
  static int requested();
};

// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int signal);

} // namespace rtm::app
