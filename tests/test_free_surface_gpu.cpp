// The free surface (solvers/contracts/free_surface.h) on every CUDA variant against the CPU
// reference (label gpu; each test skips where no GPU is usable). The TTI kernels' free surface is
// tested in tests/test_tti_gpu.cpp.
//
// What is checked, and why it can fail:
// - Every float32 and half variant, 12 steps from random values in every element (the top halo
//   holds garbage, which the surface's image must replace before the first step): the interior
//   within the tolerance of tests/test_cuda_variants.cpp, and the top halo of the last field
//   stepped from exactly the negative of its first rows. A kernel or a launch path that steps
//   without the image reads the garbage (values ~0.5 next to the surface: O(1) error).
// - The same steps through plane ranges (0..2, then the rest), as a z-slab's steps run.
// - bfp16 and bfp16_model16 (no halo values of their own): quantised random interiors, 12 steps,
//   within tests/test_bfp16_gpu.cpp's quantisation bound; without the image their halo is zero,
//   the old surface, 0.1 cell off (a relative error of order 1e-1 near the top on random fields).
// - The fused backward step (regqueue_vec4, tma_ring) against the CPU's separate steps with
//   imaging, both fields from random values with a garbage halo.
// - The issue's modelling case through model_shots on the GPU: the traces equal the CPU's, and
//   fit the image solution with the mirror at z = -dz within 1%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cuda/cuda_backend.h"
#include "solvers/contracts/bfp16.h"
#include "solvers/contracts/free_surface.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/cuda_test_support.h"
#include "tests/support/free_surface_shot.h"
#include "tests/support/random_medium.h"
#include "tests/support/relative_l2.h"
#include "tests/support/round_to_half.h"

