#include "kernels/cuda/util/operation_timer.cuh"

#include <map>
#include <mutex>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {
namespace {

// Every timed operation of every timer on a device waits for this event and records it when
// done: timed operations then never overlap on the GPU (two propagators have two streams), so
// their intervals add up without counting shared time twice. One per device, for the life of the
// process (never destroyed: no CUDA call at exit).
cudaEvent_t timing_order_event(int device) {
  static std::mutex mutex;
  static std::map<int, cudaEvent_t> events;
  const std::lock_guard<std::mutex> lock(mutex);
  cudaEvent_t& event = events[device];
  if (!event) CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

// Timed intervals waiting to be read back: reading them synchronises, so it happens in batches.
constexpr size_t kMaxPendingIntervals = 512;

} // namespace

OperationTimer::~OperationTimer() {
  for (cudaEvent_t event : all_events_) cudaEventDestroy(event);
}

cudaEvent_t OperationTimer::idle_event() {
  if (idle_events_.empty()) {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreate(&event));
    all_events_.push_back(event);
    return event;
  }
  const cudaEvent_t event = idle_events_.back();
  idle_events_.pop_back();
  return event;
}

void OperationTimer::begin(cudaStream_t stream) {
  CUDA_CHECK(cudaStreamWaitEvent(stream, timing_order_event(device_), 0));
  open_start_ = idle_event();
  CUDA_CHECK(cudaEventRecord(open_start_, stream));
}

void OperationTimer::end(cudaStream_t stream, int kind) {
  const cudaEvent_t stop = idle_event();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventRecord(timing_order_event(device_), stream));
  pending_.push_back({open_start_, stop, kind});
  open_start_ = nullptr;
  if (pending_.size() >= kMaxPendingIntervals) collect();
}

void OperationTimer::collect() {
  if (pending_.empty()) return;
  CUDA_CHECK(cudaEventSynchronize(pending_.back().stop)); // stream order: all earlier ones too
  for (const Interval& interval : pending_) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, interval.start, interval.stop));
    totals_[size_t(interval.kind)] += ms;
    idle_events_.push_back(interval.start);
    idle_events_.push_back(interval.stop);
  }
  pending_.clear();
}

void OperationTimer::reset() {
  collect();
  for (double& total : totals_) total = 0.0;
}

} // namespace rtm::cuda
