// cp.async (sm_80+): copies from global to shared memory that run in the background, tracked in
// per-thread commit groups, so a kernel can fetch the next plane while it computes this one.
#pragma once

#include <cuda_runtime.h>

namespace rtm::cuda {

// Copies 16 bytes from global `src` to shared `dst` (both 16-byte aligned), bypassing L1. When
// `valid` is false nothing is read and `dst` is zero-filled (src must still be a legal pointer).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
  const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const size_t src_global = __cvta_generic_to_global(src);
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared),
               "l"(src_global), "r"(src_bytes)
               : "memory");
}

// Closes the group of copies this thread issued since the last commit (possibly empty).
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `kPending` of this thread's committed groups are still in flight. Other
// threads' copies become visible only after a __syncthreads() that follows the wait.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

} // namespace rtm::cuda
