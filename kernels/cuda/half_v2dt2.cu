// half_v2dt2: float32 wavefields, the model term v2dt2 read as IEEE half: 14 bytes per cell
// instead of 16 (p[n], p[n-1], p[n+1] at 4 bytes, v2dt2 at 2). The register-queue kernel of
// regqueue_vec4 (register_queue.cuh), same tile and depth, so the two differ only in v2dt2's
// width. The propagator keeps its float v2dt2 for every other operation (source injection, the
// C-PML, Born) and gives this kernel a half copy (VariantRow::kernel_model). Rounding v2dt2 to
// half changes the velocity by at most 2^-12 relative (docs/variants.md, "half_v2dt2").
#include "kernels/cuda/register_queue.cuh"

namespace rtm::cuda {

void launch_half_v2dt2(const WaveStepArgs& a, cudaStream_t stream) {
  constexpr int kBX = 16, kBY = 16, kMinBlocks = 2, kDepth = 2;
  if (a.damped())
    launch_register_queue<float, kBX, kBY, kMinBlocks, kDepth, true, __half>(a, stream,
                                                                             "half_v2dt2 (damped)");
  else
    launch_register_queue<float, kBX, kBY, kMinBlocks, kDepth, false, __half>(a, stream, "half_v2dt2");
}

} // namespace rtm::cuda
