// The `rtm micro` experiments on the GPU, as host code sees them: plain C++, no CUDA types.
// Built only with CUDA (RTM_HAVE_CUDA); the analytic model in memory_model.h needs no GPU.
//
// Two kinds of entry point per microkernel:
//   - run_*(): allocate inputs well beyond L2, check one launch's output, then time launches
//     with CUDA events (warm-up first, median of repeats);
//   - *_once(): one launch on inputs the caller gives, returning the output (for tests).
// Devices, buffers, streams, timing and error checks are the project's CUDA utility layer
// (kernels/cuda/util/device_info.h, device_buffer.cuh, cuda_stream.cuh, event_timer.cuh, cuda_check.cuh).
// Errors (a failing CUDA call, not enough device memory) throw rtm::cuda::CudaError (a
// std::runtime_error) naming the call, file and line; bad arguments throw std::invalid_argument.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/cuda/util/device_info.h"
#include "kernels/micro/memory_model.h"
#include "kernels/micro/micro_pattern.h"

namespace rtm::micro {

// ---- The device --------------------------------------------------------------------------------
// Described by the CUDA utility layer (kernels/cuda/util/device_info.h: cuda::query_device, its theoretical
// bandwidth); the model sees it as a DeviceModel.

model::DeviceModel device_model(const cuda::DeviceInfo& device);

// ---- Timing ------------------------------------------------------------------------------------

struct TimingOptions {
  int warmup = 2;          // untimed launches first (module load, first touch, clocks)
  int repeats = 20;        // timed launches; fewer (never under 3) when one takes long...
  double budget_ms = 2000; // ...so that the timed launches of one case take about this long
};

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int repeats = 0;
};

// Output of one launch compared exactly with what it must be, element by element. Outputs up to
// 2^26 elements are checked whole; larger ones at 2^24 evenly spread elements plus both ends (fma
// with many FFMA per element checks fewer, as each expected value costs op FMAs on the host).
struct Verification {
  bool passed = false;
  int64_t checked = 0;
  int64_t mismatches = 0;
  std::string first_mismatch; // "index 12: got 0.5, expected 0.25"
};

struct TimedKernel {
  Timing time;
  Verification check;
};

// ---- fma: y[i] += x[i] * a[o] for o < op, grid-stride loop --------------------------------------

struct FmaConfig {
  int64_t n = 0; // elements of x and of y
  int blocks = 1;
  int threads = 32; // per block, 1..1024
  int op = 1;       // FFMA per element
};
TimedKernel run_fma(const FmaConfig& config, const TimingOptions& timing);
// y after one launch; a.size() is op.
std::vector<float> fma_once(const std::vector<float>& x, const std::vector<float>& y,
                            const std::vector<float>& a, int blocks, int threads);

// ---- copy --------------------------------------------------------------------------------------

struct CopyRun {
  int64_t n_floats = 0;
  Timing memcpy;         // cudaMemcpyAsync device to device
  TimedKernel coalesced; // 16-byte loads and stores, 4 per thread in flight
};
CopyRun run_copy(int64_t n_floats, const TimingOptions& timing);

struct StridedCopyRun {
  int stride = 1;
  TimedKernel kernel;
};
// out[i] = in[i * stride] for i < n_out, for each stride (one input sized for the largest).
std::vector<StridedCopyRun> run_strided_copies(int64_t n_out, const std::vector<int>& strides,
                                               const TimingOptions& timing);

std::vector<float> copy_once(const std::vector<float>& in);
std::vector<float> strided_copy_once(const std::vector<float>& in, int stride, int64_t n_out);

// ---- transpose: out[c][r] = in[r][c], in is rows x cols (row-major) -----------------------------

struct TransposeRun {
  int64_t rows = 0, cols = 0;
  Timing copy;        // the coalesced (float4) copy of the same bytes, the bandwidth to compare with
  TimedKernel copy_scalar; // one float per thread, the copy the transpose notes compare with
  std::array<TimedKernel, std::size(model::kTransposeKinds)> kernels; // by kind; unrun: repeats 0
  const TimedKernel& kernel(model::TransposeKind kind) const;
};
// The kinds in the order given; pad32-f64 needs an even number of columns (pairs of floats are
// its 8-byte elements).
TransposeRun run_transpose(int64_t rows, int64_t cols, const TimingOptions& timing,
                           const std::vector<model::TransposeKind>& kinds = {
                               std::begin(model::kTransposeKinds),
                               std::end(model::kTransposeKinds)});
