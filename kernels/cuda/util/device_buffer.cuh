// Owning device memory, the one kind every CUDA user of the project allocates (the propagators,
// the benchmarks, the microkernels): DeviceBuffer, untyped bytes, ordinary cudaMalloc memory or
// compressible memory through the driver's virtual-memory API (cuMemCreate with generic
// compression, mapped with cuMemMap); DeviceArray<T>, a typed array of count elements on top of it
// with the host transfers the tests and microkernels need.
//
// Compressible memory lets the GPU store runs of equal bytes (a wavefield that is still mostly
// zero) in fewer DRAM bursts; kernels see ordinary device pointers either way.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {

enum class AllocationKind { plain, compressible };

// Empty when `device` can allocate compressible memory; otherwise the reason it cannot.
std::string compressible_memory_unavailable_reason(int device);

class DeviceBuffer {
public:
  DeviceBuffer() = default;
  // Allocates `bytes` on `device` (the current device). A compressible request on a GPU that
  // cannot honour it falls back to plain memory; fallback_reason() then says why. Too little
  // device memory throws CudaError naming `what`, the size asked and the memory free.
  DeviceBuffer(size_t bytes, AllocationKind kind, int device, const char* what = "a device buffer");
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
  // Bytes held by this process's live buffers, all devices: exact, unlike the device's free memory,
  // which other processes and the allocator's caching move (tests of what an owner gives back).
  static size_t live_bytes();

private:
  void release() noexcept;

  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  // Compressible allocations only: the mapped (granularity-rounded) size and the physical handle.
  size_t mapped_size_ = 0;
  CUmemGenericAllocationHandle handle_ = 0;
  std::string fallback_reason_;
};

// `count` elements of T in plain device memory on the current device, freed when it goes out of
// scope. `what` names the array in the message when the device has too little memory.
template <class T>
class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(int64_t count, const char* what)
      : buffer_(count > 0 ? size_t(count) * sizeof(T) : 0, AllocationKind::plain, current_device(),
                what),
        count_(count > 0 ? count : 0) {}

  T* data() const { return buffer_.as<T>(); }
  int64_t size() const { return count_; }
  size_t bytes() const { return buffer_.bytes(); }

  void upload(const std::vector<T>& host) {
    if (static_cast<int64_t>(host.size()) != count_)
      throw std::invalid_argument("DeviceArray::upload: " + std::to_string(host.size()) +
                                  " values for an array of " + std::to_string(count_));
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(data(), host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(static_cast<size_t>(count_));
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), data(), bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // All bits set: NaN as float or double, so an element a kernel forgets to write fails a check.
  void poison(cudaStream_t stream) {
    if (count_ > 0) CUDA_CHECK(cudaMemsetAsync(data(), 0xFF, bytes(), stream));
  }

private:
  static int current_device() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }

  DeviceBuffer buffer_;
  int64_t count_ = 0;
};

} // namespace rtm::cuda
