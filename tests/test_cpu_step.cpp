// The CPU step's speed-related set-up: subnormals flushed in every thread that steps (kernels/cpu/
// denormals.h), the instruction-set variants of the row loop bit-identical, and the CPU bench's
// building blocks (solvers/drivers/cpu_bench.h). No timed assertions: speed is checked by what makes it.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "solvers/drivers/cpu_bench.h"
#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cpu/denormals.h"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define RTM_TEST_HAVE_MXCSR 1
#endif

namespace rtm {
namespace {

constexpr float kSubnormal = 1e-40f; // below FLT_MIN (1.18e-38), above zero

// Clears FTZ and DAZ on this thread and on every worker of the pool, so a test starts from the
// mode a fresh process has.
void allow_denormals_everywhere() {
#ifdef RTM_TEST_HAVE_MXCSR
  auto clear = [] { _mm_setcsr(_mm_getcsr() & ~0x8040u); }; // FTZ (bit 15) and DAZ (bit 6)
  clear();
#pragma omp parallel
  clear();
#endif
}

// Per thread of a parallel region of `threads` threads: whether FTZ/DAZ are set, and whether a
// product that would be subnormal and a subnormal input both come out as zero.
struct ThreadMode {
  bool flags = false, product_flushed = false, input_flushed = false;
};
std::vector<ThreadMode> mode_in_every_thread(int threads) {
  std::vector<ThreadMode> modes(static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    volatile float tiny = 1e-30f, subnormal = kSubnormal, one = 1.0f; // volatile: computed at run time
    ThreadMode& m = modes[size_t(omp_get_thread_num())];
    m.flags = denormals_flushed();
    m.product_flushed = tiny * 1e-10f == 0.0f; // 1e-40: subnormal unless FTZ
    m.input_flushed = subnormal * one == 0.0f; // DAZ reads the subnormal as 0
  }
  return modes;
}

void expect_flushed_everywhere(const std::vector<ThreadMode>& modes, const char* when) {
  for (size_t t = 0; t < modes.size(); ++t) {
    EXPECT_TRUE(modes[t].flags) << when << ": thread " << t << " has FTZ/DAZ off";
    EXPECT_TRUE(modes[t].product_flushed) << when << ": thread " << t << " produced a subnormal";
    EXPECT_TRUE(modes[t].input_flushed) << when << ": thread " << t << " read a subnormal as non-zero";
  }
}

#ifdef RTM_TEST_HAVE_MXCSR

TEST(Denormals, OffInAFreshPoolSoTheTestsBelowCanFail) {
  allow_denormals_everywhere();
  for (const ThreadMode& m : mode_in_every_thread(omp_get_max_threads())) {
    EXPECT_FALSE(m.flags);
    EXPECT_FALSE(m.product_flushed);
    EXPECT_FALSE(m.input_flushed);
  }
}

TEST(Denormals, FlushedInEveryOpenMPWorkerAndInThreadsCreatedLater) {
  const int threads = std::max(2, omp_get_max_threads());
  (void)mode_in_every_thread(threads); // the pool exists, with the mode off, before the call
  allow_denormals_everywhere();
  flush_denormals_on_all_threads();
  expect_flushed_everywhere(mode_in_every_thread(threads), "existing pool");
  // A larger team creates new workers: they inherit the mode from the thread that creates them.
  expect_flushed_everywhere(mode_in_every_thread(threads + 3), "grown pool");
  bool plain_thread_flushed = false;
  std::thread([&] { plain_thread_flushed = denormals_flushed(); }).join();
  EXPECT_TRUE(plain_thread_flushed) << "a std::thread did not inherit FTZ/DAZ";
}

TEST(Denormals, BuildingACpuWavefieldFlushesInEveryWorker) {
  const int threads = std::max(2, omp_get_max_threads());
  (void)mode_in_every_thread(threads);
  allow_denormals_everywhere();
  PropagatorSetup setup;
  setup.layout = make_layout(8, 8, 8);
  setup.weights = make_laplacian_weights(10, 10, 10);
  setup.v2dt2.assign(size_t(setup.layout.interior_cells()), 0.01f);
  const CpuWavefield propagator(setup);
  expect_flushed_everywhere(mode_in_every_thread(threads), "after constructing CpuWavefield");
}

// A wavefield of subnormals (what a decaying field becomes): with DAZ the step reads them as zero
// and writes exact zeros, so no operation of the step ever touches a subnormal (the slow case).
TEST(Denormals, ASubnormalWavefieldStepsToExactZeros) {
  allow_denormals_everywhere();
  const GridLayout g = make_layout(37, 11, 13);
  std::vector<float> v2dt2(size_t(g.size), 0.1f), cur(size_t(g.size), 0.0f), prev(size_t(g.size), 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        cur[size_t(g.index(i, j, k))] = kSubnormal;
        prev[size_t(g.index(i, j, k))] = -kSubnormal;
      }
  cpu_wave_step(g, make_laplacian_weights(10, 10, 10), v2dt2.data(), DampingProfiles{}, cur.data(),
                prev.data());
  int64_t nonzero = 0;
  for (float v : prev) nonzero += v != 0.0f;
  EXPECT_EQ(nonzero, 0) << "cells of p[n+1] are non-zero: the step computed with subnormals";
  expect_flushed_everywhere(mode_in_every_thread(omp_get_max_threads()), "after a step");
}

#else

TEST(Denormals, NotAvailableOnThisArchitecture) {
  flush_denormals_on_all_threads();
  EXPECT_FALSE(denormals_flushed());
  GTEST_SKIP() << "no MXCSR: FTZ/DAZ are x86 only here";
}

#endif

// Random padded wavefields (halos and padding too) and a stable random v2dt2.
struct RandomFields {
  std::vector<float> v2dt2, cur, prev;
};
RandomFields random_fields(const GridLayout& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), speed(0.02f, 0.2f);
  RandomFields f;
  f.v2dt2.resize(size_t(g.size));
  f.cur.resize(size_t(g.size));
  f.prev.resize(size_t(g.size));
  for (int64_t n = 0; n < g.size; ++n) {
    f.v2dt2[size_t(n)] = speed(rng);
    f.cur[size_t(n)] = value(rng);
    f.prev[size_t(n)] = value(rng);
  }
  return f;
}

DampingProfiles random_damping(const GridLayout& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> e(0.0f, 0.05f);
  DampingProfiles d;
  for (int i = 0; i < g.nx; ++i) d.x.push_back(i % 3 ? 0.0f : e(rng));
  for (int j = 0; j < g.ny; ++j) d.y.push_back(e(rng));
  for (int k = 0; k < g.nz; ++k) d.z.push_back(k % 2 ? 0.0f : e(rng));
  return d;
}

// Every instruction set the row loop is compiled for gives the baseline's bits, damped or not, on
// shapes whose rows are not multiples of the vector width, over all planes or a slab of them.
TEST(CpuStepIsa, EveryInstructionSetMatchesTheBaselineBitForBit) {
  if (!cpu_step_isa_available(CpuStepIsa::avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  const int shapes[][3] = {{67, 45, 53}, {13, 7, 9}, {5, 6, 7}};
  unsigned seed = 20261122;
  for (const auto& s : shapes)
    for (const bool damped : {false, true})
      for (const int slab : {0, 1}) {
        const GridLayout g = make_layout(s[0], s[1], s[2]);
        const LaplacianWeights w = make_laplacian_weights(10, 12, 8);
        const RandomFields f = random_fields(g, ++seed);
        const DampingProfiles d = damped ? random_damping(g, seed) : DampingProfiles{};
        const int k0 = slab ? 2 : 0, k1 = slab ? g.nz - 3 : -1;
        std::vector<float> base_prev = f.prev, avx_prev = f.prev;
        cpu_wave_step_isa(CpuStepIsa::baseline, g, w, f.v2dt2.data(), d, f.cur.data(),
                          base_prev.data(), k0, k1);
        cpu_wave_step_isa(CpuStepIsa::avx2, g, w, f.v2dt2.data(), d, f.cur.data(), avx_prev.data(),
                          k0, k1);
        ASSERT_EQ(std::memcmp(base_prev.data(), avx_prev.data(), base_prev.size() * sizeof(float)), 0)
            << "avx2 differs from baseline: shape " << s[0] << "x" << s[1] << "x" << s[2]
            << (damped ? " damped" : " undamped") << (slab ? " slab" : " all planes") << ", seed "
            << seed;
        // And the step did something: p[n+1] is not p[n-1].
        ASSERT_NE(std::memcmp(base_prev.data(), f.prev.data(), base_prev.size() * sizeof(float)), 0);
      }
}

TEST(CpuStepIsa, CpuWaveStepUsesTheBestAvailable) {
  const GridLayout g = make_layout(19, 8, 6);
  const LaplacianWeights w = make_laplacian_weights(10, 10, 10);
  const RandomFields f = random_fields(g, 7);
  std::vector<float> a = f.prev, b = f.prev;
  cpu_wave_step(g, w, f.v2dt2.data(), DampingProfiles{}, f.cur.data(), a.data());
  cpu_wave_step_isa(best_cpu_step_isa(), g, w, f.v2dt2.data(), DampingProfiles{}, f.cur.data(),
                    b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_TRUE(cpu_step_isa_available(CpuStepIsa::baseline));
}

TEST(CpuBench, TriadComputesAndReportsABandwidth) {
  const CpuTriad t = measure_cpu_triad(int64_t(1) << 20, 2); // throws if the result is wrong
  EXPECT_EQ(t.elements, int64_t(1) << 20);
  EXPECT_GT(t.ms_median, 0.0);
  EXPECT_NEAR(t.gbs, 12.0 * double(t.elements) / (t.ms_median * 1e-3) / 1e9, 1e-9 * t.gbs);
  EXPECT_GE(cpu_triad_elements(1000), int64_t(1) << 25); // far larger than any cache
  EXPECT_EQ(cpu_triad_elements(int64_t(1) << 30), int64_t(1) << 30);
}

TEST(CpuBench, StepRunsAgreeBitForBitAcrossInstructionSets) {
  std::vector<CpuStepIsa> isas{CpuStepIsa::baseline};
  if (cpu_step_isa_available(CpuStepIsa::avx2)) isas.push_back(CpuStepIsa::avx2);
  std::ostringstream progress;
  const auto runs = run_cpu_step_bench(24, 20, 16, 2, 2, 1, isas, progress);
  ASSERT_EQ(runs.size(), isas.size());
  for (const CpuStepRun& r : runs) {
    EXPECT_EQ(r.ms_per_step.size(), 2u);
    EXPECT_GT(r.ms_per_step_median, 0.0);
    EXPECT_EQ(r.max_abs_diff, 0.0f) << cpu_step_isa_name(r.isa);
  }
  EXPECT_NE(progress.str().find("baseline"), std::string::npos);
}

} // namespace
} // namespace rtm
