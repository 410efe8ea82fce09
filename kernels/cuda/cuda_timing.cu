// Profiling of a CUDA wavefield (solvers/contracts/field_probes.h, enable_timing / timing): events around
// each timed operation on the field's stream, read back in batches.
#include <map>
#include <mutex>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/cuda_propagator.cuh"

namespace rtm::cuda {
namespace {

// While timing is on, every timed operation of every propagator on a device waits for this
// event and records it when done: timed operations then never overlap on the GPU (two
// propagators have two streams), so their intervals add up without counting shared time twice.
// One per device, for the life of the process (never destroyed: no CUDA call at exit).
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

void CudaWavefield::enable_timing(bool on) {
  CUDA_CHECK(cudaSetDevice(device_));
  collect_timing();
  if (on) timing_ = PropagatorTiming{};
  timing_on_ = on;
}

PropagatorTiming CudaWavefield::timing() const {
  CUDA_CHECK(cudaSetDevice(device_));
  collect_timing();
  return timing_;
}

cudaEvent_t CudaWavefield::idle_timing_event() const {
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

void CudaWavefield::begin_timed() const {
  if (!timing_on_) return;
  CUDA_CHECK(cudaStreamWaitEvent(stream_, timing_order_event(device_), 0));
  open_start_ = idle_timing_event();
  CUDA_CHECK(cudaEventRecord(open_start_, stream_));
}

void CudaWavefield::end_timed(TimedOp op) const {
  if (!timing_on_) return;
  const cudaEvent_t stop = idle_timing_event();
  CUDA_CHECK(cudaEventRecord(stop, stream_));
  CUDA_CHECK(cudaEventRecord(timing_order_event(device_), stream_));
  pending_.push_back({open_start_, stop, op});
  open_start_ = nullptr;
  if (pending_.size() >= kMaxPendingIntervals) collect_timing();
}

void CudaWavefield::collect_timing() const {
  if (pending_.empty()) return;
  CUDA_CHECK(cudaEventSynchronize(pending_.back().stop)); // stream order: all earlier ones too
  for (const TimedInterval& interval : pending_) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, interval.start, interval.stop));
    switch (interval.op) {
    case TimedOp::step: timing_.step_ms += ms; break; // steps: counted in finish_step()
    case TimedOp::points: timing_.points_ms += ms; break;
    case TimedOp::boundary: timing_.boundary_ms += ms; break;
    case TimedOp::imaging: timing_.imaging_ms += ms; break;
    case TimedOp::box_copy: timing_.box_copy_ms += ms; break;
    case TimedOp::born: timing_.born_ms += ms; break;
    }
    idle_events_.push_back(interval.start);
    idle_events_.push_back(interval.stop);
  }
  pending_.clear();
}

} // namespace rtm::cuda
