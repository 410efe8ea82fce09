// Every `rtm micro` kernel's output checked on the GPU against a CPU reference, on small sizes and
// fresh random inputs (label gpu; skipped where there is no GPU).
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cuda/util/device_info.h"
#include "kernels/micro/micro.h"

namespace micro = rtm::micro;
namespace model = rtm::micro::model;

namespace {

class MicroGpu : public ::testing::Test {
protected:
  void SetUp() override {
    const rtm::cuda::DeviceInfo device = rtm::cuda::query_device(0);
    if (!device.available) GTEST_SKIP() << device.why_unavailable;
  }
  std::vector<float> random_floats(size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }
  std::vector<double> random_doubles(size_t n) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng_);
    return v;
  }
  static micro::TimingOptions quick() {
    micro::TimingOptions t;
    t.warmup = 1;
    t.repeats = 3;
    return t;
  }
  std::mt19937_64 rng_{std::random_device{}()};
};

TEST_F(MicroGpu, DeviceIsDescribed) {
  const rtm::cuda::DeviceInfo d = rtm::cuda::query_device(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  const double peak = d.theoretical_bandwidth_gbs;
  EXPECT_TRUE(peak == 0.0 || peak > 100.0) << peak; // n/a, or a real HBM/GDDR figure
  EXPECT_EQ(peak, rtm::cuda::theoretical_bandwidth_gbs(d.memory_clock_khz, d.bus_width_bits));
  const model::DeviceModel m = micro::device_model(d);
  EXPECT_EQ(m.sm_count, d.sm_count);
  EXPECT_EQ(m.l2_bytes, int64_t(d.l2_bytes));
  EXPECT_EQ(m.fp32_lanes_per_sm, model::fp32_lanes_per_sm(d.cc_major, d.cc_minor));
}

TEST_F(MicroGpu, FmaMatchesSequentialFmas) {
  struct Launch {
    int64_t n;
    int blocks, threads, op;
  };
  // One thread, partial warps, several blocks, a block larger than the array.
  for (const Launch& l :
       {Launch{1000, 1, 1, 1}, Launch{1000, 1, 8, 3}, Launch{5003, 1, 33, 2},
        Launch{5003, 3, 64, 5}, Launch{777, 2, 1024, 1}, Launch{4096, 7, 96, 4}}) {
    SCOPED_TRACE(std::to_string(l.n) + " " + std::to_string(l.blocks) + "x" +
                 std::to_string(l.threads) + " op " + std::to_string(l.op));
    const auto x = random_floats(l.n), y = random_floats(l.n), a = random_floats(l.op);
    const std::vector<float> got = micro::fma_once(x, y, a, l.blocks, l.threads);
    ASSERT_EQ(got.size(), y.size());
    for (int64_t i = 0; i < l.n; ++i) {
      float want = y[i];
      for (float ao : a) want = std::fma(x[i], ao, want); // the kernel's FFMAs, in order
      ASSERT_EQ(got[i], want) << "element " << i;
    }
  }
}

TEST_F(MicroGpu, CopyCopiesEveryElement) {
  for (size_t n : {size_t(1), size_t(3), size_t(4), size_t(1027), (size_t(1) << 20) + 3}) {
    const auto in = random_floats(n);
    EXPECT_EQ(micro::copy_once(in), in) << n; // the output was poisoned (NaN) before the launch
  }
}

TEST_F(MicroGpu, StridedCopyGathersEveryStrideth) {
  for (int stride : {1, 2, 3, 4, 7, 8, 16, 32}) {
    for (int64_t n_out : {int64_t(1), int64_t(1000), int64_t(4099)}) {
      const auto in = random_floats((n_out - 1) * stride + 1);
      const auto got = micro::strided_copy_once(in, stride, n_out);
      ASSERT_EQ(static_cast<int64_t>(got.size()), n_out);
      for (int64_t i = 0; i < n_out; ++i)
        ASSERT_EQ(got[i], in[i * stride]) << "stride " << stride << " element " << i;
    }
  }
}

TEST_F(MicroGpu, TransposeEveryKindEveryShape) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1},    {1, 37},    {33, 1},   {32, 32},
                                                {31, 65},  {100, 67},  {256, 512}, {64, 8},
                                                {33, 130}, {100, 66}, {1, 2}};
  for (auto kind : model::kTransposeKinds) {
    for (const auto& [rows, cols] : shapes) {
      SCOPED_TRACE(std::string(model::transpose_name(kind)) + " " + std::to_string(rows) + "x" +
                   std::to_string(cols));
      const auto in = random_floats(rows * cols);
      if (kind == model::TransposeKind::padded32_f64) {
        if (cols % 2) {
          EXPECT_THROW(micro::transpose_once(in, rows, cols, kind), std::invalid_argument);
          continue;
        }
        // The floats read as rows x cols/2 doubles D; out holds the cols/2 x rows transpose.
        const auto out = micro::transpose_once(in, rows, cols, kind);
        ASSERT_EQ(static_cast<int64_t>(out.size()), rows * cols);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols / 2; ++c)
            for (int h = 0; h < 2; ++h)
              ASSERT_EQ(out[(c * rows + r) * 2 + h], in[r * cols + 2 * c + h]);
        continue;
      }
      const auto out = micro::transpose_once(in, rows, cols, kind);
      ASSERT_EQ(static_cast<int64_t>(out.size()), rows * cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]);
    }
  }
}

