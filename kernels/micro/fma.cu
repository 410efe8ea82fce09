// fma: y[i] += x[i] * a[o] for o < op, in a grid-stride loop (docs/micro.md, "fma").
// The experiment of the blog series this project learned from: run it with one block of 1, 8, 32
// and 64 threads and the L1/L2/DRAM counts follow from coalescing alone.
#include <cmath>

#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

// Per element and per o: load x[i], y[i] and a[o], one FFMA, store y[i]. The empty asm with a
// "memory" clobber tells the compiler any memory may have changed, so it loads all three again on
// every o instead of keeping them in registers: the instruction mix the model counts (the blog's
// SASS shows the same three loads, FFMA and store).
__global__ void fma_kernel(int64_t n, int op, const float* x, float* y, const float* a) {
  const int64_t grid_threads = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += grid_threads) {
    for (int o = 0; o < op; ++o) {
      y[i] = __fmaf_rn(x[i], a[o], y[i]);
      asm volatile("" ::: "memory");
    }
  }
}

void check_config(int64_t n, int blocks, int threads, int op) {
  if (n < 1 || blocks < 1 || threads < 1 || threads > 1024 || op < 1)
    throw std::invalid_argument(
        "fma: need n >= 1, blocks >= 1, 1 <= threads <= 1024, op >= 1 (got n=" + std::to_string(n) +
        ", blocks=" + std::to_string(blocks) + ", threads=" + std::to_string(threads) +
        ", op=" + std::to_string(op) + ")");
}

void launch_fma(int64_t n, int op, const float* x, float* y, const float* a, int blocks,
                int threads, cudaStream_t stream) {
  fma_kernel<<<blocks, threads, 0, stream>>>(n, op, x, y, a);
  CUDA_CHECK_LAUNCH("fma_kernel");
}

// What y[i] must be after one launch: the same FFMAs, in the same order, rounded the same way.
float fma_reference(float x, float y, const std::vector<float>& a) {
  for (float ao : a) y = std::fma(x, ao, y);
  return y;
}

} // namespace

std::vector<float> fma_once(const std::vector<float>& x, const std::vector<float>& y,
                            const std::vector<float>& a, int blocks, int threads) {
  if (x.size() != y.size()) throw std::invalid_argument("fma_once: x and y differ in size");
  const int64_t n = static_cast<int64_t>(x.size());
  const int op = static_cast<int>(a.size());
  check_config(n, blocks, threads, op);
  cuda::DeviceArray<float> dx(n, "x"), dy(n, "y"), da(op, "a");
  dx.upload(x);
  dy.upload(y);
  da.upload(a);
  launch_fma(n, op, dx.data(), dy.data(), da.data(), blocks, threads, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return dy.download();
}

TimedKernel run_fma(const FmaConfig& c, const TimingOptions& timing) {
  check_config(c.n, c.blocks, c.threads, c.op);
  cuda::Stream stream;
  cuda::DeviceArray<float> x(c.n, "fma x"), y(c.n, "fma y"), a(c.op, "fma a");
  const uint32_t sx = detail::fresh_seed(), sy = sx + 1, sa = sx + 2;
  detail::fill_pattern(x.data(), c.n, sx, stream);
  detail::fill_pattern(y.data(), c.n, sy, stream);
  detail::fill_pattern(a.data(), c.op, sa, stream);
  auto launch = [&]() {
    launch_fma(c.n, c.op, x.data(), y.data(), a.data(), c.blocks, c.threads, stream);
  };

  TimedKernel result;
  launch();
  stream.synchronize();
  std::vector<float> a_host(static_cast<size_t>(c.op));
  for (int o = 0; o < c.op; ++o) a_host[o] = pattern_value(o, sa);
  // Each expected value costs op FMAs on the host: check fewer elements when op is large.
  result.check = detail::verify_output(
      y.download(),
      [&](int64_t i) { return fma_reference(pattern_value(i, sx), pattern_value(i, sy), a_host); },
      (int64_t(1) << 26) / c.op);
  // Later launches keep adding to y: harmless for timing (values stay small and finite).
  result.time = detail::time_launches(stream, timing, launch);
  return result;
}

} // namespace rtm::micro
