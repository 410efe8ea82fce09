#include "app/stop_signals.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>

#include <signal.h>
#include <unistd.h>

namespace rtm::app {
namespace {

volatile std::sig_atomic_t received_signal = 0;
struct sigaction previous_int, previous_term;

// The acknowledgements, formatted in advance. Two sets: set_activity fills the one the handler is
// not reading and then flips `current`, so a signal arriving meanwhile reads a complete text.
struct Acknowledgement {
  char text[512];
  std::size_t length;
};
Acknowledgement acknowledgements[2][2]; // [set][0: SIGINT, 1: SIGTERM]
volatile std::sig_atomic_t current = 0;
volatile std::sig_atomic_t announcing = 0;
bool terminal = false; // stderr is a terminal: clear the progress line (and the echoed ^C) first

// Said on the second signal, before the process ends: the shot in progress is lost, the last
// checkpoint is not.
const char kSecondSignal[] =
    "rtm: stopped at once by the second signal; the shot(s) in progress are lost, the finished "
    "shots saved in the last checkpoint are kept: run the same command with --resume\n";

extern "C" void record_stop_signal(int signal) {
  if (received_signal != 0) {
    // The second: say so, then end as the default action would (the shell sees the signal, 130 or
    // 143), with only async-signal-safe calls (write, signal, raise).
    if (announcing) {
      const int saved_errno = errno;
      if (::write(STDERR_FILENO, kSecondSignal, sizeof kSecondSignal - 1) < 0) {
      }
      errno = saved_errno;
    }
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  received_signal = signal;
  if (!announcing) return;
  const Acknowledgement& a = acknowledgements[current][signal == SIGTERM ? 1 : 0];
  const int saved_errno = errno;
  // One write; a failure (a closed pipe) is of no consequence here.
  if (::write(STDERR_FILENO, a.text, a.length) < 0) {
  }
  errno = saved_errno;
}

void format(Acknowledgement& a, const char* signal_text, const char* again, const std::string& doing,
            const std::string& loses) {
  const int n = std::snprintf(a.text, sizeof a.text, "%srtm: %s: %s; %s again to stop now and %s\n",
                              terminal ? "\r\033[K" : "", signal_text, doing.c_str(), again,
                              loses.c_str());
  a.length = n < 0 ? 0 : std::min(std::size_t(n), sizeof a.text - 1);
}

} // namespace

StopOnSignals::StopOnSignals(bool announce) {
  received_signal = 0;
  terminal = ::isatty(STDERR_FILENO) == 1;
  announcing = 0;
  set_activity("stopping at the next shot boundary", "lose the shot in progress");
  announcing = announce ? 1 : 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // A second signal (of either kind) ends the process at once, after a word (record_stop_signal).
  // No SA_RESTART needed: the run makes no blocking system calls a signal must resume.
  action.sa_flags = 0;
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
  // Never restored: the run's last messages (after this object is gone) may meet a closed pipe.
  std::signal(SIGPIPE, SIG_IGN);
}

StopOnSignals::~StopOnSignals() {
  announcing = 0;
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int StopOnSignals::requested() { return received_signal; }

void StopOnSignals::set_activity(const std::string& doing, const std::string& loses) {
  const int next = 1 - current;
  format(acknowledgements[next][0], "Ctrl-C (SIGINT)", "Ctrl-C", doing, loses);
  format(acknowledgements[next][1], "SIGTERM", "SIGTERM", doing, loses);
  current = next;
}

std::string StopOnSignals::acknowledgement(int signal) {
  const Acknowledgement& a = acknowledgements[current][signal == SIGTERM ? 1 : 0];
  return std::string(a.text, a.length);
}

const char* signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  static thread_local std::string other;
  other = "signal " + std::to_string(signal);
  return other.c_str();
}

} // namespace rtm::app
