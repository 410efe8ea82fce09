// The Hopper bulk tensor copy (TMA, sm_90+): one thread asks the copy engine for a whole box of
// a 3-D array, the engine writes it to shared memory and reports the bytes on a shared-memory
// barrier (mbarrier); the threads that need the box wait on the barrier's phase. No register
// holds the data in flight, so a kernel can keep many planes in flight at any occupancy.
//
// Device side: the PTX wrappers. Host side: make_plane_tensor_map, which describes a padded
// float array (GridLayout) to the copy engine.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "solvers/contracts/grid_layout.h"

namespace rtm::cuda {

// Describes the float array at `array` (GridLayout g, halos included) as a 3-D tensor whose
// coordinates are (x + kHalo, y + kHalo, z + kHalo): the halo cell (-kHalo, -kHalo, -kHalo) is
// (0, 0, 0). Boxes of box_x x box_y x 1 cells; parts of a box outside the tensor read as zeros.
CUtensorMap make_plane_tensor_map(const float* array, const GridLayout& g, int box_x, int box_y);
// The same for a half array (half_v2dt2's v2dt2), except that the tensor starts 4 cells further
// left, at (-2 kHalo, -kHalo, -kHalo), the nearest cell whose address is 16-byte aligned: its
// coordinates are (x + 2 kHalo, y + kHalo, z + kHalo).
CUtensorMap make_plane_tensor_map(const __half* array, const GridLayout& g, int box_x, int box_y);

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// One thread initialises each barrier (expected arrivals: 1, the thread that issues the copies),
// then makes the initialisation visible to the copy engine before anyone uses it.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(arrivals)
               : "memory");
}
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The issuing thread's arrival, announcing `bytes` of copies that complete this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}

// Waits until the barrier's phase with parity `parity` has completed (its copies have landed);
// the data is then visible to the waiting thread.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t address = shared_address(bar);
  uint32_t done = 0;
  do {
    asm volatile("{\n"
                 "  .reg .pred ready;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, ready;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(address), "r"(parity)
                 : "memory");
  } while (!done);
}

// Copies the box at tensor coordinates (c0, c1, c2) to `dst` (128-byte aligned shared memory);
// completion is counted in bytes on `bar`. c0 times the element size must be a multiple of 16
// bytes (the box's first row starts on a 16-byte boundary of a row): otherwise the copy stops the
// kernel with an illegal instruction (cudaErrorIllegalInstruction). c1 and c2 are free, and a box
// may reach outside the tensor (those cells read as zeros).
__device__ __forceinline__ void bulk_tensor_load_3d(void* dst, const CUtensorMap* map, int c0,
                                                    int c1, int c2, uint64_t* bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(shared_address(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
               "r"(shared_address(bar))
               : "memory");
}

// L2 policies for the lines a copy reads: evict-last lines stay while others go (data that other
// blocks will read again), evict-first lines go first (data read once).
__device__ __forceinline__ uint64_t l2_evict_last_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// bulk_tensor_load_3d with an L2 policy for the lines it reads.
__device__ __forceinline__ void bulk_tensor_load_3d(void* dst, const CUtensorMap* map, int c0,
                                                    int c1, int c2, uint64_t* bar,
                                                    uint64_t policy) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(shared_address(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
               "r"(shared_address(bar)), "l"(policy)
               : "memory");
}

} // namespace rtm::cuda