std::vector<float> transpose_once(const std::vector<float>& in, int64_t rows, int64_t cols,
                                  model::TransposeKind kind);

// ---- add a constant to double3 elements, or to the same bytes as doubles ------------------------

struct AddConstantRun {
  int64_t elements = 0; // double3 elements (3 x as many doubles)
  TimedKernel double3, doubles;
  const TimedKernel& kernel(model::AddLayout layout) const;
};
AddConstantRun run_add_constant(int64_t elements, const TimingOptions& timing);
// `in` holds x, y, z of each element in turn (in.size() a multiple of 3 for double3).
std::vector<double> add_constant_once(const std::vector<double>& in, double k,
                                      model::AddLayout layout);

// ---- shared memory read with a stride -----------------------------------------------------------
// Lane l of every warp reads word l * stride + 32 j of a shared array holding smem_stride_word(w),
// for j < kSmemLoadsPerIteration, `iterations` times, and writes the sum (mod 2^32) of what it
// read.

constexpr int kSmemStrideMax = 32;
constexpr int kSmemLoadsPerIteration = 32;

struct SmemStrideRun {
  int stride = 1;
  TimedKernel kernel;
  int64_t warp_loads = 0; // warp-level shared loads in one launch
  int sm_count = 0;
};
std::vector<SmemStrideRun> run_smem_stride(const std::vector<int>& strides, int iterations,
                                           const TimingOptions& timing);
// One sum per thread of `blocks` x `threads`.
std::vector<uint32_t> smem_stride_once(int stride, int iterations, int blocks, int threads);

// ---- a reused buffer next to a streaming one, with and without an L2 persisting window ---------
// Each pass: one thread per stream element i reads and writes stream[i] (+= freq[j]) and
// freq[j] (writing back the value it read), j = i % freq_n: the A100 talk's sliding-window test,
// made deterministic (all threads that share a frequent element write the same value).

// Which accesses a pass makes (docs/micro.md, "l2-window", the read/write split): both buffers read
// and written (the talk's), only read (nothing stored: the loads of the store-free cases), or only
// written (no loads: stream[i] = freq[j] = j).
enum class L2Access { read_write, read, write };
const char* l2_access_name(L2Access access);

struct L2WindowConfig {
  int64_t stream_bytes = 0;
  std::vector<int64_t> freq_bytes;     // each a case, all modes each
  std::vector<model::WindowMode> modes; // in this order for each size
  double set_aside_share = 0.75;       // of L2 (the talk: 30 of an A100's 40 MB), capped at the
                                       // device's most persisting L2
  bool miss_normal = false;            // missProp normal instead of streaming
  L2Access access = L2Access::read_write;
};

struct L2WindowRun {
  int64_t freq_bytes = 0;
  model::WindowMode mode = model::WindowMode::none;
  bool supported = true; // false: the device has no persisting L2 (the row is not measured)
  model::WindowSetting setting; // what was set (set-aside, window, hitRatio, hitProp)
  int64_t window_bytes = 0;     // the window's num_bytes (at most the device's largest window)
  TimedKernel pass;             // check: the stream after one pass and the frequent buffer
};
// For each frequent size, each mode in turn; the original set-aside is put back after, every
// window removed and persisting lines made normal.
std::vector<L2WindowRun> run_l2_window(const L2WindowConfig& config, const TimingOptions& timing);
// The set-aside the experiment asks for on this device: share x L2, at most its most persisting L2.
int64_t l2_set_aside_bytes(const cuda::DeviceInfo& device, double share);
// One pass: the stream after it (stream[i] + freq[i % freq_n]); `freq` is read and written back
// (it must come back unchanged). Sizes in floats, the stream at most 65535 x the frequent buffer.
std::vector<float> stream_reuse_once(const std::vector<float>& stream, std::vector<float>& freq);

} // namespace rtm::micro
