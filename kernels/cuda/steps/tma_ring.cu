// tma_ring: the register-queue stencil fed by the Hopper bulk tensor copy; the kernel and its
// launch are in tma_ring.cuh (shared with half_v2dt2.cu), which says how it works.
#include "kernels/cuda/steps/tma_ring.cuh"

namespace rtm::cuda {

void launch_tma_ring(const WaveStepArgs& a, cudaStream_t stream) {
  using Shape = tma_ring::RingShape<16, 16, 8, 3>;
  if (a.damped())
    tma_ring::launch<Shape, true>(a, stream, "tma_ring (damped)");
  else
    tma_ring::launch<Shape, false>(a, stream, "tma_ring");
}

} // namespace rtm::cuda
