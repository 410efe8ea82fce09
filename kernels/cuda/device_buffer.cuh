// An owning device array: ordinary cudaMalloc memory, or compressible memory through the driver's
// virtual-memory API (cuMemCreate with generic compression, mapped with cuMemMap).
//
// Compressible memory lets the GPU store runs of equal bytes (a wavefield that is still mostly
// zero) in fewer DRAM bursts; kernels see ordinary device pointers either way.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace rtm::cuda {

enum class AllocationKind { plain, compressible };

// Empty when `device` can allocate compressible memory; otherwise the reason it cannot.
std::string compressible_memory_unavailable_reason(int device);

class DeviceBuffer {
public:
  DeviceBuffer() = default;
  // Allocates `bytes` on `device` (the current device). A compressible request on a GPU that
  // cannot honour it falls back to plain memory; fallback_reason() then says why.
  DeviceBuffer(size_t bytes, AllocationKind kind, int device);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  template <class T> T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  bool compressed() const { return mapped_size_ != 0; }
  const std::string& fallback_reason() const { return fallback_reason_; }

private:
  void release() noexcept;

  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  // Compressible allocations only: the mapped (granularity-rounded) size and the physical handle.
  size_t mapped_size_ = 0;
  CUmemGenericAllocationHandle handle_ = 0;
  std::string fallback_reason_;
};

} // namespace rtm::cuda
