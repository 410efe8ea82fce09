// The device time of a propagator's operations, summed by kind, without synchronising the host
// per operation: events around each operation on the propagator's stream, read back in batches
// (kernels/cuda/util/event_timer.cuh times one region and waits for it; this queues many).
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace rtm::cuda {

class OperationTimer {
public:
  // `device`: where the timed streams run (timed operations on one device never overlap, see the
  // .cu); `kinds`: how many kinds of operation the caller tells apart (0 .. kinds-1).
  OperationTimer(int device, int kinds) : device_(device), totals_(size_t(kinds), 0.0) {}
  ~OperationTimer();
  OperationTimer(const OperationTimer&) = delete;
  OperationTimer& operator=(const OperationTimer&) = delete;

  // Around one operation queued on `stream`: begin() before its first launch, end() after its
  // last, with its kind.
  void begin(cudaStream_t stream);
  void end(cudaStream_t stream, int kind);
  // Waits for the pending intervals and adds them to the totals.
  void collect();
  // Milliseconds of `kind` collected so far.
  double total_ms(int kind) const { return totals_[size_t(kind)]; }
  // Collects, then sets every total to 0.
  void reset();

private:
  struct Interval {
    cudaEvent_t start = nullptr, stop = nullptr;
    int kind = 0;
  };
  cudaEvent_t idle_event();

  int device_ = 0;
  std::vector<double> totals_;
  cudaEvent_t open_start_ = nullptr; // start event of the operation being timed
  std::vector<Interval> pending_;
  std::vector<cudaEvent_t> idle_events_, all_events_;
};

} // namespace rtm::cuda
