// fp16_storage: the wavefields and v2dt2 stored as IEEE half precision, every operation in float.
// The register-queue kernel (register_queue.cuh) with 8-byte loads of 4 halves: 8 bytes of
// device-memory traffic per cell instead of 16, at the cost of rounding each stored value to an
// 11-bit significand (docs/variants.md derives the error bound the tests enforce).
#include "kernels/cuda/steps/register_queue.cuh"

namespace rtm::cuda {

void launch_fp16_storage(const WaveStepArgs& a, cudaStream_t stream) {
  constexpr int kBX = 16, kBY = 16, kMinBlocks = 2, kDepth = 3;
  if (a.damped())
    launch_register_queue<__half, kBX, kBY, kMinBlocks, kDepth, true>(a, stream, "fp16_storage (damped)");
  else
    launch_register_queue<__half, kBX, kBY, kMinBlocks, kDepth, false>(a, stream, "fp16_storage");
}

} // namespace rtm::cuda
