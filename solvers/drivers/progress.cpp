#include "solvers/drivers/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <sys/ioctl.h>
#include <unistd.h>

namespace rtm {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

int stderr_terminal_width() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

std::string human_duration(double seconds) {
  char text[64];
  const long long s = std::llround(std::max(0.0, seconds));
  if (seconds < 9.95) std::snprintf(text, sizeof text, "%.1f s", std::max(0.0, seconds));
  else if (s < 100) std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, (s % 3600) / 60);
  return text;
}

ShotProgress::ShotProgress(std::ostream& out, bool enabled, ProgressOptions options,
                           ProgressClock clock)
    : out_(out), enabled_(enabled && options.interval_s > 0), options_(options),
      clock_(std::move(clock)) {
  options_.check_every = std::max(1, options_.check_every);
}

void ShotProgress::start_run(int shots_total, int shots_before, std::vector<ProgressPhase> phases,
                             double cells_per_step, int groups) {
  shots_total_ = shots_total;
  shots_before_ = shots_before;
  phases_ = std::move(phases);
  if (phases_.empty()) phases_.push_back({});
  phase_seconds_.assign(phases_.size(), 0.0);
  phase_timed_.assign(phases_.size(), 0);
  steps_per_shot_ = 0;
  for (const ProgressPhase& p : phases_) steps_per_shot_ += p.steps;
  cells_per_step_ = cells_per_step;
  groups_ = std::max(1, groups);
  started_here_ = 0;
  shot_steps_ = run_steps_ = phase_steps_ = untimed_ = 0;
  between_seconds_ = 0;
  betweens_ = 0;
  phase_ = 0;
  in_shot_ = false;
  run_start_ = last_print_ = last_reading_ = clock_();
}

void ShotProgress::account(double now) {
  if (in_shot_) {
    phase_seconds_[phase_] += now - last_reading_;
    phase_timed_[phase_] += untimed_;
  }
  untimed_ = 0;
  last_reading_ = now;
}

void ShotProgress::start_shot(int shot_id) {
  const double now = clock_();
  if (started_here_ > 0) { // the time since the last shot ended: work between shots
    between_seconds_ += now - last_reading_;
    ++betweens_;
  }
  last_reading_ = now;
  untimed_ = 0;
  shot_id_ = shot_id;
  shot_steps_ = phase_steps_ = 0;
  phase_ = 0;
  in_shot_ = true;
  ++started_here_;
}

void ShotProgress::start_phase(int phase) {
  account(clock_());
  phase_ = std::min(size_t(std::max(0, phase)), phases_.size() - 1);
  phase_steps_ = 0;
}

void ShotProgress::end_shot() {
  account(clock_());
  in_shot_ = false;
  shot_steps_ = steps_per_shot_;
  phase_ = phases_.size() - 1;
  phase_steps_ = phases_.back().steps;
}

double ShotProgress::elapsed() const { return clock_() - run_start_; }

double ShotProgress::seconds_per_step(size_t phase) const {
  if (phase_timed_[phase] > 0) return phase_seconds_[phase] / double(phase_timed_[phase]);
  for (size_t q = 0; q < phases_.size(); ++q) // a guess from a timed phase
    if (phase_timed_[q] > 0 && phases_[q].relative_cost > 0)
      return phase_seconds_[q] / double(phase_timed_[q]) * phases_[phase].relative_cost /
             phases_[q].relative_cost;
  return 0;
}

double ShotProgress::shot_seconds_left() const {
  double left = 0;
  for (size_t p = phase_; p < phases_.size(); ++p) {
    const long long steps = p == phase_ ? std::max(0LL, phases_[p].steps - phase_steps_) : phases_[p].steps;
    left += double(steps) * seconds_per_step(p);
  }
  return left;
}

double ShotProgress::run_seconds_left() const {
  // Shots nobody has started yet, shared by the groups (each assumed as far along as this one).
  const int to_do = shots_total_ - shots_before_;
  const int unstarted = std::max(0, to_do - started_here_ * groups_);
  const long long shots_after = (unstarted + groups_ - 1) / groups_;
  if (shots_after == 0) return shot_seconds_left();
  double per_shot = betweens_ > 0 ? between_seconds_ / betweens_ : 0.0;
  for (size_t p = 0; p < phases_.size(); ++p) per_shot += double(phases_[p].steps) * seconds_per_step(p);
  return shot_seconds_left() + double(shots_after) * per_shot;
}

std::string ShotProgress::status() const {
  char text[320];
  const double seconds = elapsed();
  const double gcells =
      seconds > 0 ? cells_per_step_ * double(run_steps_) / seconds * 1e-9 : 0.0;
  char which[96];
  if (groups_ == 1)
    std::snprintf(which, sizeof which, "shot %d/%d", shots_before_ + started_here_, shots_total_);
  else
    std::snprintf(which, sizeof which, "shot %d (this group's %d; %d shots in all)", shot_id_,
                  started_here_, shots_total_);
  std::snprintf(text, sizeof text,
                "rtm: %s, step %lld/%lld, %.2f Gcells/s, ~%s left (run: ~%s)",
                which, shot_steps_, steps_per_shot_, gcells,
                human_duration(shot_seconds_left()).c_str(),
                human_duration(run_seconds_left()).c_str());
  return text;
}

void ShotProgress::poll() {
  const double now = clock_();
  account(now);
  if (!enabled_) return;
  if (now - last_print_ < options_.interval_s) return;
  last_print_ = now;
  if (options_.in_place) {
    std::string text = status();
    if (options_.width > 1 && text.size() >= size_t(options_.width))
      text.resize(size_t(options_.width) - 1); // the last column left free: no wrap
    out_ << '\r' << text << "\033[K" << std::flush; // \033[K: erase the rest of the old line
    line_open_ = true;
  } else {
    out_ << status() << '\n' << std::flush;
  }
}

void ShotProgress::line(const std::string& text) {
  finish();
  out_ << text << std::flush;
}

void ShotProgress::finish() {
  if (!line_open_) return;
  out_ << "\r\033[K" << std::flush;
  line_open_ = false;
}

} // namespace rtm