TEST_F(MicroGpu, AddConstantBothLayouts) {
  for (auto layout : {model::AddLayout::double3, model::AddLayout::doubles}) {
    for (size_t elements : {size_t(1), size_t(33), size_t(1000), size_t(70001)}) {
      const auto in = random_doubles(3 * elements);
      const double k = std::uniform_real_distribution<double>(-2.0, 2.0)(rng_);
      const auto out = micro::add_constant_once(in, k, layout);
      ASSERT_EQ(out.size(), in.size());
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(out[i], in[i] + k) << model::add_layout_name(layout) << " element " << i;
    }
  }
}

TEST_F(MicroGpu, SharedStrideSumsWhatEachLaneReads) {
  constexpr int kIterations = 3;
  for (int threads : {40, 96}) { // a partial warp, and three whole ones
    for (int stride = 1; stride <= micro::kSmemStrideMax; ++stride) {
      const int blocks = 2;
      const auto sums = micro::smem_stride_once(stride, kIterations, blocks, threads);
      ASSERT_EQ(sums.size(), size_t(blocks) * threads);
      for (int t = 0; t < blocks * threads; ++t) {
        const uint32_t lane = static_cast<uint32_t>(t % threads) % 32;
        uint32_t want = 0;
        for (int it = 0; it < kIterations; ++it)
          for (uint32_t j = 0; j < micro::kSmemLoadsPerIteration; ++j)
            want += micro::smem_stride_word(lane * stride + 32 * j);
        ASSERT_EQ(sums[t], want) << "stride " << stride << " thread " << t;
      }
    }
  }
}

TEST_F(MicroGpu, StreamReuseAddsTheFrequentBufferAndWritesItBackUnchanged) {
  for (auto [stream_n, freq_n] : {std::pair<size_t, size_t>{4096, 64}, {4096, 4096}, {1000, 12},
                                  {1001, 7}, {300000, 1000}}) {
    const auto stream = random_floats(stream_n), freq0 = random_floats(freq_n);
    auto freq = freq0;
    const auto got = micro::stream_reuse_once(stream, freq);
    ASSERT_EQ(got.size(), stream_n);
    for (size_t i = 0; i < stream_n; ++i)
      ASSERT_EQ(got[i], stream[i] + freq0[i % freq_n]) << stream_n << "/" << freq_n << " at " << i;
    ASSERT_EQ(freq, freq0) << stream_n << "/" << freq_n;
  }
  auto too_large = random_floats(11);
  EXPECT_THROW(micro::stream_reuse_once(random_floats(10), too_large), std::invalid_argument);
}

// The benchmark entry points on small sizes: each checks its own output and times it.
TEST_F(MicroGpu, BenchmarksVerifyAndTime) {
  const micro::TimingOptions t = quick();
  auto ok = [](const micro::TimedKernel& k) {
    EXPECT_TRUE(k.check.passed) << k.check.first_mismatch;
    EXPECT_GT(k.check.checked, 0);
    EXPECT_GT(k.time.median_ms, 0.0);
    EXPECT_GE(k.time.repeats, 1);
  };
  ok(micro::run_fma({1 << 16, 4, 64, 3}, t));
  const micro::CopyRun copy = micro::run_copy((1 << 16) + 1, t);
  ok(copy.coalesced);
  EXPECT_GT(copy.memcpy.median_ms, 0.0);
  for (const auto& run : micro::run_strided_copies(4096, {1, 3, 32}, t)) ok(run.kernel);
  const micro::TransposeRun transpose = micro::run_transpose(100, 70, t);
  ok(transpose.copy_scalar);
  for (auto kind : model::kTransposeKinds) ok(transpose.kernel(kind));
  const micro::AddConstantRun add = micro::run_add_constant(1000, t);
  ok(add.double3);
  ok(add.doubles);
  for (const auto& run : micro::run_smem_stride({1, 2, 32}, 4, t)) {
    ok(run.kernel);
    EXPECT_GT(run.warp_loads, 0);
  }
  micro::L2WindowConfig l2_config;
  l2_config.stream_bytes = 1 << 20;
  l2_config.freq_bytes = {64 << 10, 256 << 10 | 4}; // a size that is not a whole block
  l2_config.modes = {std::begin(model::kWindowModes), std::end(model::kWindowModes)};
  // Each access pattern checks what its pass leaves in both buffers (read: both unchanged;
  // write: both j; read-write: the sum, the frequent buffer unchanged).
  for (micro::L2Access access :
       {micro::L2Access::read_write, micro::L2Access::read, micro::L2Access::write}) {
    l2_config.access = access;
    const auto l2 = micro::run_l2_window(l2_config, t);
    ASSERT_EQ(l2.size(), 2 * std::size(model::kWindowModes));
    for (const auto& run : l2)
      if (run.supported) ok(run.pass);
  }
}

} // namespace
