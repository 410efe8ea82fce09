// The analytic memory model of `rtm micro` against cases worked out by hand (docs/micro.md).
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <gtest/gtest.h>

#include "kernels/micro/memory_model.h"

namespace model = rtm::micro::model;

namespace {

// ---- Building blocks -------------------------------------------------------------------------

TEST(MicroModel, SectorsAndLinesOfAWarpAccess) {
  // 32 lanes x 4 bytes from byte 0: bytes 0..127, sectors 0..3, line 0.
  EXPECT_EQ(model::sectors_touched(model::lane_addresses(0, 4), 4), 4);
  EXPECT_EQ(model::lines_touched(model::lane_addresses(0, 4), 4), 1);
  // The same starting at byte 4: bytes 4..131 reach into sector 4 and line 1.
  EXPECT_EQ(model::sectors_touched(model::lane_addresses(4, 4), 4), 5);
  EXPECT_EQ(model::lines_touched(model::lane_addresses(4, 4), 4), 2);
  // One 8-byte access at byte 28 straddles sectors 0 and 1.
  EXPECT_EQ(model::sectors_touched({28}, 8), 2);
  // All lanes reading one float: one sector (a broadcast).
  EXPECT_EQ(model::sectors_touched(model::lane_addresses(64, 0), 4), 1);
  // Bytes 0..63 in 64-byte pieces: one; bytes 60..64: two.
  EXPECT_EQ(model::granules_in_range(0, 63, 64), 1);
  EXPECT_EQ(model::granules_in_range(60, 64, 64), 2);
}

TEST(MicroModel, BankConflictDegreeIsGcdOfStrideAnd32) {
  // Lane l reads word l * s: bank (l * s) mod 32. The 32 lanes cover 32 / gcd(s, 32) banks with
  // gcd(s, 32) distinct words each, e.g. s = 2: banks 0, 2, .., 30, two words each.
  for (int s = 1; s <= 32; ++s) EXPECT_EQ(model::smem_stride_degree(s), std::gcd(s, 32)) << s;
  EXPECT_EQ(model::smem_stride_degree(2), 2);
  EXPECT_EQ(model::smem_stride_degree(3), 1);
  EXPECT_EQ(model::smem_stride_degree(31), 1);
  EXPECT_EQ(model::smem_stride_degree(32), 32);
  // The same word for every lane is a broadcast, no conflict; words 0 and 32 share bank 0.
  EXPECT_EQ(model::bank_conflict_degree(std::vector<uint64_t>(32, 7)), 1);
  EXPECT_EQ(model::bank_conflict_degree({0, 32, 1}), 2);
}

TEST(MicroModel, GigabytesPerSecond) {
  EXPECT_DOUBLE_EQ(model::gb_per_s(1e9, 1.0), 1000.0); // 1 GB in 1 ms
  EXPECT_TRUE(std::isnan(model::gb_per_s(1e9, 0.0)));
}

// ---- fma: the blog's single-block runs ----------------------------------------------------------
// n = 1,048,576 floats in each of x and y (8 MiB together), op = 1, one block. Per element the
// kernel loads x[i], y[i], a[0], does one FFMA and stores y[i].

struct HandCounts {
  int threads;
  int64_t ffma_warp, l1_ld_req, l1_st_req, l2_ld_req, l2_ld_sect, l2_st_sect;
  double l1_hit_pct;
};

TEST(MicroModel, FmaSingleBlockHandCounts) {
  constexpr int64_t n = 1 << 20;
  const HandCounts cases[] = {
      // 1 thread: one warp with one lane walks all n elements: n warp iterations, 3 loads and a
      // store each. A sector holds 8 floats, so x and y each come from L2 as n / 8 = 131,072
      // sectors, one sector per request; a[0] once: 262,145. Each store writes one sector to L2.
      // L1 sectors: 4 per element (3 loaded, 1 stored); hit rate 1 - 262,145 / 4n = 93.75 %.
      {1, n, 3 * n, n, 262145, 262145, n, 93.75},
      // 8 threads: one warp, 8 lanes: a request covers 8 consecutive floats = one sector.
      // n / 8 = 131,072 warp iterations; loads 3 x 131,072 = 393,216; every x and y sector is new:
      // 262,144 + 1 from L2, one sector per request. Stores: 131,072 sectors. L1 sectors
      // 4 x 131,072 = 524,288, hit rate 1 - 262,145 / 524,288 = 50.0 %.
      {8, n / 8, 393216, 131072, 262145, 262145, 131072, 50.0},
      // 32 threads: a request covers 32 floats = one 128-byte line = 4 sectors. n / 32 = 32,768
      // warp iterations, 98,304 load requests; L2 requests: one line each for x and y per
      // iteration + a[0] = 65,537, still 262,145 sectors. Stores: 32,768 requests of 4 sectors =
      // 131,072. L1 sectors (4 + 4 + 1) x 32,768 loaded + 131,072 stored = 425,984: hit rate
      // 1 - 262,145 / 425,984 = 38.46 % (ncu says 38.5 in the blog).
      {32, n / 32, 98304, 32768, 65537, 262145, 131072, 38.46},
      // 64 threads: two warps, each taking every other 32-float line: n / 64 = 16,384 iterations
      // each, 32,768 in all, so the same totals as 32 threads; each warp still brings one new
      // line of x and of y per iteration.
      {64, n / 32, 98304, 32768, 65537, 262145, 131072, 38.46},
  };
  for (const HandCounts& h : cases) {
    SCOPED_TRACE(h.threads);
    const model::FmaCounts c = model::fma_counts(n, 1, h.threads, 1);
    EXPECT_EQ(c.ffma_warp, h.ffma_warp);
    EXPECT_EQ(c.ffma_thread, n); // FFMA executed per warp x active lanes: always n x op
    EXPECT_EQ(c.l1_ld_requests, h.l1_ld_req);
    EXPECT_EQ(c.l1_st_requests, h.l1_st_req);
    EXPECT_EQ(c.l2_ld_requests, h.l2_ld_req);
    EXPECT_EQ(c.l2_ld_sectors, h.l2_ld_sect);
    EXPECT_EQ(c.l2_st_sectors, h.l2_st_sect);
    EXPECT_NEAR(c.l1_hit_pct(), h.l1_hit_pct, 0.01);
    // Device memory: x and y once each, in 64-byte pieces (2 x 65,536 pieces of 2 sectors), and
    // one piece for a: 262,146 sectors read (the blog measured 262,240 on an A100). y written back
    // once: 131,072 sectors.
    EXPECT_EQ(c.dram_rd_sectors, 262146);
    EXPECT_EQ(c.dram_wr_sectors, 131072);
    EXPECT_DOUBLE_EQ(c.useful_bytes, 12.0 * n);
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * n);
  }
}

