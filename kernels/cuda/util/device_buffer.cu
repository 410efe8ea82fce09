#include "kernels/cuda/util/device_buffer.cuh"

#include <atomic>
#include <cstdio>
#include <utility>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/driver_api.cuh"

namespace rtm::cuda {
namespace {

// Bytes held by live DeviceBuffers of this process (DeviceBuffer::live_bytes).
std::atomic<size_t> g_live_bytes{0};

CUmemAllocationProp compressible_properties(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
  return prop;
}


} // namespace

std::string compressible_memory_unavailable_reason(int device) {
  CUDA_CHECK(cudaSetDevice(device)); // initialises the driver and the device's primary context
  const DriverApi& cu = driver_api();
  CUdevice dev = 0;
  CU_CHECK(cu.device_get(&dev, device));
  int supported = 0;
  CU_CHECK(cu.device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, dev));
  if (!supported) return "the GPU does not support generic memory compression";
  int vmm = 0;
  CU_CHECK(cu.device_get_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
  if (!vmm) return "the GPU does not support the virtual memory management API (cuMemCreate)";
  return {};
}

DeviceBuffer::DeviceBuffer(size_t bytes, AllocationKind kind, int device, const char* what)
    : bytes_(bytes) {
  if (bytes == 0) return;
  if (kind == AllocationKind::compressible) {
    fallback_reason_ = compressible_memory_unavailable_reason(device);
    if (fallback_reason_.empty()) {
      const DriverApi& cu = driver_api();
      const CUmemAllocationProp prop = compressible_properties(device);
      size_t granularity = 0;
      CU_CHECK(cu.mem_get_allocation_granularity(&granularity, &prop,
                                             CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
      const size_t size = (bytes + granularity - 1) / granularity * granularity;
      CUmemGenericAllocationHandle handle = 0;
      const CUresult created = cu.mem_create(&handle, size, &prop, 0);
      if (created == CUDA_ERROR_OUT_OF_MEMORY) CU_CHECK(created); // throws: no fallback for that
      if (created != CUDA_SUCCESS) {
        fallback_reason_ = "cuMemCreate with generic compression failed: " + driver_error_description(created);
      } else {
        // The driver may quietly hand out uncompressed memory (e.g. compression resources
        // exhausted): ask what the allocation really got.
        CUmemAllocationProp granted{};
        CU_CHECK(cu.mem_get_allocation_properties(&granted, handle));
        if (granted.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC) {
          CU_CHECK(cu.mem_release(handle));
          fallback_reason_ = "the driver granted the allocation without compression";
        } else {
          CUdeviceptr address = 0;
          CU_CHECK(cu.mem_address_reserve(&address, size, 0, 0, 0));
          CU_CHECK(cu.mem_map(address, size, 0, handle, 0));
          CUmemAccessDesc access{};
          access.location = prop.location;
          access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
          CU_CHECK(cu.mem_set_access(address, size, &access, 1));
          ptr_ = reinterpret_cast<void*>(address);
          mapped_size_ = size;
          handle_ = handle;
          g_live_bytes += bytes_;
          return;
        }
      }
    }
  }
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); // clear it: the context is still usable
    size_t free_bytes = 0, total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    bytes_ = 0;
    throw CudaError("not enough device memory for " + std::string(what ? what : "a device buffer") +
                    ": " + std::to_string(bytes >> 20) + " MiB asked, " +
                    std::to_string(free_bytes >> 20) + " MiB free");
  }
  check_runtime(status, "cudaMalloc", __FILE__, __LINE__);
  g_live_bytes += bytes_;
}

size_t DeviceBuffer::live_bytes() { return g_live_bytes.load(); }

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      mapped_size_(std::exchange(other.mapped_size_, 0)), handle_(std::exchange(other.handle_, 0)),
      fallback_reason_(std::move(other.fallback_reason_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_size_ = std::exchange(other.mapped_size_, 0);
    handle_ = std::exchange(other.handle_, 0);
    fallback_reason_ = std::move(other.fallback_reason_);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (!ptr_) return;
  g_live_bytes -= bytes_;
  // Destructors must not throw: a failure here is reported and the rest is still released.
  if (mapped_size_ != 0) {
    // driver_api() succeeded when this buffer was made, so it does not throw here.
    const DriverApi& cu = driver_api();
    const auto address = reinterpret_cast<CUdeviceptr>(ptr_);
    const CUresult unmapped = cu.mem_unmap(address, mapped_size_);
    const CUresult released = cu.mem_release(handle_);
    const CUresult freed = cu.mem_address_free(address, mapped_size_);
    if (unmapped != CUDA_SUCCESS || released != CUDA_SUCCESS || freed != CUDA_SUCCESS)
      std::fprintf(stderr, "rtm: releasing a compressible device buffer failed (%s; %s; %s)\n",
                   driver_error_description(unmapped).c_str(),
                   driver_error_description(released).c_str(),
                   driver_error_description(freed).c_str());
  } else {
    const cudaError_t status = cudaFree(ptr_);
    if (status != cudaSuccess)
      std::fprintf(stderr, "rtm: cudaFree failed: %s\n", cudaGetErrorString(status));
  }
  ptr_ = nullptr;
  bytes_ = 0;
  mapped_size_ = 0;
  handle_ = 0;
}

} // namespace rtm::cuda
