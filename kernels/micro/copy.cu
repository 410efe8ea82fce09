// copy: a coalesced copy and a strided one, next to cudaMemcpy (docs/micro.md, "copy").
#include <algorithm>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4; // accesses per thread, all loads issued before the first store

// Each block copies kUnroll * kThreads consecutive float4. A warp's access is 32 consecutive
// 16-byte pieces (4 lines), and each thread has 64 bytes in flight: enough to keep HBM busy.
__global__ void copy_float4_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                   int64_t n4) {
  const int64_t base = int64_t(blockIdx.x) * (kUnroll * kThreads) + threadIdx.x;
  float4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n4) v[u] = in[i];
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n4) out[i] = v[u];
  }
}

// The up to 3 floats past the last whole float4.
__global__ void copy_tail_kernel(const float* in, float* out, int64_t first, int64_t n) {
  const int64_t i = first + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// One float per thread: 4-byte accesses, 4 bytes in flight per thread (the transpose notes' copy).
__global__ void copy_scalar_kernel(const float* __restrict__ in, float* __restrict__ out,
                                   int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// out[i] = in[i * stride]: the writes are coalesced, the reads spread over stride x 4 bytes.
__global__ void strided_copy_kernel(const float* __restrict__ in, float* __restrict__ out,
                                    int64_t n_out, int stride) {
  const int64_t base = int64_t(blockIdx.x) * (kUnroll * kThreads) + threadIdx.x;
  float v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n_out) v[u] = in[i * stride];
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n_out) out[i] = v[u];
  }
}

void launch_strided(const float* in, float* out, int64_t n_out, int stride, cudaStream_t stream) {
  if (n_out <= 0) return;
  strided_copy_kernel<<<detail::blocks_for(n_out, kUnroll * kThreads), kThreads, 0, stream>>>(
      in, out, n_out, stride);
  CUDA_CHECK_LAUNCH("strided_copy_kernel");
}

void check_stride(int stride) {
  if (stride < 1)
    throw std::invalid_argument("strided copy: stride must be >= 1, got " + std::to_string(stride));
}

} // namespace

namespace detail {

void launch_copy(const float* in, float* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  // cudaMalloc returns 256-byte aligned memory, so both pointers may be read as float4.
  const int64_t n4 = n / 4;
  if (n4 > 0) {
    copy_float4_kernel<<<blocks_for(n4, kUnroll * kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
    CUDA_CHECK_LAUNCH("copy_float4_kernel");
  }
  if (n % 4) {
    copy_tail_kernel<<<1, 4, 0, stream>>>(in, out, 4 * n4, n);
    CUDA_CHECK_LAUNCH("copy_tail_kernel");
  }
}

void launch_copy_scalar(const float* in, float* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  copy_scalar_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH("copy_scalar_kernel");
}

} // namespace detail

std::vector<float> copy_once(const std::vector<float>& in) {
  const int64_t n = static_cast<int64_t>(in.size());
  cuda::DeviceArray<float> din(n, "copy input"), dout(n, "copy output");
  din.upload(in);
  dout.poison(nullptr);
  detail::launch_copy(din.data(), dout.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

std::vector<float> strided_copy_once(const std::vector<float>& in, int stride, int64_t n_out) {
  check_stride(stride);
  if (n_out < 0 || (n_out > 0 && (n_out - 1) * stride >= static_cast<int64_t>(in.size())))
    throw std::invalid_argument("strided_copy_once: input too short for n_out and stride");
  cuda::DeviceArray<float> din(static_cast<int64_t>(in.size()), "strided input"),
      dout(n_out, "strided output");
  din.upload(in);
  dout.poison(nullptr);
  launch_strided(din.data(), dout.data(), n_out, stride, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

CopyRun run_copy(int64_t n, const TimingOptions& timing) {
  if (n < 1) throw std::invalid_argument("copy: need at least one float");
  cuda::Stream stream;
  cuda::DeviceArray<float> in(n, "copy input"), out(n, "copy output");
  const uint32_t seed = detail::fresh_seed();
  detail::fill_pattern(in.data(), n, seed, stream);

  CopyRun run;
  run.n_floats = n;
  out.poison(stream);
  detail::launch_copy(in.data(), out.data(), n, stream);
  stream.synchronize();
  run.coalesced.check =
      detail::verify_output(out.download(), [&](int64_t i) { return pattern_value(i, seed); });
  run.coalesced.time = detail::time_launches(
      stream, timing, [&]() { detail::launch_copy(in.data(), out.data(), n, stream); });
  run.memcpy = detail::time_launches(stream, timing, [&]() {
    CUDA_CHECK(
        cudaMemcpyAsync(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice, stream));
  });
  return run;
}

std::vector<StridedCopyRun> run_strided_copies(int64_t n_out, const std::vector<int>& strides,
                                               const TimingOptions& timing) {
  if (n_out < 1 || strides.empty()) throw std::invalid_argument("strided copy: nothing to copy");
  for (int s : strides) check_stride(s);
  const int max_stride = *std::max_element(strides.begin(), strides.end());
  const int64_t n_in = (n_out - 1) * max_stride + 1;
  cuda::Stream stream;
  cuda::DeviceArray<float> in(n_in, "strided-copy input"), out(n_out, "strided-copy output");
  const uint32_t seed = detail::fresh_seed();
  detail::fill_pattern(in.data(), n_in, seed, stream);

  std::vector<StridedCopyRun> runs;
  for (int stride : strides) {
    StridedCopyRun run;
    run.stride = stride;
    out.poison(stream);
    launch_strided(in.data(), out.data(), n_out, stride, stream);
    stream.synchronize();
    run.kernel.check = detail::verify_output(
        out.download(), [&](int64_t i) { return pattern_value(uint64_t(i) * stride, seed); });
    run.kernel.time = detail::time_launches(
        stream, timing, [&]() { launch_strided(in.data(), out.data(), n_out, stride, stream); });
    runs.push_back(run);
  }
  return runs;
}

} // namespace rtm::micro
