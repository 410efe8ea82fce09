// The bfp16 variant (block floating point wavefields, kernels/cuda/steps/bfp16.cu) against the CPU
// reference and its CPU twin (label gpu; each test skips where no GPU is usable).
//
// What is checked, and why it can fail:
// - One step from fresh random fields (magnitudes in [0.1, 1], random signs, interior only: bfp16
//   keeps no halo values) on odd shapes: the GPU's p[n+1] against the float32 CPU step of the same
//   (quantised) state, quantised by the CPU twin. The two differ by float32 summation order only,
//   which can move a value across a rounding boundary: at most one mantissa step, 2^(e-15) <=
//   2^-14 of the block's largest magnitude; anything more (a wrong neighbour, a wrong exponent, a
//   cell not written) is far larger.
// - 12 steps against float32: each step's storage rounds every value by at most 2^-15 of its
//   block's maximum (solvers/contracts/bfp16.h), and the stable leapfrog step passes earlier
//   errors on without amplifying them, so the relative L2 error is at most about
//   (N + 1) 2^-15 max|p| / rms(p); the bound takes twice that. It must exceed 1e-6: a smaller one
//   would mean the fields are not held in 16 bits.
// - Halos: get_state decodes non-interior elements as zero, so a kernel writing a halo mantissa
//   shows up as a wrong neighbour in the next step (the 12-step and plane-range checks).
// - The point workload: GPU against float32 after 200 steps, within a factor of the CPU twin's
//   error (tests/support/bfp16_emulation.h), and below the 1e-3 goal.
// - Damping, plane ranges (exponents shifted with the planes), point sets, health, refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cuda/cuda_backend.h"
#include "solvers/contracts/bfp16.h"
#include "solvers/contracts/errors.h"
#include "tests/support/bfp16_emulation.h"
#include "tests/support/cuda_test_support.h"
#include "tests/support/random_medium.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

using test::fresh_seed;

// Both block floating point kernels: float32 v2dt2, and v2dt2 in 16 bits (bfp16_model16). Every
// v2dt2 here is already a 16-bit block value (bfp16::quantise_model), so both run the CPU
// reference's very model and the comparisons check the wavefield storage; the model's own
// rounding is measured apart (tests/test_bfp16.cpp).
const std::vector<std::string> kVariants = {"bfp16", "bfp16_model16"};
constexpr int kSteps = 12;

struct Shape {
  int nx, ny, nz;
};

// Heterogeneous medium (1500-4500 m/s) on spacings 10, 12 and 8 m, dt at 80% of the CFL limit.
PropagatorSetup make_setup(const Shape& s, std::mt19937_64& rng, bool damped) {
  PropagatorSetup setup = test::random_medium_setup(s.nx, s.ny, s.nz, 10.0, 12.0, 8.0, rng);
  bfp16::quantise_model(s.nx, s.ny, s.nz, setup.v2dt2);
  if (damped) test::add_random_damping(setup, rng);
  return setup;
}

// Random interior values, zero halo and padding, already as bfp16 holds them.
std::vector<float> random_field(const GridLayout& g, std::mt19937_64& rng) {
  std::vector<float> f = test::random_signed_values(size_t(g.size), rng);
  bfp16::quantise_field(g, f);
  return f;
}

double max_abs(const GridLayout& g, const std::vector<float>& f) {
  double m = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) m = std::max(m, double(std::fabs(f[size_t(g.index(i, j, k))])));
  return m;
}

double rms(const GridLayout& g, const std::vector<float>& f) {
  double s = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) s += double(f[size_t(g.index(i, j, k))]) * f[size_t(g.index(i, j, k))];
  return std::sqrt(s / double(g.interior_cells()));
}

int64_t nonzero_outside_interior(const GridLayout& g, const std::vector<float>& f) {
  std::vector<float> interior_only = f;
  bfp16::quantise_field(g, interior_only); // zeroes every non-interior element
  int64_t n = 0;
  for (int64_t e = 0; e < g.size; ++e)
    n += interior_only[size_t(e)] == 0.0f && f[size_t(e)] != 0.0f;
  return n;
}

