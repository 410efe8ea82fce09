// Error checks for the microkernels: every CUDA call and every launch, failing loudly with the
// call, the file and the line. (Our own small copy: kernels/micro builds on its own.)
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace rtm::micro::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t error, const char* what, const char* file,
                                          int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what +
                           " failed: " + cudaGetErrorName(error) + " (" +
                           cudaGetErrorString(error) + ")");
}

} // namespace rtm::micro::detail

// RTM_MICRO_CHECK(cudaMalloc(&p, bytes));
#define RTM_MICRO_CHECK(call)                                                                      \
  do {                                                                                             \
    const cudaError_t rtm_micro_error_ = (call);                                                   \
    if (rtm_micro_error_ != cudaSuccess)                                                           \
      ::rtm::micro::detail::throw_cuda_error(rtm_micro_error_, #call, __FILE__, __LINE__);         \
  } while (0)

// Right after kernel<<<...>>>(...): RTM_MICRO_CHECK_LAUNCH("kernel"). Catches bad launch
// configurations at once; faults inside the kernel surface at the next synchronising call.
#define RTM_MICRO_CHECK_LAUNCH(kernel_name)                                                        \
  do {                                                                                             \
    const cudaError_t rtm_micro_error_ = cudaGetLastError();                                       \
    if (rtm_micro_error_ != cudaSuccess)                                                           \
      ::rtm::micro::detail::throw_cuda_error(rtm_micro_error_, "launch of " kernel_name, __FILE__, \
                                             __LINE__);                                            \
  } while (0)
