// double3: add a constant to an array of double3, and to the same bytes as plain doubles
// (docs/micro.md, "double3"; NVIDIA's uncoalescedGlobalAccesses sample).
#include "kernels/micro/micro.h"
#include "kernels/micro/micro_runtime.cuh"

namespace rtm::micro {
namespace {

constexpr int kThreads = 256;

// One element per thread. double3 is 24 bytes with 8-byte alignment, so the load is three 8-byte
// loads (x, y, z), each spanning 32 x 24 = 768 bytes of the warp: 24 sectors per request.
__global__ void add_constant_double3_kernel(const double3* __restrict__ in, double k,
                                            double3* __restrict__ out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    double3 v = in[i];
    v.x += k;
    v.y += k;
    v.z += k;
    out[i] = v;
  }
}

// The same bytes and the same grid, three doubles per thread as well, but each of a warp's loads
// is 32 consecutive doubles (256 bytes, 8 sectors): block b covers doubles [768 b, 768 b + 768),
// thread t the doubles 768 b + t + 256 c for c < 3. Only the addresses differ from double3.
__global__ void add_constant_double_kernel(const double* __restrict__ in, double k,
                                           double* __restrict__ out, int64_t n) {
  const int64_t base = int64_t(blockIdx.x) * (3 * kThreads) + threadIdx.x;
  double v[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int64_t i = base + int64_t(c) * kThreads;
    if (i < n) v[c] = in[i];
  }
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int64_t i = base + int64_t(c) * kThreads;
    if (i < n) out[i] = v[c] + k;
  }
}

// n_doubles is a multiple of 3 for the double3 layout.
void launch_add(model::AddLayout layout, const double* in, double k, double* out, int64_t n_doubles,
                cudaStream_t stream) {
  if (n_doubles <= 0) return;
  if (layout == model::AddLayout::double3) {
    const int64_t n3 = n_doubles / 3;
    add_constant_double3_kernel<<<detail::blocks_for(n3, kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const double3*>(in), k, reinterpret_cast<double3*>(out), n3);
    CUDA_CHECK_LAUNCH("add_constant_double3_kernel");
  } else {
    add_constant_double_kernel<<<detail::blocks_for(n_doubles, 3 * kThreads), kThreads, 0,
                                 stream>>>(in, k, out, n_doubles);
    CUDA_CHECK_LAUNCH("add_constant_double_kernel");
  }
}

} // namespace

const TimedKernel& AddConstantRun::kernel(model::AddLayout layout) const {
  return layout == model::AddLayout::double3 ? double3 : doubles;
}

std::vector<double> add_constant_once(const std::vector<double>& in, double k,
                                      model::AddLayout layout) {
  const int64_t n = static_cast<int64_t>(in.size());
  if (layout == model::AddLayout::double3 && n % 3 != 0)
    throw std::invalid_argument("add_constant_once: double3 input size is not a multiple of 3");
  cuda::DeviceArray<double> din(n, "add-constant input"), dout(n, "add-constant output");
  din.upload(in);
  dout.poison(nullptr);
  launch_add(layout, din.data(), k, dout.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

AddConstantRun run_add_constant(int64_t elements, const TimingOptions& timing) {
  if (elements < 1) throw std::invalid_argument("double3: need at least one element");
  const int64_t n = 3 * elements;
  cuda::Stream stream;
  cuda::DeviceArray<double> in(n, "double3 input"), out(n, "double3 output");
  const uint32_t seed = detail::fresh_seed();
  detail::fill_pattern(in.data(), n, seed, stream);
  const double k = 0.5 + pattern_value(0, seed + 1); // any constant; exact sums on host and GPU

  AddConstantRun run;
  run.elements = elements;
  for (auto layout : {model::AddLayout::double3, model::AddLayout::doubles}) {
    TimedKernel& kernel = layout == model::AddLayout::double3 ? run.double3 : run.doubles;
    out.poison(stream);
    launch_add(layout, in.data(), k, out.data(), n, stream);
    stream.synchronize();
    kernel.check = detail::verify_output(
        out.download(), [&](int64_t i) { return static_cast<double>(pattern_value(i, seed)) + k; });
    kernel.time = detail::time_launches(
        stream, timing, [&]() { launch_add(layout, in.data(), k, out.data(), n, stream); });
  }
  return run;
}

} // namespace rtm::micro
