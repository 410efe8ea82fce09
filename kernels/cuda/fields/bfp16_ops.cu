#include "kernels/cuda/fields/bfp16_ops.cuh"

#include "kernels/cuda/steps/bfp16_io.cuh"
#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t count) {
  const int64_t wanted = (count + kThreads - 1) / kThreads;
  return int(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

// One thread per 16-element block, the CPU twin's order (bfp16::encode_block).
__global__ void encode_kernel(const GridLayout g, const float* src, int16_t* q, int8_t* e) {
  const int64_t blocks = g.size / bfp16::kBlock;
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < blocks;
       b += int64_t(gridDim.x) * blockDim.x) {
    const int64_t first = b * bfp16::kBlock;
    uint32_t m = 0;
    for (int i = 0; i < bfp16::kBlock; ++i)
      if (bfp16_interior(g, first + i)) m = max(m, bfp16::magnitude_bits(src[first + i]));
    const int block_e = bfp16::block_exponent(m);
    for (int i = 0; i < bfp16::kBlock; ++i)
      q[first + i] = bfp16_interior(g, first + i) ? bfp16::encode(src[first + i], block_e) : int16_t(0);
    e[b] = int8_t(block_e);
  }
}

__global__ void encode_model_kernel(const GridLayout g, const float* src, uint16_t* q, int8_t* e) {
  const int64_t blocks = g.size / bfp16::kBlock;
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < blocks;
       b += int64_t(gridDim.x) * blockDim.x) {
    const int64_t first = b * bfp16::kBlock;
    uint32_t m = 0;
    for (int i = 0; i < bfp16::kBlock; ++i)
      if (bfp16_interior(g, first + i)) m = max(m, bfp16::magnitude_bits(src[first + i]));
    const int block_e = bfp16::block_exponent(m);
    for (int i = 0; i < bfp16::kBlock; ++i)
      q[first + i] =
          bfp16_interior(g, first + i) ? bfp16::encode_unsigned(src[first + i], block_e) : uint16_t(0);
    e[b] = int8_t(block_e);
  }
}

__global__ void decode_kernel(const GridLayout g, const int16_t* q, const int8_t* e, float* dst,
                              bool top_halo) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < g.size;
       n += int64_t(gridDim.x) * blockDim.x)
    dst[n] = bfp16_interior(g, n, top_halo) ? bfp16::decode(q[n], e[n >> 4]) : 0.0f;
}

} // namespace

void bfp16_encode_field(const GridLayout& g, const float* src, void* dst, cudaStream_t stream) {
  encode_kernel<<<blocks_for(g.size / bfp16::kBlock), kThreads, 0, stream>>>(
      g, src, static_cast<int16_t*>(dst), bfp16_exponents(dst, g));
  CUDA_CHECK_LAUNCH("bfp16 encode_kernel");
}

void bfp16_encode_model(const GridLayout& g, const float* src, void* dst, cudaStream_t stream) {
  encode_model_kernel<<<blocks_for(g.size / bfp16::kBlock), kThreads, 0, stream>>>(
      g, src, static_cast<uint16_t*>(dst), bfp16_exponents(dst, g));
  CUDA_CHECK_LAUNCH("bfp16 encode_model_kernel");
}

void bfp16_decode_field(const GridLayout& g, const void* src, float* dst, cudaStream_t stream,
                        bool top_halo) {
  decode_kernel<<<blocks_for(g.size), kThreads, 0, stream>>>(
      g, static_cast<const int16_t*>(src), bfp16_exponents(src, g), dst, top_halo);
  CUDA_CHECK_LAUNCH("bfp16 decode_kernel");
}

} // namespace rtm::cuda
