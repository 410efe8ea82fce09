#include "kernels/cuda/util/driver_api.cuh"

#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {
namespace {

template <class Function>
void look_up(Function& function, const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  // CUDA_VERSION: the ABI of the prototypes in the cuda.h we compiled against.
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !address)
    throw CudaError(std::string("the CUDA driver does not provide ") + symbol + " (version " +
                    std::to_string(CUDA_VERSION) + ")");
  function = reinterpret_cast<Function>(address);
}

DriverApi load_driver_api() {
  DriverApi api;
  look_up(api.get_error_name, "cuGetErrorName");
  look_up(api.get_error_string, "cuGetErrorString");
  look_up(api.device_get, "cuDeviceGet");
  look_up(api.device_get_attribute, "cuDeviceGetAttribute");
  look_up(api.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
  look_up(api.mem_create, "cuMemCreate");
  look_up(api.mem_get_allocation_properties, "cuMemGetAllocationPropertiesFromHandle");
  look_up(api.mem_address_reserve, "cuMemAddressReserve");
  look_up(api.mem_map, "cuMemMap");
  look_up(api.mem_set_access, "cuMemSetAccess");
  look_up(api.mem_unmap, "cuMemUnmap");
  look_up(api.mem_release, "cuMemRelease");
  look_up(api.mem_address_free, "cuMemAddressFree");
  look_up(api.tensor_map_encode_tiled, "cuTensorMapEncodeTiled");
  return api;
}

} // namespace

const DriverApi& driver_api() {
  static const DriverApi api = load_driver_api();
  return api;
}

std::string driver_error_description(CUresult status) {
  const char* name = nullptr;
  const char* text = nullptr;
  try {
    const DriverApi& api = driver_api();
    if (api.get_error_name(status, &name) != CUDA_SUCCESS) name = nullptr;
    if (api.get_error_string(status, &text) != CUDA_SUCCESS) text = nullptr;
  } catch (const CudaError&) {
    // No driver to ask: the number is all we have.
  }
  return std::string(name ? name : "CUresult " + std::to_string(int(status))) + " (" +
         (text ? text : "no description") + ")";
}

} // namespace rtm::cuda