TEST(MicroModel, FmaPartialWarpsAndTwoBlocks) {
  // n = 100, 2 blocks of 40 threads (a full warp and one of 8 lanes), op = 2. Grid stride 80.
  //   block 0, pass 0: warp 0 elements 0..31 (sectors 0-3, line 0), warp 1 32..39 (sector 4, line
  //   1) block 0, pass 1: warp 0 80..99 (20 lanes; sectors 10-12, lines 2-3); warp 1 would start at
  //   112 block 1, pass 0: warp 0 40..71 (sectors 5-8, lines 1-2), warp 1 72..79 (sector 9, line 2)
  // 5 warp iterations: FFMA 2 x 5 = 10 warp-level, 200 thread-level; loads 3 x 10, stores 10.
  // Sectors per iteration 4, 1, 3, 4, 1 = 13, lines 1, 1, 2, 2, 1 = 7.
  // L1 load sectors: op x (2 x 13 + 5 for a) = 62; stores 2 x 13 = 26 sectors in 2 x 7 requests.
  // From L2 (each block has its own L1): block 0 x: 8 sectors in 1 + 1 + 2 = 4 line requests,
  // block 1 x: 5 sectors in 2 + 1 = 3; the same for y; a once per block (1 sector, 1 request):
  // sectors 2 x 13 + 2 = 28, requests 2 x 7 + 2 = 16.
  // Device memory: 400 bytes of x are 7 pieces of 64 bytes, y too, a one: 15 pieces = 30 sectors;
  // y written back: 13 sectors.
  const model::FmaCounts c = model::fma_counts(100, 2, 40, 2);
  EXPECT_EQ(c.warp_iterations, 5);
  EXPECT_EQ(c.ffma_warp, 10);
  EXPECT_EQ(c.ffma_thread, 200);
  EXPECT_EQ(c.l1_ld_requests, 30);
  EXPECT_EQ(c.l1_st_requests, 10);
  EXPECT_EQ(c.l1_ld_sectors, 62);
  EXPECT_EQ(c.l1_st_sectors, 26);
  EXPECT_EQ(c.l2_st_sectors, 26);
  EXPECT_EQ(c.l2_st_requests, 14);
  EXPECT_EQ(c.l2_ld_sectors, 28);
  EXPECT_EQ(c.l2_ld_requests, 16);
  EXPECT_EQ(c.dram_rd_sectors, 30);
  EXPECT_EQ(c.dram_wr_sectors, 13);
}