const Shape kShapes[] = {{67, 45, 53}, {64, 32, 64}, {33, 70, 41}, {130, 9, 37}, {5, 6, 7}, {24, 17, 19}};

struct States {
  std::vector<float> cpu_prev, cpu_cur, gpu_prev, gpu_cur;
};

// Both states after kSteps steps of `variant` and of the CPU reference from (prev0, cur0).
States after_steps(const PropagatorSetup& setup, const std::string& variant, const std::vector<float>& prev0,
                   const std::vector<float>& cur0) {
  CpuWavefield cpu(setup);
  cpu.set_state(prev0, cur0);
  auto gpu = cuda::make_wavefield(setup, variant, {}, 0);
  gpu->set_state(prev0, cur0);
  for (int s = 0; s < kSteps; ++s) {
    cpu.step();
    gpu->step();
  }
  States after;
  cpu.get_state(after.cpu_prev, after.cpu_cur);
  gpu->get_state(after.gpu_prev, after.gpu_cur);
  return after;
}

// The bound on the relative L2 error after kSteps steps, 2 (N + 1) 2^-15 max|p| / rms(p) (above).
double steps_bound(const GridLayout& g, const std::vector<float>& cpu_cur) {
  return 2.0 * (kSteps + 1) * std::ldexp(1.0, -15) * max_abs(g, cpu_cur) / rms(g, cpu_cur);
}

class Bfp16VsCpu : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(Bfp16VsCpu, OneStepIsTheQuantisedReferenceStep) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const auto& [variant, shape] = GetParam();
  const PropagatorSetup setup = make_setup(shape, rng, false);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  CpuWavefield cpu(setup);
  cpu.set_state(prev0, cur0);
  cpu.step();
  auto gpu = cuda::make_wavefield(setup, variant, {}, 0);
  gpu->set_state(prev0, cur0);
  std::vector<float> gpu_prev, gpu_cur;
  gpu->get_state(gpu_prev, gpu_cur);
  EXPECT_EQ(gpu_cur, cur0) << "state round trip of a quantised field";
  gpu->step();
  std::vector<float> cpu_prev, cpu_cur;
  cpu.get_state(cpu_prev, cpu_cur);
  gpu->get_state(gpu_prev, gpu_cur);
  std::vector<float> twin = cpu_cur;
  bfp16::quantise_field(g, twin);
  const double bound = std::ldexp(max_abs(g, twin), -14);
  double worst = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const size_t c = size_t(g.index(i, j, k));
        const double d = std::fabs(double(gpu_cur[c]) - twin[c]);
        worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
      }
  EXPECT_LE(worst, bound) << "largest difference from the quantised reference step";
  EXPECT_EQ(gpu_prev, cur0) << "p[n] after the step is the old p[n]";
  EXPECT_EQ(nonzero_outside_interior(g, gpu_cur), 0);
}

TEST_P(Bfp16VsCpu, TwelveStepsStayWithinTheQuantisationBound) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const auto& [variant, shape] = GetParam();
  const PropagatorSetup setup = make_setup(shape, rng, false);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  const auto [cpu_prev, cpu_cur, gpu_prev, gpu_cur] = after_steps(setup, variant, prev0, cur0);
  const double bound = steps_bound(g, cpu_cur);
  const double error = interior_relative_l2(g, gpu_cur, cpu_cur);
  EXPECT_LE(error, bound) << "p[n+1]";
  EXPECT_GT(error, 1e-6) << "p[n+1]: no quantisation error at all";
  EXPECT_LE(interior_relative_l2(g, gpu_prev, cpu_prev), bound) << "p[n]";
  EXPECT_EQ(nonzero_outside_interior(g, gpu_cur), 0);
  EXPECT_EQ(nonzero_outside_interior(g, gpu_prev), 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bfp16VsCpu,
                         ::testing::Combine(::testing::ValuesIn(kVariants), ::testing::ValuesIn(kShapes)),
                         [](const auto& test) {
                           const Shape& s = std::get<1>(test.param);
                           return std::get<0>(test.param) + "_" + std::to_string(s.nx) + "x" +
                                  std::to_string(s.ny) + "x" + std::to_string(s.nz);
                         });

