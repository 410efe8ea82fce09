// Jobs run ahead on threads of their own: a shot's set-up made while the shot before steps
// (docs/rtm.md, "Many shots"). start() launches the job for a shot; take() hands that shot's result
// over, waiting for it where it is not done yet, and rethrows what the job threw, so an error in a
// shot's set-up surfaces when that shot runs, as it would without the prefetch.
//
// Two jobs may be held at once: the shot loop names the shot about to run and then the one after
// it (ShotLoopBody::prepare_shot, solvers/drivers/shot_loop.h) before the first runs, so starting
// the second must not drop the first (it did once, and every shot but a group's last was then set
// up again on the loop's thread). start() keeps the job started last and drops any older one;
// take(shot) drops the jobs started before that shot's.
//
// Each job runs on a new std::thread made by the calling thread; on Linux it inherits that
// thread's floating-point mode (the flushed denormals of kernels/cpu/denormals.h), so its
// arithmetic is the caller's bit for bit. It must not call MPI (the runs initialise MPI for
// one thread) nor touch what the caller or the other job use meanwhile.
#pragma once

#include <deque>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <utility>

namespace rtm {

template <class T>
class ShotPrefetch {
public:
  ShotPrefetch() = default;
  ShotPrefetch(const ShotPrefetch&) = delete;
  ShotPrefetch& operator=(const ShotPrefetch&) = delete;
  // A job started and never taken (a shot dropped by a stop, or an error elsewhere) is waited
  // for: it may read what its owner is about to free.
  ~ShotPrefetch() {
    while (!jobs_.empty()) drop_front();
  }

  // Starts job() for `shot`; of the jobs held before, only the one started last is kept.
  void start(int shot, std::function<T()> job) {
    while (jobs_.size() > 1) drop_front();
    jobs_.push_back({shot, std::async(std::launch::async, std::move(job))});
  }
  // Whether a job for `shot` was started and not taken (nor dropped) yet.
  bool holds(int shot) const {
    for (const Job& j : jobs_)
      if (j.shot == shot) return true;
    return false;
  }
  // The result of `shot`'s job (holds(shot) must be true): waits for it; rethrows its exception.
  // Jobs started before it are dropped.
  T take(int shot) {
    if (!holds(shot))
      throw std::logic_error("ShotPrefetch::take: no job held for shot " + std::to_string(shot));
    while (jobs_.front().shot != shot) drop_front();
    std::future<T> result = std::move(jobs_.front().result);
    jobs_.pop_front();
    return result.get();
  }

private:
  struct Job {
    int shot;
    std::future<T> result;
  };
  void drop_front() {
    if (jobs_.front().result.valid()) jobs_.front().result.wait(); // its result (or exception) goes
    jobs_.pop_front();
  }

  std::deque<Job> jobs_;
};

} // namespace rtm