TEST(MicroModel, FmaOpRepeatsInstructionsNotTraffic) {
  // With op = 8 every warp iteration runs 8 x (3 loads, FFMA, store); the data it loads is the
  // same, so L2 reads (after L1) do not grow, stores do (write-through).
  const model::FmaCounts one = model::fma_counts(1 << 16, 4, 256, 1);
  const model::FmaCounts eight = model::fma_counts(1 << 16, 4, 256, 8);
  EXPECT_EQ(eight.ffma_warp, 8 * one.ffma_warp);
  EXPECT_EQ(eight.l1_ld_requests, 8 * one.l1_ld_requests);
  EXPECT_EQ(eight.l2_st_sectors, 8 * one.l2_st_sectors);
  EXPECT_EQ(eight.l2_ld_sectors, one.l2_ld_sectors); // a[0..8) still fits one sector per block
  EXPECT_EQ(eight.dram_rd_sectors, one.dram_rd_sectors);
}

TEST(MicroModel, FmaRejectsImpossibleLaunches) {
  EXPECT_THROW(model::fma_counts(10, 0, 32, 1), std::invalid_argument);
  EXPECT_THROW(model::fma_counts(10, 1, 1025, 1), std::invalid_argument);
  EXPECT_THROW(model::fma_counts(10, 1, 32, 0), std::invalid_argument);
}

TEST(MicroModel, FmaTimeFloor) {
  // One SM at 1 GHz with 128 FP32 lanes, copy bandwidth 1000 GB/s; n = 2^20, one block of 32:
  //   L1: max(98,304 + 32,768 requests, 425,984 sectors / 4) = 131,072 clocks = 0.131072 ms
  //   FP32: 32,768 warp FFMA at 4 per clock = 8,192 clocks = 0.008192 ms
  //   DRAM: (262,146 + 131,072) sectors x 32 B = 12.58 MB at 1000 GB/s = 0.012583 ms
  model::DeviceModel d;
  d.sm_count = 1;
  d.sm_clock_ghz = 1.0;
  d.fp32_lanes_per_sm = 128;
  const model::FmaCounts c = model::fma_counts(1 << 20, 1, 32, 1);
  const model::TimeFloor floor = model::fma_time_floor(c, 1, d, 1000.0);
  EXPECT_EQ(floor.bound, "l1");
  EXPECT_NEAR(floor.ms, 0.131072, 1e-9);
  // Without clock, only the DRAM term is known.
  d.sm_clock_ghz = 0;
  const model::TimeFloor dram_only = model::fma_time_floor(c, 1, d, 1000.0);
  EXPECT_EQ(dram_only.bound, "dram");
  EXPECT_NEAR(dram_only.ms, (262146 + 131072) * 32.0 / 1e9, 1e-12);
  EXPECT_TRUE(std::isnan(model::fma_time_floor(c, 1, d, std::nan("")).ms));
}

TEST(MicroModel, FmaBlocksToFillTheDevice) {
  EXPECT_EQ(model::fma_blocks_to_fill(model::assumed_h200(), 256), 132 * 8);
  EXPECT_EQ(model::fma_blocks_to_fill(model::assumed_h200(), 1024), 132 * 2);
}