class Bfp16Gpu : public ::testing::TestWithParam<std::string> {};

TEST_P(Bfp16Gpu, DampedStepsStayWithinTheBound) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, true);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  const States after = after_steps(setup, GetParam(), prev0, cur0);
  EXPECT_LE(interior_relative_l2(g, after.gpu_cur, after.cpu_cur), steps_bound(g, after.cpu_cur));
}

// step_planes over plane ranges runs the same arithmetic per cell as one whole step, with the
// exponents shifted with the planes: bit for bit the same fields.
TEST_P(Bfp16Gpu, PlaneRangesEqualTheWholeStep) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  auto whole = cuda::make_wavefield(setup, GetParam(), {}, 0);
  auto split = cuda::make_wavefield(setup, GetParam(), {}, 0);
  whole->set_state(prev0, cur0);
  split->set_state(prev0, cur0);
  for (int s = 0; s < 3; ++s) {
    whole->step();
    for (auto [k0, k1] : {std::pair{0, 3}, std::pair{3, 30}, std::pair{30, g.nz}}) split->step_planes(k0, k1);
    split->finish_step();
  }
  std::vector<float> a_prev, a_cur, b_prev, b_cur;
  whole->get_state(a_prev, a_cur);
  split->get_state(b_prev, b_cur);
  EXPECT_EQ(a_cur, b_cur);
  EXPECT_EQ(a_prev, b_prev);
}

// The bench's point workload: the GPU's error against float32 is the CPU twin's, within the
// float32 ordering's effect on the roundings (a factor 2 either way), and under the 1e-3 goal.
TEST_P(Bfp16Gpu, PointWorkloadErrorIsTheTwinsAndUnderTheGoal) {
  SKIP_WITHOUT_GPU();
  test::PointWorkload w = test::bfp16_point_workload(32, 200);
  bfp16::quantise_model(32, 32, 32, w.setup.v2dt2);
  const GridLayout& g = w.setup.layout;
  const std::vector<float> f32 = test::run_point_workload_on_cpu(w, false);
  const std::vector<float> twin = test::run_point_workload_on_cpu(w, true);
  auto gpu = cuda::make_wavefield(w.setup, GetParam(), {}, 0);
  const std::unique_ptr<PointSet> source = gpu->add_points({w.source}, int(w.series.size()));
  source->upload_series(w.series);
  for (int s = 0; s < int(w.series.size()); ++s) {
    source->inject(s, w.scale);
    gpu->step();
  }
  std::vector<float> prev, cur;
  gpu->get_state(prev, cur);
  const double twin_error = interior_relative_l2(g, twin, f32);
  const double gpu_error = interior_relative_l2(g, cur, f32);
  std::printf("point workload 32^3, 200 steps: GPU bfp16 %.3e, CPU twin %.3e\n", gpu_error, twin_error);
  EXPECT_LT(gpu_error, 1e-3);
  EXPECT_LE(gpu_error, 2.0 * twin_error);
  EXPECT_GE(gpu_error, 0.5 * twin_error);
}

