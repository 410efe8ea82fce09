// half_v2dt2: float32 wavefields, the model term v2dt2 read as IEEE half: 14 bytes per cell
// instead of 16 (p[n], p[n-1], p[n+1] at 4 bytes, v2dt2 at 2). The best float32 kernel's code
// (tma_ring.cuh), same tile, with the v2dt2 boxes copied as half. Its ring holds 10 p planes
// instead of 8: with 8, its smaller cell slots let 3 blocks share an SM instead of tma_ring's 2,
// and the third block's tiles read 8% more from DRAM than they saved (1.03x tma_ring on an H100);
// with 10 (87.7 KB of shared memory) it keeps 2 blocks per SM and two more planes in flight:
// 1.08x (docs/tuning-log.md section 8a). The propagator keeps its float v2dt2 for every other operation (source
// injection, the C-PML, Born) and gives this kernel a half copy (VariantRow::kernel_model).
// Rounding v2dt2 to half changes the velocity by at most 2^-12 relative (docs/variants.md,
// "half_v2dt2").
#include "kernels/cuda/steps/tma_ring.cuh"

namespace rtm::cuda {

void launch_half_v2dt2(const WaveStepArgs& a, cudaStream_t stream) {
  using Shape = tma_ring::RingShape<16, 16, 10, 3, __half>;
  if (a.damped())
    tma_ring::launch<Shape, true>(a, stream, "half_v2dt2 (damped)");
  else
    tma_ring::launch<Shape, false>(a, stream, "half_v2dt2");
}

} // namespace rtm::cuda