TEST(MicroModel, Fp32Peak) {
  // H200 as assumed: 132 SMs x 128 lanes x 2 FLOP x 1.98 GHz = 66,908 GFLOP/s.
  EXPECT_NEAR(model::assumed_h200().fp32_peak_gflops(), 66908.16, 0.01);
  EXPECT_EQ(model::fp32_lanes_per_sm(8, 0), 64);
  EXPECT_EQ(model::fp32_lanes_per_sm(9, 0), 128);
  EXPECT_EQ(model::fp32_lanes_per_sm(3, 5), 0);
}

// ---- copy ---------------------------------------------------------------------------------------

TEST(MicroModel, StridedCopySectorsAndBandwidth) {
  // A warp reads 32 floats s floats apart: a span of 128 s bytes, so 4 s sectors until s = 8,
  // then one sector per lane (32); lines: one per 32 floats of span, so s lines (1..32).
  // From device memory each element costs min(4 s, 64) bytes (64-byte pieces) plus 4 written;
  // stride 1 moves 8 bytes per element, so the useful bandwidth falls to 8 / (min(4s, 64) + 4):
  // s = 2: 8/12, s = 4: 8/20, s = 8: 8/36, s = 16 and 32: 8/68.
  const int strides[] = {1, 2, 4, 8, 16, 32};
  const int64_t sectors[] = {4, 8, 16, 32, 32, 32};
  const int64_t lines[] = {1, 2, 4, 8, 16, 32};
  const double relative[] = {1.0, 8.0 / 12, 8.0 / 20, 8.0 / 36, 8.0 / 68, 8.0 / 68};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(strides[i]);
    const model::StridedCopyModel m = model::strided_copy(strides[i]);
    EXPECT_EQ(m.ld_sectors_per_request, sectors[i]);
    EXPECT_EQ(m.ld_lines_per_request, lines[i]);
    EXPECT_DOUBLE_EQ(m.relative_bandwidth, relative[i]);
  }
  // From 2 to 8 each doubling of the stride loses about half: 0.667 -> 0.4 -> 0.222.
  EXPECT_NEAR(model::strided_copy(4).relative_bandwidth / model::strided_copy(2).relative_bandwidth,
              0.6, 1e-12);
  EXPECT_NEAR(model::strided_copy(8).relative_bandwidth / model::strided_copy(4).relative_bandwidth,
              20.0 / 36, 1e-12);
  EXPECT_DOUBLE_EQ(model::copy_bytes(1000), 8000.0);
  EXPECT_THROW(model::strided_copy(0), std::invalid_argument);
}

// ---- transpose ----------------------------------------------------------------------------------

TEST(MicroModel, TransposeAccessPatterns) {
  // Naive: a warp reads 32 floats of one row (4 sectors) and writes them down a column, 8192
  // floats apart: 32 sectors. Tiled: both sides are 32 floats of one row. Reading the tile
  // tile[lane][ty]: word 32 lane + ty, always bank ty: 32-way; with rows of 33 words, bank
  // (lane + ty) mod 32: all different.
  const auto naive = model::transpose_model(model::TransposeKind::naive, 8192);
  EXPECT_EQ(naive.ld_sectors_per_request, 4);
  EXPECT_EQ(naive.st_sectors_per_request, 32);
  EXPECT_EQ(naive.smem_load_degree, 0);
  const auto tiled = model::transpose_model(model::TransposeKind::tiled, 8192);
  EXPECT_EQ(tiled.ld_sectors_per_request, 4);
  EXPECT_EQ(tiled.st_sectors_per_request, 4);
  EXPECT_EQ(tiled.smem_store_degree, 1);
  EXPECT_EQ(tiled.smem_load_degree, 32);
  const auto padded = model::transpose_model(model::TransposeKind::padded, 8192);
  EXPECT_EQ(padded.st_sectors_per_request, 4);
  EXPECT_EQ(padded.smem_store_degree, 1);
  EXPECT_EQ(padded.smem_load_degree, 1);
  EXPECT_EQ(padded.smem_wavefronts_per_request, 1);
  // pad32: the textbook [32][33] tile, the same counts.
  const auto pad32 = model::transpose_model(model::TransposeKind::padded32, 8192);
  EXPECT_EQ(pad32.st_sectors_per_request, 4);
  EXPECT_EQ(pad32.smem_load_degree, 1);
  // 8-byte elements: 32 lanes x 8 bytes = 8 sectors per request on both sides. A tile row is 33
  // doubles = 66 words, so lane l of a column read takes banks 2 l + 2 ty and 2 l + 2 ty + 1:
  // the 16 lanes of a half-warp cover the 32 banks once (degree 1), and a warp's request is the
  // two half-warps: 2 wavefronts, the least 256 bytes can take.
  const auto f64 = model::transpose_model(model::TransposeKind::padded32_f64, 8192);
  EXPECT_EQ(model::transpose_element_bytes(model::TransposeKind::padded32_f64), 8);
  EXPECT_EQ(f64.ld_sectors_per_request, 8);
  EXPECT_EQ(f64.st_sectors_per_request, 8);
  EXPECT_EQ(f64.ideal_sectors_per_request, 8);
  EXPECT_EQ(f64.smem_store_degree, 1);
  EXPECT_EQ(f64.smem_load_degree, 1);
  EXPECT_EQ(f64.smem_wavefronts_per_request, 2);
  EXPECT_STREQ(model::transpose_name(model::TransposeKind::padded32_f64), "pad32-f64");
}