// Receivers read decoded cells; injection into shared cells and blocks adds every contribution.
TEST_P(Bfp16Gpu, PointSetsInjectAndRecordLikeReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  const GridLayout& g = setup.layout;
  std::vector<PointStencil> sources, receivers;
  std::uniform_int_distribution<int> taps(1, kMaxPointTaps);
  std::uniform_real_distribution<float> weight(-0.3f, 1.0f);
  auto random_point = [&] {
    PointStencil p;
    auto axis = [&](int size, int& first, int& n, float* wts) {
      n = taps(rng);
      first = std::uniform_int_distribution<int>(0, size - n)(rng);
      for (int a = 0; a < n; ++a) wts[a] = weight(rng);
    };
    axis(g.nx, p.i0, p.nx, p.wx);
    axis(g.ny, p.j0, p.ny, p.wy);
    axis(g.nz, p.k0, p.nz, p.wz);
    return p;
  };
  for (int n = 0; n < 30; ++n) sources.push_back(random_point());
  sources.push_back(sources.front()); // the same cells twice
  sources.push_back(point_at_cell(g.nx - 1, g.ny - 1, g.nz - 1));
  sources.push_back(PointStencil{});
  for (int n = 0; n < 20; ++n) receivers.push_back(random_point());
  std::vector<float> wavelets(size_t(kSteps) * sources.size());
  std::uniform_real_distribution<float> amplitude(-1.0f, 1.0f);
  for (float& w : wavelets) w = amplitude(rng);
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);

  CpuWavefield cpu(setup);
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  std::vector<std::vector<float>> recorded;
  for (Wavefield* p : {static_cast<Wavefield*>(&cpu), gpu.get()}) {
    p->set_state(prev0, cur0);
    const std::unique_ptr<PointSet> src = p->add_points(sources, kSteps);
    const std::unique_ptr<PointSet> rec = p->add_points(receivers, kSteps);
    src->upload_series(wavelets);
    for (int t = 0; t < kSteps; ++t) {
      src->inject(t, 0.5f);
      p->step();
      rec->record(t);
    }
    recorded.push_back(rec->download_series());
  }
  double d2 = 0, r2 = 0;
  for (size_t n = 0; n < recorded[0].size(); ++n) {
    d2 += (double(recorded[1][n]) - recorded[0][n]) * (double(recorded[1][n]) - recorded[0][n]);
    r2 += double(recorded[0][n]) * recorded[0][n];
  }
  std::vector<float> cpu_prev, cpu_cur, gpu_prev, gpu_cur;
  cpu.get_state(cpu_prev, cpu_cur);
  gpu->get_state(gpu_prev, gpu_cur);
  const double bound = 2.0 * (kSteps + 1) * std::ldexp(1.0, -15) * max_abs(g, cpu_cur) / rms(g, cpu_cur);
  EXPECT_LE(interior_relative_l2(g, gpu_cur, cpu_cur), bound) << "p after injections";
  EXPECT_LE(std::sqrt(d2 / r2), bound) << "recorded traces";
}

TEST_P(Bfp16Gpu, HealthSeesNonFiniteBlocks) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({40, 20, 10}, rng, false);
  const GridLayout& g = setup.layout;
  std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  gpu->set_state(prev0, cur0);
  EXPECT_TRUE(gpu->check_health().finite);
  cur0[size_t(g.index(17, 5, 3))] = std::numeric_limits<float>::infinity();
  gpu->set_state(prev0, cur0);
  const FieldHealth h = gpu->check_health();
  EXPECT_FALSE(h.finite);
  EXPECT_EQ(h.j, 5);
  EXPECT_EQ(h.k, 3);
  EXPECT_EQ(h.i / 16, 1) << "a cell of the block that holds the infinity";
}

TEST_P(Bfp16Gpu, RefusesWhatItDoesNotSupport) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  PropagatorSetup setup = make_setup({40, 20, 10}, rng, false);
  const GridLayout& g = setup.layout;
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  std::vector<float> dense;
  EXPECT_THROW(gpu->copy_current(Box{0, 4, 0, 4, 0, 4}, dense), InputError);
  EXPECT_THROW(gpu->make_boundary_store(Box{4, 36, 4, 16, 2, 8}, 10, RingPrecision::full), InputError);
  EXPECT_THROW(cuda::make_shot_fields(setup, GetParam(), {}, 0), InputError);
  std::vector<float> halo(size_t(g.size), 0.0f);
  halo[size_t(g.index(-1, 0, 0))] = 1.0f;
  EXPECT_THROW(gpu->set_state(halo, halo), std::invalid_argument);
  setup.cpml.x.n = g.nx;
  setup.cpml.x.lo = 3;
  setup.cpml.x.a.assign(size_t(g.nx), -0.1f);
  setup.cpml.x.b.assign(size_t(g.nx), 0.9f);
  try {
    cuda::make_wavefield(setup, GetParam(), {}, 0);
    ADD_FAILURE() << "the C-PML was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bfp16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("C-PML"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Bfp16Gpu, ::testing::ValuesIn(kVariants),
                         [](const auto& test) { return test.param; });

} // namespace
} // namespace rtm
