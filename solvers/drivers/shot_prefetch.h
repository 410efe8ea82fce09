// One job run ahead on a thread of its own: the next shot's set-up made while the current shot
// steps (docs/rtm.md, "Many shots"). start() launches the job for a shot; take() hands its result
// over, waiting for it where it is not done yet, and rethrows what the job threw, so an error in a
// shot's set-up surfaces when that shot runs, as it would without the prefetch.
//
// The job runs on a new std::thread made by the calling thread; on Linux it inherits that
// thread's floating-point mode (the flushed denormals of kernels/cpu/denormals.h), so its
// arithmetic is the caller's bit for bit. It must not call MPI (the runs initialise MPI for
// one thread) nor touch what the caller uses meanwhile.
#pragma once

#include <functional>
#include <future>
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
  ~ShotPrefetch() { drop(); }

  // Starts job() for `shot`, dropping a job not taken.
  void start(int shot, std::function<T()> job) {
    drop();
    shot_ = shot;
    pending_ = std::async(std::launch::async, std::move(job));
  }
  // Whether a job for `shot` was started and not taken yet.
  bool holds(int shot) const { return pending_.valid() && shot_ == shot; }
  // The job's result (holds() must be true): waits for it; rethrows its exception.
  T take() {
    shot_ = -1;
    return pending_.get();
  }

private:
  void drop() {
    if (pending_.valid()) pending_.wait(); // its result (or exception) goes with it
    pending_ = std::future<T>();
    shot_ = -1;
  }

  std::future<T> pending_;
  int shot_ = -1;
};

} // namespace rtm
