// The CUDA TTI kernels (kernels/cuda/tti/tti_step.cuh) against the CPU reference on fresh random input:
// odd shapes, damped and undamped, whole steps and plane ranges; halo and padding cells must come
// back exactly as they went in. Skipped where no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/tti_propagator.h"
#include "kernels/cuda/tti_backend.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/simulation.h"
#include "tests/support/anisotropic_model.h"

namespace rtm {
namespace {

// A smooth TTI medium with every parameter varying, on an odd grid.
PropagatorSetup odd_setup(int nx, int ny, int nz, int width) {
  VelocityModel m = constant_model(ModelShape{nx, ny, nz, 10, 12, 9}, 2000);
  test::fill_anisotropy(m, [&m](int i, int j, int k, size_t c) {
    m.vp[c] = float(1800 + 20 * k + 5 * i);
    return test::CellAnisotropy{0.1 + 0.005 * j, 0.05 + 0.002 * i, double(-30 + 2 * i + k), double(10 + 3 * j)};
  });
  BoundaryConfig b;
  b.width = width;
  b.absorber = Absorber::sponge;
  return make_propagator_setup(make_simulation_grid(m, b, 0.0));
}

// Random values in every float of both arrays, halo and padding included (the kernels must read
// the halo as the reference does and never write it).
cuda::TtiState random_state(const GridLayout& t, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  cuda::TtiState s;
  s.prev.resize(size_t(t.size));
  s.cur.resize(size_t(t.size));
  for (float& v : s.prev) v = uniform(gen);
  for (float& v : s.cur) v = uniform(gen);
  return s;
}

// Whether cell `index` of a TTI pair is one of p's or q's (q: one scalar plane after p) on planes
// k_lo <= k < k_hi, in the interior columns.
bool in_planes(const GridLayout& t, int64_t index, int k_lo, int k_hi) {
  const int64_t qo = tti_q_offset(t);
  for (int64_t base : {int64_t(0), qo}) {
    const int64_t r = index - base - t.offset;
    if (r < 0) continue;
    const int64_t k = r / t.plane - kHalo, in_plane = r % t.plane;
    if (in_plane >= qo) continue; // the other field's plane
    const int64_t j = in_plane / t.pitch - kHalo, i = in_plane % t.pitch - kHalo;
    if (i >= 0 && i < t.nx && j >= 0 && j < t.ny && k >= k_lo && k < k_hi) return true;
  }
  return false;
}
bool is_interior(const GridLayout& t, int64_t index) { return in_planes(t, index, 0, t.nz); }
// The free surface's image (solvers/contracts/free_surface.h): the top halo's interior columns.
bool is_surface_image(const GridLayout& t, int64_t index) { return in_planes(t, index, -kHalo, 0); }

void compare(const PropagatorSetup& setup, const std::string& variant, int steps, int k_begin, int k_end,
             unsigned seed) {
  const GridLayout t = tti_layout(setup.layout);
  const cuda::TtiState start = random_state(t, seed);
  CpuTtiWavefield cpu(setup);
  cpu.set_state(start.prev, start.cur);
  for (int n = 0; n < steps; ++n) {
    cpu.step_planes(k_begin, k_end < 0 ? setup.layout.nz : k_end);
    cpu.finish_step();
  }
  cuda::TtiState want;
  cpu.get_state(want.prev, want.cur);
  const cuda::TtiState got = cuda::run_tti_steps(setup, variant, start, steps, k_begin, k_end);
  double num = 0, den = 0;
  int64_t halo_changed = 0;
  for (const auto& [a, b] : {std::pair{&got.prev, &want.prev}, std::pair{&got.cur, &want.cur}})
    for (int64_t f = 0; f < t.size; ++f) {
      // With the free surface the top halo is the image of computed planes after more than one
      // step: compared like them (the first step's image, of the start state, must be exact).
      const bool computed_image = setup.free_surface && steps > 1 && is_surface_image(t, f);
      if (is_interior(t, f) || computed_image) {
        num += double((*a)[f] - (*b)[f]) * ((*a)[f] - (*b)[f]);
        den += double((*b)[f]) * (*b)[f];
      } else if (std::memcmp(&(*a)[f], &(*b)[f], sizeof(float)) != 0) {
        ++halo_changed;
      }
    }
  const double err = std::sqrt(num / den);
  std::printf("%s, %dx%dx%d, %d step(s), planes [%d, %d): relative L2 vs CPU %.3g\n", variant.c_str(),
              setup.layout.nx, setup.layout.ny, setup.layout.nz, steps, k_begin, k_end, err);
  // FMA contraction on the GPU and float32 rounding: ~1e-7 per step.
  EXPECT_LT(err, 1e-5) << variant;
  EXPECT_EQ(halo_changed, 0) << variant << ": halo or padding cells differ from the reference";
}

class TtiGpu : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    std::string why;
    if (!cuda_usable(&why)) GTEST_SKIP() << why;
  }
};

TEST_P(TtiGpu, MatchesTheCpuReferenceOnOddShapesDampedAndUndamped) {
  compare(odd_setup(37, 23, 29, 6), GetParam(), 3, 0, -1, 1);   // sponge layers
  compare(odd_setup(45, 19, 53, 0), GetParam(), 4, 0, -1, 2);   // walls only; nz > 16: chunks
  compare(odd_setup(33, 41, 17, 3), GetParam(), 2, 0, -1, 3);
}

TEST_P(TtiGpu, PlaneRangesUpdateThoseAndNoOtherPlanes) {
  compare(odd_setup(37, 23, 29, 6), GetParam(), 1, 5, 26, 4);
  compare(odd_setup(37, 23, 29, 6), GetParam(), 1, 0, 3, 5);
}

// The free surface: p's and q's image in the top halo before each step reaching it (random
// garbage there at the start, which neither may read), whole steps and plane ranges that start
// within pass 1's reach of the surface (5: pass 1 from plane 1) and beyond it (9).
TEST_P(TtiGpu, FreeSurfaceMatchesTheCpuReference) {
  PropagatorSetup setup = odd_setup(37, 23, 29, 6);
  setup.free_surface = true;
  compare(setup, GetParam(), 1, 0, -1, 6); // one step: the image of the start state, bit for bit
  compare(setup, GetParam(), 3, 0, -1, 7);
  compare(setup, GetParam(), 1, 5, 26, 8);
  compare(setup, GetParam(), 1, 9, 26, 9);
}

INSTANTIATE_TEST_SUITE_P(Variants, TtiGpu, ::testing::Values("tti-naive", "tti-pipelined"),
                         [](const ::testing::TestParamInfo<std::string>& test) {
                           std::string name = test.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

} // namespace
} // namespace rtm
