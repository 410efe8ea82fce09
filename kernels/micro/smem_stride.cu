// smem-stride: warps reading shared memory with a stride of 1 to 32 words (docs/micro.md,
// "smem-stride"). Lane l reads word l * stride (+ multiples of 32 words, which keep its bank), so a
// warp's 32 reads land in 32 / gcd(stride, 32) banks: gcd(stride, 32) passes per load.
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kWords = 2048;  // 8 KiB: the largest index is 31 * 32 + 31 * 32 = 1984
constexpr int kThreads = 256; // 8 warps per block; as many blocks as fit on every SM
static_assert((kSmemStrideMax - 1) * 32 + (kSmemLoadsPerIteration - 1) * 32 < kWords,
              "shared array too small for the largest stride");

__global__ void smem_stride_kernel(int stride, int iterations, uint32_t* __restrict__ sums) {
  __shared__ uint32_t words[kWords];
  for (int w = threadIdx.x; w < kWords; w += blockDim.x) words[w] = smem_stride_word(w);
  __syncthreads();
  const int lane = threadIdx.x % 32;
  // volatile: every load in the loop must be issued, not kept in a register after the first pass.
  // The offsets j * 32 are constants, so each load is one LDS with an immediate offset and the
  // loop is nothing but shared loads and adds.
  const volatile uint32_t* mine = words + lane * stride;
  uint32_t acc[4] = {0, 0, 0, 0};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kSmemLoadsPerIteration; ++j) acc[j % 4] += mine[j * 32];
  }
  sums[int64_t(blockIdx.x) * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}

void check_args(int stride, int iterations) {
  if (stride < 1 || stride > kSmemStrideMax || iterations < 1)
    throw std::invalid_argument("smem-stride: need 1 <= stride <= 32 and iterations >= 1 (got " +
                                std::to_string(stride) + ", " + std::to_string(iterations) + ")");
}

void launch(int stride, int iterations, uint32_t* sums, int blocks, int threads,
            cudaStream_t stream) {
  smem_stride_kernel<<<blocks, threads, 0, stream>>>(stride, iterations, sums);
  CUDA_CHECK_LAUNCH("smem_stride_kernel");
}

// What thread `t` (of blocks of `threads`) must write.
uint32_t expected_sum(int64_t t, int threads, int stride, int iterations) {
  const int lane = static_cast<int>(t % threads) % 32;
  uint32_t per_iteration = 0;
  for (int j = 0; j < kSmemLoadsPerIteration; ++j)
    per_iteration += smem_stride_word(static_cast<uint32_t>(lane * stride + j * 32));
  return per_iteration * static_cast<uint32_t>(iterations); // mod 2^32, as on the GPU
}

} // namespace

std::vector<uint32_t> smem_stride_once(int stride, int iterations, int blocks, int threads) {
  check_args(stride, iterations);
  if (blocks < 1 || threads < 1 || threads > 1024)
    throw std::invalid_argument("smem_stride_once: need blocks >= 1 and 1 <= threads <= 1024");
  cuda::DeviceArray<uint32_t> sums(int64_t(blocks) * threads, "smem-stride sums");
  CUDA_CHECK(cudaMemset(sums.data(), 0xFF, sums.bytes()));
  launch(stride, iterations, sums.data(), blocks, threads, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return sums.download();
}

std::vector<SmemStrideRun> run_smem_stride(const std::vector<int>& strides, int iterations,
                                           const TimingOptions& timing) {
  for (int s : strides) check_args(s, iterations);
  int device = 0, sm_count = 0, blocks_per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, smem_stride_kernel,
                                                                kThreads, 0));
  // One full wave: every SM runs the same number of warps, so time per access per SM is the
  // kernel time over one SM's share of the loads.
  const int blocks = sm_count * std::max(1, blocks_per_sm);
  cuda::Stream stream;
  cuda::DeviceArray<uint32_t> sums(int64_t(blocks) * kThreads, "smem-stride sums");

  std::vector<SmemStrideRun> runs;
  for (int stride : strides) {
    SmemStrideRun run;
    run.stride = stride;
    run.sm_count = sm_count;
    run.warp_loads = int64_t(blocks) * (kThreads / 32) * iterations * kSmemLoadsPerIteration;
    CUDA_CHECK(cudaMemsetAsync(sums.data(), 0xFF, sums.bytes(), stream));
    launch(stride, iterations, sums.data(), blocks, kThreads, stream);
    stream.synchronize();
    run.kernel.check = detail::verify_output(
        sums.download(), [&](int64_t t) { return expected_sum(t, kThreads, stride, iterations); });
    run.kernel.time = detail::time_launches(stream, timing, [&]() {
      launch(stride, iterations, sums.data(), blocks, kThreads, stream);
    });
    runs.push_back(run);
  }
  return runs;
}

} // namespace rtm::micro