// ---- double3 ------------------------------------------------------------------------------------

TEST(MicroModel, Double3SectorsPerRequest) {
  // double3: lane i's x is at 24 i, so one 8-byte load of the warp spans 32 x 24 = 768 bytes:
  // 24 sectors per request, 3 times the 8 an 8-byte load of 32 consecutive doubles needs (the
  // NVIDIA sample: 2,359,296 sectors / 98,304 requests = 24). The y and z loads find those sectors
  // in L1: 24 from L2 either way. The stores write each sector 3 times, partially: 72 vs 24.
  const auto d3 = model::add_constant_model(model::AddLayout::double3);
  const auto d = model::add_constant_model(model::AddLayout::doubles);
  EXPECT_EQ(d3.ld_sectors_per_request, 24);
  EXPECT_EQ(d.ld_sectors_per_request, 8);
  EXPECT_EQ(d3.ld_sectors_per_request / d.ld_sectors_per_request, 3);
  EXPECT_EQ(d3.ideal_sectors_per_request, 8);
  EXPECT_EQ(d3.ld_requests, 3);
  EXPECT_EQ(d.ld_requests, 3);
  EXPECT_EQ(d3.l1_ld_sectors, 72);
  EXPECT_EQ(d.l1_ld_sectors, 24);
  EXPECT_EQ(d3.l2_ld_sectors, 24);
  EXPECT_EQ(d.l2_ld_sectors, 24);
  EXPECT_EQ(d3.l2_st_sectors, 72);
  EXPECT_EQ(d.l2_st_sectors, 24);
  EXPECT_EQ(d3.dram_bytes, d.dram_bytes);
}

// ---- L2 persistence -----------------------------------------------------------------------------

