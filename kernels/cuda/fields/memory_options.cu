#include "kernels/cuda/fields/memory_options.cuh"

#include <algorithm>
#include <cstdio>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {

void add_memory_note(std::string& note, const std::string& why) {
  note += (note.empty() ? "" : "; ") + why;
}

DeviceBuffer allocate_wavefield(size_t bytes, int device, MemoryOptions& memory, std::string& note) {
  DeviceBuffer buffer(bytes, memory.compressible ? AllocationKind::compressible : AllocationKind::plain,
                      device);
  if (memory.compressible && !buffer.compressed()) {
    add_memory_note(note, "compressible memory unavailable (" + buffer.fallback_reason() +
                              "); the wavefields use ordinary device memory");
    memory.compressible = false;
  }
  return buffer;
}

// The window covers v2dt2 in the propagator: the one array read every step and never written, so
// the lines kept in L2 serve every later step (the wavefields change roles each step and are
// rewritten). Window size: all of the buffer up to the device's largest window; hit ratio: the
// share of the window that fits in the persisting carve-out, so persisting lines do not evict each
// other. Carve-out: at most a quarter of L2 (and no more than the buffer needs). Measured on an
// H200 at 512^3 (docs/variants.md): the device's maximum (37.5 of 60 MB) leaves too little normal
// L2 for the neighbour reuse between tiles, and the step ran 2.2x slower; 4 or 16 MB cost nothing
// there and gave +2% at 192^3, where v2dt2 (28 MB) nearly fits. Why the large carve-out hurts:
// with it, stores to normal lines drain to DRAM at under half the bandwidth (loads are not slowed);
// a quarter costs 0-5% (docs/micro.md, l2-window, "Loads or stores").
void L2PersistingWindow::apply(cudaStream_t stream, const DeviceBuffer& buffer, int device,
                               MemoryOptions& memory, std::string& note) {
  clear();
  if (!memory.l2_persist) return;
  int max_persisting = 0, max_window = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  if (max_persisting <= 0 || max_window <= 0) {
    add_memory_note(note, "the GPU has no persisting L2 lines; l2_persist is off");
    memory.l2_persist = false;
    return;
  }
  CUDA_CHECK(cudaDeviceGetLimit(&saved_persisting_limit_, cudaLimitPersistingL2CacheSize));
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  const size_t carve_out = std::min({size_t(max_persisting), size_t(l2_bytes) / 4, buffer.bytes()});
  stream_ = stream;
  active_ = true; // set before the first change so that a failure still restores the limit
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve_out));
  size_t granted = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
  const size_t window = std::min(buffer.bytes(), size_t(max_window));
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = buffer.data();
  attr.accessPolicyWindow.num_bytes = window;
  attr.accessPolicyWindow.hitRatio = float(std::min(1.0, double(granted) / double(window)));
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
}

void L2PersistingWindow::clear() noexcept {
  if (!active_) return;
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.num_bytes = 0;
  const cudaError_t cleared =
      cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr);
  const cudaError_t reset = cudaCtxResetPersistingL2Cache();
  const cudaError_t restored =
      cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, saved_persisting_limit_);
  if (cleared != cudaSuccess || reset != cudaSuccess || restored != cudaSuccess)
    std::fprintf(stderr, "rtm: resetting the L2 persisting window failed (%s, %s, %s)\n",
                 cudaGetErrorString(cleared), cudaGetErrorString(reset),
                 cudaGetErrorString(restored));
  active_ = false;
  stream_ = nullptr;
}

} // namespace rtm::cuda
