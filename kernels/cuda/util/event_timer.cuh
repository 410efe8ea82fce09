// Device time measured with CUDA events around a region of queued work: the one way every timing
// in the project is taken (the propagators' profiling through kernels/cuda/util/operation_timer.cuh, the
// `--variant auto` choice, `rtm bench`, `rtm info`, `rtm micro`). Medians come from
// solvers/contracts/median.h.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {

// A timing event that destroys itself.
class Event {
public:
  Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { (void)cudaEventDestroy(event_); } // a destructor cannot throw
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  Event& operator=(Event&&) = delete;

  operator cudaEvent_t() const { return event_; }
  void record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(event_)); }
  // Milliseconds from `start` to this event; both recorded, this one complete.
  float ms_since(const Event& start) const {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

private:
  cudaEvent_t event_ = nullptr;
};

// Events around a region: time(stream, region) queues region() on `stream` between two events,
// waits for the second and returns the device time in between, in milliseconds.
class EventTimer {
public:
  template <class Region>
  double time(cudaStream_t stream, Region&& region) {
    start_.record(stream);
    region();
    stop_.record(stream);
    stop_.synchronize();
    return stop_.ms_since(start_);
  }

private:
  Event start_, stop_;
};

// How a launch is repeated to be timed.
struct LaunchRepeats {
  int warmup = 2;       // untimed launches first (module load, first touch, clocks)
  int repeats = 20;     // timed launches...
  double budget_ms = 0; // ...fewer (never under 3) when the last warm-up says they would take
                        // longer than this in all; 0: no budget
};

// Times `launch` (which queues one kernel or copy on `stream` and checks it) with events around
// each launch: the warm-up launches, then the timed ones; returns the timed ones' milliseconds.
template <class Launch>
std::vector<double> time_launches(cudaStream_t stream, const LaunchRepeats& options, Launch&& launch) {
  EventTimer timer;
  double last_warm_ms = 0;
  for (int i = 0; i < options.warmup; ++i) last_warm_ms = timer.time(stream, launch);
  int repeats = std::max(1, options.repeats);
  if (options.budget_ms > 0 && last_warm_ms > 0)
    repeats = std::min(repeats, std::max(3, static_cast<int>(options.budget_ms / last_warm_ms)));
  std::vector<double> ms(static_cast<size_t>(repeats));
  for (double& m : ms) m = timer.time(stream, launch);
  return ms;
}

} // namespace rtm::cuda
