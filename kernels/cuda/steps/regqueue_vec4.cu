// regqueue_vec4: the 2.5D register-queue kernel (register_queue.cuh) on float storage, aimed at
// the streaming limit: 64x16-cell tiles (16x16 threads of 4 cells each), 16-byte loads and stores,
// z neighbours in a register queue, the next plane's loads in flight during this plane's work.
#include "kernels/cuda/steps/register_queue.cuh"

namespace rtm::cuda {

void launch_regqueue_vec4(const WaveStepArgs& a, cudaStream_t stream) {
  constexpr int kBX = 16, kBY = 16, kMinBlocks = 2, kDepth = 2;
  if (a.damped())
    launch_register_queue<float, kBX, kBY, kMinBlocks, kDepth, true>(a, stream, "regqueue_vec4 (damped)");
  else
    launch_register_queue<float, kBX, kBY, kMinBlocks, kDepth, false>(a, stream, "regqueue_vec4");
}

} // namespace rtm::cuda
