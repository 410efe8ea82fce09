#include "app/stop_signals.h"

#include <csignal>
#include <string>

#include <signal.h>

namespace rtm::app {
namespace {

volatile std::sig_atomic_t received_signal = 0;
struct sigaction previous_int, previous_term;

extern "C" void record_stop_signal(int signal) { received_signal = signal; }

} // namespace

StopOnSignals::StopOnSignals() {
  received_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the next signal of the same kind finds the default action again (ends the
  // process). No SA_RESTART needed: the run makes no blocking system calls a signal must resume.
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int StopOnSignals::requested() { return received_signal; }

const char* signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  static thread_local std::string other;
  other = "signal " + std::to_string(signal);
  return other.c_str();
}

} // namespace rtm::app
