// The few CUDA driver API functions the backend needs (compressible allocations through the
// virtual-memory API, tensor maps for the Hopper bulk tensor copy), looked up at run time through the runtime's cudaGetDriverEntryPointByVersion.
//
// Why not link libcuda directly: a program linked to libcuda.so.1 does not even start on a machine
// without the NVIDIA driver (CI, developer machines), so the CPU tests of a CUDA build and
// `rtm --help` would fail there. Through the runtime, the program starts anywhere and reports
// "no usable GPU" where there is none.
#pragma once

#include <cuda.h>

namespace rtm::cuda {

struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) mem_get_allocation_granularity = nullptr;
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemGetAllocationPropertiesFromHandle) mem_get_allocation_properties = nullptr;
  decltype(&::cuMemAddressReserve) mem_address_reserve = nullptr;
  decltype(&::cuMemMap) mem_map = nullptr;
  decltype(&::cuMemSetAccess) mem_set_access = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemAddressFree) mem_address_free = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
};

// The driver functions; the first call looks them up (throws CudaError when the driver lacks one).
const DriverApi& driver_api();

} // namespace rtm::cuda