namespace rtm {
namespace {

using test::all_variants;
using test::fresh_seed;
using test::is_fp16;

constexpr int kSteps = 12;
// As tests/test_cuda_variants.cpp: float32 summation order; half storage's rounding per step.
double tolerance(const std::string& variant) { return is_fp16(variant) ? 1e-2 : 1e-5; }

// A heterogeneous medium on spacings 10, 12, 8 m (v2dt2 values exact in half, as in
// test_cuda_variants.cpp, so that the half-model kernels run the CPU's very model), the surface on.
PropagatorSetup surface_setup(int nx, int ny, int nz, std::mt19937_64& rng) {
  PropagatorSetup setup = test::random_medium_setup(nx, ny, nz, 10.0, 12.0, 8.0, rng);
  for (float& v : setup.v2dt2) v = test::round_to_half(v);
  setup.free_surface = true;
  return setup;
}

// Cells of the top halo of `f` that are not the image of its first rows (exactly).
int64_t not_the_image(const GridLayout& g, const std::vector<float>& f) {
  int64_t wrong = 0;
  for (int k = -kHalo; k <= kFreeSurfacePlane; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const float expected =
            k == kFreeSurfacePlane ? 0.0f : -f[size_t(g.index(i, j, free_surface_source(k)))];
        wrong += f[size_t(g.index(i, j, k))] != expected;
      }
  return wrong;
}

struct State {
  std::vector<float> prev, cur;
};

// kSteps steps of `w` from (prev0, cur0), whole or as plane ranges [0, 2) and [2, nz).
State stepped(Wavefield& w, const std::vector<float>& prev0, const std::vector<float>& cur0,
              bool plane_ranges) {
  w.set_state(prev0, cur0);
  for (int s = 0; s < kSteps; ++s) {
    if (plane_ranges) {
      w.step_planes(0, 2);
      w.step_planes(2, w.layout().nz);
      w.finish_step();
    } else {
      w.step();
    }
  }
  State state;
  w.get_state(state.prev, state.cur);
  return state;
}

class FreeSurfaceVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(FreeSurfaceVariant, MatchesTheCpuReferenceWholeAndInPlaneRanges) {
  SKIP_WITHOUT_GPU();
  const std::string variant = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = surface_setup(67, 45, 29, rng);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = test::random_signed_values(size_t(g.size), rng);
  const std::vector<float> cur0 = test::random_signed_values(size_t(g.size), rng);
  CpuWavefield cpu(setup);
  const State want = stepped(cpu, prev0, cur0, false);
  for (bool ranges : {false, true}) {
    const State got = stepped(*cuda::make_wavefield(setup, variant, {}, 0), prev0, cur0, ranges);
    const double e_cur = interior_relative_l2(g, got.cur, want.cur);
    const double e_prev = interior_relative_l2(g, got.prev, want.prev);
    std::printf("%s%s: relative L2 vs CPU %.3g (p[n+1]), %.3g (p[n])\n", variant.c_str(),
                ranges ? " (plane ranges)" : "", e_cur, e_prev);
    EXPECT_LE(e_cur, tolerance(variant)) << variant << (ranges ? ", plane ranges" : "");
    EXPECT_LE(e_prev, tolerance(variant)) << variant << (ranges ? ", plane ranges" : "");
    EXPECT_EQ(not_the_image(g, got.prev), 0) << variant << ": the top halo of the last field stepped from";
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, FreeSurfaceVariant, ::testing::ValuesIn(all_variants()),
                         [](const auto& test) { return test.param; });

// ---- block floating point ----------------------------------------------------------------------

class FreeSurfaceBfp16 : public ::testing::TestWithParam<std::string> {};

TEST_P(FreeSurfaceBfp16, MatchesTheCpuReferenceWithinTheQuantisationBound) {
  SKIP_WITHOUT_GPU();
  const std::string variant = GetParam();
  FRESH_RNG(rng);
  PropagatorSetup setup = test::random_medium_setup(67, 45, 29, 10.0, 12.0, 8.0, rng);
  bfp16::quantise_model(67, 45, 29, setup.v2dt2);
  setup.free_surface = true;
  const GridLayout& g = setup.layout;
  auto quantised_random = [&] {
    std::vector<float> f = test::random_signed_values(size_t(g.size), rng);
    bfp16::quantise_field(g, f); // bfp16 takes no halo values
    return f;
  };
  const std::vector<float> prev0 = quantised_random(), cur0 = quantised_random();
  CpuWavefield cpu(setup);
  const State want = stepped(cpu, prev0, cur0, false);
  const State got = stepped(*cuda::make_wavefield(setup, variant, {}, 0), prev0, cur0, false);
  double largest = 0, sum2 = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double v = want.cur[size_t(g.index(i, j, k))];
        largest = std::max(largest, std::abs(v));
        sum2 += v * v;
      }
  // tests/test_bfp16_gpu.cpp: each step rounds by at most 2^-15 of a block's largest value.
  const double bound = 2.0 * (kSteps + 1) * std::ldexp(1.0, -15) * largest /
                       std::sqrt(sum2 / double(g.interior_cells()));
  const double error = interior_relative_l2(g, got.cur, want.cur);
  std::printf("%s: relative L2 vs CPU %.3g (bound %.3g)\n", variant.c_str(), error, bound);
  EXPECT_LE(error, bound) << variant;
  EXPECT_EQ(not_the_image(g, got.prev), 0) << variant << ": the top halo decodes as the image";
}

INSTANTIATE_TEST_SUITE_P(Bfp16, FreeSurfaceBfp16, ::testing::Values("bfp16", "bfp16_model16"),
                         [](const auto& test) { return test.param; });

// ---- the fused backward step ---------------------------------------------------------------------

class FreeSurfaceFused : public ::testing::TestWithParam<std::string> {};

// Three backward steps with imaging on the first and the third, on a layered model with the
// surface and the C-PML elsewhere (8-cell layers).
TEST_P(FreeSurfaceFused, StepBothMatchesTheCpuSeparateSteps) {
  SKIP_WITHOUT_GPU();
  const std::string variant = GetParam();
  const test::RtmProblem p = test::layered_problem(45, 21, 30, 8, 10, true);
  const PropagatorSetup setup = make_propagator_setup(p.sim);
  ASSERT_TRUE(setup.free_surface);
  FRESH_RNG(rng);
  const size_t n = size_t(setup.layout.size);
  const std::vector<float> s_prev = test::random_signed_values(n, rng), s_cur = test::random_signed_values(n, rng);
  const std::vector<float> r_prev = test::random_signed_values(n, rng), r_cur = test::random_signed_values(n, rng);
  auto run = [&](const std::string& backend) {
    BackendOptions options;
    options.backend = backend;
    options.variant = variant;
    std::ostringstream log;
    std::unique_ptr<ShotFields> f = make_shot_fields(setup, options, log);
    f->source().set_state(s_prev, s_cur);
    f->receiver().set_state(r_prev, r_cur);
    f->allocate_image(p.box);
    for (float w : {3.0f, 0.0f, 1.5f}) f->step_both(w);
    State source, receiver;
    f->source().get_state(source.prev, source.cur);
    f->receiver().get_state(receiver.prev, receiver.cur);
    return std::tuple{source, receiver, f->download_image()};
  };
  std::unique_ptr<ShotFields> probe;
  try {
    BackendOptions options;
    options.backend = "cuda";
    options.variant = variant;
    std::ostringstream log;
    probe = make_shot_fields(setup, options, log);
    probe->source().step();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find("compute capability") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  const auto [cpu_s, cpu_r, cpu_image] = run("cpu");
  const auto [gpu_s, gpu_r, gpu_image] = run("cuda");
  const GridLayout& g = setup.layout;
  const double e_s = interior_relative_l2(g, gpu_s.cur, cpu_s.cur);
  const double e_r = interior_relative_l2(g, gpu_r.cur, cpu_r.cur);
  const double e_image = relative_l2(gpu_image, cpu_image);
  std::printf("%s fused: relative L2 vs CPU: source %.3g, receiver %.3g, image %.3g\n", variant.c_str(),
              e_s, e_r, e_image);
  EXPECT_LE(e_s, 1e-5);
  EXPECT_LE(e_r, 1e-5);
  EXPECT_LE(e_image, 1e-5);
  EXPECT_EQ(not_the_image(g, gpu_s.prev), 0) << "source field's top halo";
  EXPECT_EQ(not_the_image(g, gpu_r.prev), 0) << "receiver field's top halo";
}

INSTANTIATE_TEST_SUITE_P(FusedVariants, FreeSurfaceFused, ::testing::Values("regqueue_vec4", "tma_ring"),
                         [](const auto& test) { return test.param; });

// ---- the issue's case through the application path ----------------------------------------------

TEST(FreeSurfaceApp, TracesOfTheIssueCaseMatchTheCpuAndTheImageSolution) {
  SKIP_WITHOUT_GPU();
  BackendOptions cuda_auto;
  cuda_auto.backend = "cuda";
  for (double depth : {0.0, 20.0}) {
    const test::SurfaceShot cpu = test::model_surface_shot(10.0, depth);
    const test::SurfaceShot gpu = test::model_surface_shot(10.0, depth, 20, cuda_auto);
    const double vs_cpu = relative_l2(gpu.traces, cpu.traces);
    const double at_surface = test::misfit(gpu, -10.0);
    std::printf("source %.0f m: GPU traces vs CPU %.3g; misfit %.3f%% with the mirror at z = -dz\n", depth,
                vs_cpu, 100 * at_surface);
    EXPECT_LE(vs_cpu, 1e-5) << "source at " << depth << " m";
    EXPECT_LT(at_surface, 0.01) << "source at " << depth << " m";
  }
}

} // namespace
} // namespace rtm