TEST(MicroModel, L2WindowHitFractions) {
  // L2 60 MiB, 37.5 MiB set aside for persisting lines, stream S = 1 GiB.
  constexpr int64_t MiB = 1 << 20, S = 1024 * MiB, L2 = 60 * MiB, P = 75 * MiB / 2;
  // No window: a frequent element is reused after 2 F bytes (the rest of the buffer and as much
  // stream). F = 10 MiB: 20 MiB fits in L2, every reuse hits. F = 40 MiB: 80 does not, none hit.
  EXPECT_EQ(model::l2_window(S, 10 * MiB, L2, 0, 0).freq_hit_fraction, 1.0);
  EXPECT_EQ(model::l2_window(S, 40 * MiB, L2, 0, 0).freq_hit_fraction, 0.0);
  // hitRatio 1: F = 30 MiB fits the 37.5 MiB set-aside: all hit; F = 40 MiB thrashes it: none.
  EXPECT_EQ(model::l2_window(S, 30 * MiB, L2, P, 1.0).freq_hit_fraction, 1.0);
  EXPECT_EQ(model::l2_window(S, 40 * MiB, L2, P, 1.0).freq_hit_fraction, 0.0);
  // hitRatio 37.5 / 40 = 0.9375: 37.5 MiB persist and hit; the other 2.5 MiB compete with the
  // stream in the remaining 22.5 MiB (2.5 + 40 > 22.5): miss. DRAM per pass: stream read and
  // written (2 S) plus, for the missing 6.25 % of the S frequent accesses, a read and a
  // write-back; no window: 2 S + 2 S.
  const auto fitted = model::l2_window(S, 40 * MiB, L2, P, 0.9375);
  EXPECT_DOUBLE_EQ(fitted.freq_hit_fraction, 0.9375);
  EXPECT_DOUBLE_EQ(fitted.dram_bytes, 2.0 * S + 2 * 0.0625 * S);
  EXPECT_DOUBLE_EQ(fitted.useful_bytes, 4.0 * S);
  const auto none = model::l2_window(S, 40 * MiB, L2, 0, 0);
  EXPECT_DOUBLE_EQ(none.dram_bytes, 4.0 * S);
  EXPECT_DOUBLE_EQ(none.dram_bytes / fitted.dram_bytes, 4.0 / 2.125);
  // hitRatio 0.5 at F = 30 MiB: 15 MiB persist and hit; normal lines may use the 22.5 MiB of the
  // set-aside they leave free, so the other 15 MiB and 30 MiB of stream fit in 45: all hit. At
  // F = 40 MiB the normal half needs 20 + 40 > 40 MiB: only the persisting half hits.
  EXPECT_EQ(model::l2_window(S, 30 * MiB, L2, P, 0.5).freq_hit_fraction, 1.0);
  EXPECT_EQ(model::l2_window(S, 40 * MiB, L2, P, 0.5).freq_hit_fraction, 0.5);
  EXPECT_THROW(model::l2_window(S, 0, L2, P, 1.0), std::invalid_argument);
  EXPECT_THROW(model::l2_window(S, MiB, L2, P, 1.5), std::invalid_argument);
}

TEST(MicroModel, L2WindowModesSeparateTheSuspects) {
  constexpr int64_t MiB = 1 << 20, P = 75 * MiB / 2;
  using model::WindowMode;
  const auto none = model::window_setting(WindowMode::none, 40 * MiB, P);
  EXPECT_EQ(none.set_aside_bytes, 0);
  EXPECT_FALSE(none.window);
  const auto carveout = model::window_setting(WindowMode::carveout, 40 * MiB, P);
  EXPECT_EQ(carveout.set_aside_bytes, P);
  EXPECT_FALSE(carveout.window);
  EXPECT_EQ(carveout.persisting_ratio(), 0.0);
  // A window, but over a buffer the kernel never touches: no frequent line persists.
  const auto elsewhere = model::window_setting(WindowMode::elsewhere, 40 * MiB, P);
  EXPECT_TRUE(elsewhere.window);
  EXPECT_FALSE(elsewhere.over_frequent);
  EXPECT_EQ(elsewhere.persisting_ratio(), 0.0);
  const auto persist = model::window_setting(WindowMode::persist, 40 * MiB, P);
  EXPECT_TRUE(persist.window && persist.over_frequent && persist.persisting);
  EXPECT_EQ(persist.persisting_ratio(), 1.0);
  const auto normal = model::window_setting(WindowMode::normal, 40 * MiB, P);
  EXPECT_EQ(normal.hit_ratio, 1.0);
  EXPECT_FALSE(normal.persisting);
  EXPECT_EQ(normal.persisting_ratio(), 0.0);
  EXPECT_EQ(model::window_setting(WindowMode::half, 40 * MiB, P).persisting_ratio(), 0.5);
  EXPECT_DOUBLE_EQ(model::window_setting(WindowMode::fit, 40 * MiB, P).hit_ratio, 0.9375);
  EXPECT_EQ(model::window_setting(WindowMode::fit, 10 * MiB, P).hit_ratio, 1.0);
  EXPECT_STREQ(model::window_mode_name(WindowMode::elsewhere), "elsewhere");
  EXPECT_THROW(model::window_setting(WindowMode::fit, 0, P), std::invalid_argument);
}

} // namespace
