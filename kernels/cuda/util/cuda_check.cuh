// Error checks for every CUDA runtime and driver call, and for every kernel launch.
//
// A failing call throws rtm::cuda::CudaError whose message names the file, the line, the
// expression that failed and the error string, so a report from the GPU machine says exactly where.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace rtm::cuda {

class CudaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(const char* what, const char* error_name,
                                          const char* error_text, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + " failed: " +
                  error_name + " (" + error_text + ")");
}

inline void check_runtime(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess)
    throw_cuda_error(expr, cudaGetErrorName(status), cudaGetErrorString(status), file, line);
}

// "CUDA_ERROR_NAME (description)" for a driver status (driver_api.cu asks the driver).
std::string driver_error_description(CUresult status);

inline void check_driver(CUresult status, const char* expr, const char* file, int line) {
  if (status == CUDA_SUCCESS) return;
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                  " failed: " + driver_error_description(status));
}

inline void check_launch(const std::string& kernel_name, const char* file, int line) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw_cuda_error(("launch of " + kernel_name).c_str(), cudaGetErrorName(status),
                     cudaGetErrorString(status), file, line);
}

} // namespace rtm::cuda

// CUDA_CHECK(cudaMalloc(...)): a runtime API call.
#define CUDA_CHECK(expr) ::rtm::cuda::check_runtime((expr), #expr, __FILE__, __LINE__)
// CU_CHECK(driver_api().mem_create(...)): a driver API call (kernels/cuda/util/driver_api.cuh).
#define CU_CHECK(expr) ::rtm::cuda::check_driver((expr), #expr, __FILE__, __LINE__)
// CUDA_CHECK_LAUNCH("kernel name") right after a <<<...>>> launch: catches bad configurations at once.
// Errors raised while the kernel runs surface at the next synchronising call, which is checked too.
#define CUDA_CHECK_LAUNCH(kernel_name) ::rtm::cuda::check_launch((kernel_name), __FILE__, __LINE__)
