// Applying the memory options (MemoryOptions, kernels/cuda/cuda_backend.h) to a propagator's buffers:
// compressible wavefield allocations and an L2 persisting access-policy window over v2dt2. Any
// kernel takes either; where the GPU lacks one, the propagator runs without it and says why.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/util/device_buffer.cuh"

namespace rtm::cuda {

// Appends `why` to `note` ("; " between two reasons).
void add_memory_note(std::string& note, const std::string& why);

// One wavefield buffer of `bytes` on `device`: compressible memory when `memory.compressible`, plain
// otherwise. When the GPU cannot give compressible memory the buffer is plain, memory.compressible
// is turned off (so a second wavefield is allocated plain at once) and `note` says why.
DeviceBuffer allocate_wavefield(size_t bytes, int device, MemoryOptions& memory, std::string& note);

// An L2 persisting access-policy window over one read-only buffer on one stream, for as long as it
// is set: lines of that buffer stay in L2 from step to step. clear() (also run by the destructor)
// removes the window, demotes every persisting line and restores the carve-out found, so later work
// sees an ordinary L2; call it before the stream is destroyed.
class L2PersistingWindow {
public:
  L2PersistingWindow() = default;
  ~L2PersistingWindow() { clear(); }
  L2PersistingWindow(const L2PersistingWindow&) = delete;
  L2PersistingWindow& operator=(const L2PersistingWindow&) = delete;

  // When memory.l2_persist: sets the window over `buffer` on `stream` (device `device` current).
  // A GPU without persisting L2 lines turns memory.l2_persist off, and `note` says so.
  void apply(cudaStream_t stream, const DeviceBuffer& buffer, int device, MemoryOptions& memory,
             std::string& note);
  void clear() noexcept;
  bool active() const { return active_; }

private:
  cudaStream_t stream_ = nullptr;
  bool active_ = false;
  size_t saved_persisting_limit_ = 0;
};

} // namespace rtm::cuda
