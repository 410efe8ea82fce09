// Every CUDA variant against the CPU reference (label gpu; each test skips where no GPU is usable).
//
// What is checked, and why it can fail:
// - Fresh random wavefields (magnitudes in [0.1, 1], random signs) in every element, halos and
//   padding included, and a random heterogeneous v2dt2 at 80% of the CFL limit, with a different
//   spacing per axis (a kernel that swaps two axes' weights fails).
// - Several shapes, most of them multiples of no block size (67x45x53 and others), one smaller
//   than every tile, and 12 steps.
// - Relative L2 error over the interior of both wavefields: <= 1e-5 for float32 storage (the
//   kernels and the reference differ only in the order of float32 additions); for fp16_storage
//   see kFp16Tolerance below.
// - Every non-interior element (halo and padding) must be exactly what it was: no kernel writes
//   outside the interior.
// - The step updates p[n-1] in place, so its output cannot be poisoned without poisoning an input.
//   Instead the one-step poison test fills the halo and padding of the p[n-1] buffer with NaN: a
//   correct kernel neither reads them (the result stays finite) nor writes them (they stay NaN),
//   and an interior cell the kernel skips keeps p[n-1], which differs from p[n+1] by O(1) and
//   fails the error bound (one such cell in 160,000 gives a relative error near 2.5e-3).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cpu/cpu_propagator.h"
#include "tests/support/cuda_test_support.h"
#include "tests/support/random_medium.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

using test::all_variants;
using test::fresh_seed;
using test::is_fp16;
using test::random_signed_values;

constexpr int kSteps = 12;
constexpr double kFp32Tolerance = 1e-5;
// fp16_storage: half precision keeps an 11-bit significand, so every stored value carries a
// relative rounding error of at most u = 2^-11 ~ 4.9e-4. The initial fields and v2dt2 are rounded
// once (~u each); each of the N steps rounds its output once more, and the stable leapfrog step
// passes earlier errors on without amplifying them (for the random, high-wavenumber fields here),
// so the error grows at most about linearly: ~(N + 2) u = 6.9e-3 after 12 steps. The bound
// adds a margin for the leapfrog's slower decay of low-wavenumber errors: 1e-2 (~20 u).
// It must also exceed u / 50 ~ 1e-5: a smaller error would mean the fields are not held in half.
constexpr double kFp16Tolerance = 1e-2;
constexpr double kFp16AtLeast = 1e-5;

struct Shape {
  int nx, ny, nz;
};

std::string shape_name(const Shape& s) {
  return std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz);
}
void PrintTo(const Shape& s, std::ostream* out) { *out << shape_name(s); } // for test names

double tolerance(const std::string& variant) {
  return is_fp16(variant) ? kFp16Tolerance : kFp32Tolerance;
}

// Heterogeneous medium (1500-4500 m/s) on spacings 10, 12 and 8 m, dt at 80% of the CFL limit.
// Every v2dt2 is a half-precision value, so that the kernels that read it as half (half_v2dt2,
// fp16_storage) run the very model of the CPU reference: the comparison checks their arithmetic
// and indexing at float32 tolerance (half_v2dt2), and the model's own rounding is measured apart
// (tests/test_half_v2dt2.cpp).
PropagatorSetup make_setup(const Shape& s, std::mt19937_64& rng, bool damped) {
  PropagatorSetup setup = test::random_medium_setup(s.nx, s.ny, s.nz, 10.0, 12.0, 8.0, rng);
  for (float& v : setup.v2dt2) v = test::round_to_half(v);
  if (damped) test::add_random_damping(setup, rng);
  return setup;
}

// Every element (halo and padding included): magnitude in [0.1, 1], random sign.
std::vector<float> random_field(const GridLayout& g, std::mt19937_64& rng) {
  return random_signed_values(size_t(g.size), rng);
}

bool is_interior(const GridLayout& g, int64_t index) {
  const int64_t rel = index - g.offset;
  if (rel < 0) return false;
  const int64_t k = rel / g.plane - kHalo;
  const int64_t j = (rel % g.plane) / g.pitch - kHalo;
  const int64_t i = rel % g.pitch - kHalo;
  return i >= 0 && i < g.nx && j >= 0 && j < g.ny && k >= 0 && k < g.nz;
}

// Elements outside the interior whose value differs from `ref` (NaN equals NaN here), counted.
// fp16 storage rounds them once, so they may differ by one rounding.
int64_t changed_outside_interior(const GridLayout& g, const std::vector<float>& a,
                                 const std::vector<float>& ref, bool fp16) {
  int64_t changed = 0;
  for (int64_t n = 0; n < g.size; ++n) {
    if (is_interior(g, n)) continue;
    const float x = a[size_t(n)], r = ref[size_t(n)];
    if (std::isnan(r)) {
      changed += !std::isnan(x);
    } else if (fp16) {
      changed += !(std::fabs(x - r) <= std::ldexp(std::fabs(r), -11));
    } else {
      changed += x != r;
    }
  }
  return changed;
}

struct State {
  std::vector<float> prev, cur;
};

// The state of `w` after `steps` steps from (prev0, cur0).
State state_after(Wavefield& w, const std::vector<float>& prev0, const std::vector<float>& cur0,
                  int steps) {
  w.set_state(prev0, cur0);
  for (int s = 0; s < steps; ++s) w.step();
  State state;
  w.get_state(state.prev, state.cur);
  return state;
}

// The CPU reference's state after `steps` steps of `setup` from (prev0, cur0).
State reference_after(const PropagatorSetup& setup, const std::vector<float>& prev0,
                      const std::vector<float>& cur0, int steps) {
  CpuWavefield cpu(setup);
  return state_after(cpu, prev0, cur0, steps);
}

void expect_error_within(const std::string& variant, double error, const char* what) {
  EXPECT_LE(error, tolerance(variant)) << variant << ": " << what;
  if (is_fp16(variant)) {
    EXPECT_GE(error, kFp16AtLeast) << variant << ": " << what;
  }
}

// ---- every variant, several shapes, 12 steps -------------------------------------------------

const Shape kShapes[] = {{67, 45, 53}, {64, 32, 64}, {33, 70, 41}, {130, 9, 37}, {5, 6, 7}};

class VariantVsCpu : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(VariantVsCpu, MatchesReferenceAfterSteps) {
  SKIP_WITHOUT_GPU();
  const auto& [variant, shape] = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(shape, rng, false);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);

  const State cpu = reference_after(setup, prev0, cur0, kSteps);
  const State gpu = state_after(*cuda::make_wavefield(setup, variant, {}, 0), prev0, cur0, kSteps);
  expect_error_within(variant, interior_relative_l2(g, gpu.cur, cpu.cur), "p[n+1]");
  expect_error_within(variant, interior_relative_l2(g, gpu.prev, cpu.prev), "p[n]");
  EXPECT_EQ(changed_outside_interior(g, gpu.cur, cpu.cur, is_fp16(variant)), 0)
      << variant << ": halo or padding of p[n+1] changed";
  EXPECT_EQ(changed_outside_interior(g, gpu.prev, cpu.prev, is_fp16(variant)), 0)
      << variant << ": halo or padding of p[n] changed";
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, VariantVsCpu,
    ::testing::Combine(::testing::ValuesIn(all_variants()), ::testing::ValuesIn(kShapes)),
    [](const auto& test) {
      return std::get<0>(test.param) + "_" + shape_name(std::get<1>(test.param));
    });

// ---- one step with poisoned halos, damping, point sets: one shape per variant -----------------

class VariantChecks : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantChecks, NeitherReadsNorWritesOutsideTheInterior) {
  SKIP_WITHOUT_GPU();
  const std::string& variant = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  const GridLayout& g = setup.layout;
  std::vector<float> prev0 = random_field(g, rng);
  const std::vector<float> cur0 = random_field(g, rng);
  for (int64_t n = 0; n < g.size; ++n)
    if (!is_interior(g, n)) prev0[size_t(n)] = std::numeric_limits<float>::quiet_NaN();

  const State cpu = reference_after(setup, prev0, cur0, 1);
  const State gpu = state_after(*cuda::make_wavefield(setup, variant, {}, 0), prev0, cur0, 1);
  const double error = interior_relative_l2(g, gpu.cur, cpu.cur);
  EXPECT_LE(error, tolerance(variant)) << variant; // also fails on NaN
  EXPECT_EQ(changed_outside_interior(g, gpu.cur, prev0, is_fp16(variant)), 0)
      << variant << ": wrote into the poisoned halo or padding";
}

TEST_P(VariantChecks, DampedStepMatchesReference) {
  SKIP_WITHOUT_GPU();
  const std::string& variant = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, true);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  const State cpu = reference_after(setup, prev0, cur0, kSteps);
  const State gpu = state_after(*cuda::make_wavefield(setup, variant, {}, 0), prev0, cur0, kSteps);
  expect_error_within(variant, interior_relative_l2(g, gpu.cur, cpu.cur), "damped p[n+1]");
  // The damping must have acted: the undamped reference is far from the damped one (the
  // reference alone, so the same for every variant).
  PropagatorSetup undamped = setup;
  undamped.damping = {};
  const State plain = reference_after(undamped, prev0, cur0, kSteps);
  EXPECT_GT(interior_relative_l2(g, plain.cur, cpu.cur), 0.05);
}

// Random C-PML coefficients (solvers/contracts/cpml.h) in layers of different widths on each face: every
// region of the GPU's C-PML passes and every face's index arithmetic is used.
void add_random_cpml(PropagatorSetup& setup, std::mt19937_64& rng) {
  const GridLayout& g = setup.layout;
  std::uniform_real_distribution<float> a(-0.3f, -0.01f), b(0.7f, 0.99f);
  const int widths[3][2] = {{6, 5}, {4, 7}, {5, 6}};
  CpmlAxis* axes[3] = {&setup.cpml.x, &setup.cpml.y, &setup.cpml.z};
  const int n[3] = {g.nx, g.ny, g.nz};
  const double h[3] = {10.0, 12.0, 8.0};
  for (int d = 0; d < 3; ++d) {
    CpmlAxis& axis = *axes[d];
    axis.n = n[d];
    axis.lo = widths[d][0];
    axis.hi = widths[d][1];
    axis.h = h[d];
    axis.a.assign(size_t(n[d]), 0.0f);
    axis.b.assign(size_t(n[d]), 0.0f);
    for (int i = 0; i < n[d]; ++i)
      if (i < axis.lo || i >= n[d] - axis.hi) {
        axis.a[size_t(i)] = a(rng);
        axis.b[size_t(i)] = b(rng);
      }
  }
}

// The C-PML after every variant's undamped step equals the CPU reference over several steps, on
// fresh random input (halos included, left untouched by both), with the steps split into plane
// ranges on the GPU (as the decomposition calls them) and whole on the CPU.
TEST_P(VariantChecks, CpmlStepMatchesReference) {
  SKIP_WITHOUT_GPU();
  const std::string& variant = GetParam();
  FRESH_RNG(rng);
  PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  add_random_cpml(setup, rng);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  const State cpu = reference_after(setup, prev0, cur0, kSteps);
  auto gpu = cuda::make_wavefield(setup, variant, {}, 0);
  gpu->set_state(prev0, cur0);
  for (int s = 0; s < kSteps; ++s) {
    for (auto [k0, k1] : {std::pair{0, 3}, std::pair{3, 30}, std::pair{30, g.nz}}) gpu->step_planes(k0, k1);
    gpu->finish_step();
  }
  std::vector<float> gpu_prev, gpu_cur;
  gpu->get_state(gpu_prev, gpu_cur);
  expect_error_within(variant, interior_relative_l2(g, gpu_cur, cpu.cur), "C-PML p[n+1]");
  expect_error_within(variant, interior_relative_l2(g, gpu_prev, cpu.prev), "C-PML p[n]");
  // The C-PML must have acted: the reference without it is far from the reference with it.
  PropagatorSetup plain_setup = setup;
  plain_setup.cpml = {};
  const State plain = reference_after(plain_setup, prev0, cur0, kSteps);
  EXPECT_GT(interior_relative_l2(g, plain.cur, cpu.cur), 1e-3);
}

// A random separable stencil (solvers/contracts/propagator.h): 1 to kMaxPointTaps cells per axis (so sinc,
// trilinear and single-cell shapes, and boxes that stop at the grid's faces), weights of either sign
// like a windowed sinc's.
PointStencil random_point(const GridLayout& g, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> taps(1, kMaxPointTaps);
  std::uniform_real_distribution<float> weight(-0.3f, 1.0f);
  PointStencil p;
  auto axis = [&](int size, int& first, int& n, float* w) {
    n = taps(rng);
    first = std::uniform_int_distribution<int>(0, size - n)(rng);
    for (int a = 0; a < n; ++a) w[a] = weight(rng);
  };
  axis(g.nx, p.i0, p.nx, p.wx);
  axis(g.ny, p.j0, p.ny, p.wy);
  axis(g.nz, p.k0, p.nz, p.wz);
  return p;
}

// Sinc stencils (radius 4, 8 cells per axis) touching each face of the grid, where a z-slab or a
// block boundary is most likely to be mishandled.
std::vector<PointStencil> points_at_faces(const GridLayout& g) {
  std::vector<PointStencil> points;
  for (int corner = 0; corner < 2; ++corner) {
    PointStencil p;
    p.nx = p.ny = p.nz = kMaxPointTaps;
    for (int a = 0; a < kMaxPointTaps; ++a) p.wx[a] = p.wy[a] = p.wz[a] = 0.1f * float(a + 1);
    p.i0 = corner ? g.nx - kMaxPointTaps : 0;
    p.j0 = corner ? g.ny - kMaxPointTaps : 0;
    p.k0 = corner ? g.nz - kMaxPointTaps : 0;
    points.push_back(p);
  }
  return points;
}

TEST_P(VariantChecks, PointSetsInjectAndRecordLikeReference) {
  SKIP_WITHOUT_GPU();
  const std::string& variant = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  const GridLayout& g = setup.layout;

  std::vector<PointStencil> sources;
  for (int n = 0; n < 40; ++n) sources.push_back(random_point(g, rng));
  sources.push_back(sources.front()); // the same cells twice: injection must add both
  const PointStencil corner = point_at_cell(0, 0, 0);
  sources.push_back(corner);
  const PointStencil far_corner = point_at_cell(g.nx - 1, g.ny - 1, g.nz - 1);
  sources.push_back(far_corner);
  for (const PointStencil& p : points_at_faces(g)) sources.push_back(p);
  sources.push_back(PointStencil{}); // no cells at all (a z-slab that holds none of a point's)
  std::vector<PointStencil> receivers;
  for (int n = 0; n < 30; ++n) receivers.push_back(random_point(g, rng));
  receivers.push_back(far_corner);
  for (const PointStencil& p : points_at_faces(g)) receivers.push_back(p);
  receivers.push_back(PointStencil{});

  std::vector<float> wavelets(size_t(kSteps) * sources.size());
  std::uniform_real_distribution<float> amplitude(-1.0f, 1.0f);
  for (float& w : wavelets) w = amplitude(rng);

  CpuWavefield cpu(setup);
  auto gpu = cuda::make_wavefield(setup, variant, {}, 0);
  const std::vector<float> prev0 = random_field(g, rng), cur0 = random_field(g, rng);
  std::vector<std::vector<float>> recorded, recorded_first;
  for (Wavefield* p : {static_cast<Wavefield*>(&cpu), gpu.get()}) {
    p->set_state(prev0, cur0);
    const std::unique_ptr<PointSet> src = p->add_points(sources, kSteps);
    const std::unique_ptr<PointSet> rec = p->add_points(receivers, kSteps);
    const std::unique_ptr<PointSet> first = p->add_points(receivers, 1); // before any step
    first->record(0);
    recorded_first.push_back(first->download_series());
    src->upload_series(wavelets);
    ASSERT_EQ(src->download_series(), wavelets) << p->name() << ": series round trip";
    for (int t = 0; t < kSteps; ++t) {
      src->inject(t, 0.5f);
      p->step();
      rec->record(t);
    }
    recorded.push_back(rec->download_series());
  }
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t n = 0; n < recorded[0].size(); ++n) {
    diff2 += std::pow(double(recorded[1][n]) - recorded[0][n], 2);
    ref2 += std::pow(double(recorded[0][n]), 2);
  }
  expect_error_within(variant, std::sqrt(diff2 / ref2), "recorded traces");
  // On the same float32 field the GPU sums in the CPU's order (solvers/contracts/propagator.h): equal bits.
  if (!is_fp16(variant)) {
    EXPECT_EQ(recorded_first[1], recorded_first[0]) << "record on the initial field";
  }
  std::vector<float> cpu_prev, cpu_cur, gpu_prev, gpu_cur;
  cpu.get_state(cpu_prev, cpu_cur);
  gpu->get_state(gpu_prev, gpu_cur);
  expect_error_within(variant, interior_relative_l2(g, gpu_cur, cpu_cur), "p after injection");
}

INSTANTIATE_TEST_SUITE_P(AllVariants, VariantChecks, ::testing::ValuesIn(all_variants()),
                         [](const auto& test) { return test.param; });

// ---- selection, memory options, input checks ----------------------------------------------

TEST(CudaBackend, AutoPicksAVariantAndSaysWhich) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  std::ostringstream log;
  auto gpu = cuda::make_wavefield(setup, "auto", {}, 0, &log);
  EXPECT_NE(log.str().find("--variant auto chose"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find(gpu->name().substr(5)), std::string::npos) << log.str();
  // The chosen propagator starts from rest and steps correctly.
  std::vector<float> prev, cur;
  gpu->get_state(prev, cur);
  for (float v : cur) ASSERT_EQ(v, 0.0f);
  const std::vector<float> prev0 = random_field(setup.layout, rng), cur0 = random_field(setup.layout, rng);
  const State cpu = reference_after(setup, prev0, cur0, 1);
  const State got = state_after(*gpu, prev0, cur0, 1);
  EXPECT_LE(interior_relative_l2(setup.layout, got.cur, cpu.cur), kFp32Tolerance);
}

// `f` with every element outside the interior set to zero.
std::vector<float> interior_only(const GridLayout& g, const std::vector<float>& f) {
  std::vector<float> out(f.size(), 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) out[size_t(g.index(i, j, k))] = f[size_t(g.index(i, j, k))];
  return out;
}

TEST(CudaBackend, MemoryOptionsCombineWithAnyKernel) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({67, 45, 53}, rng, false);
  const std::vector<float> prev0 = random_field(setup.layout, rng), cur0 = random_field(setup.layout, rng);
  const State cpu = reference_after(setup, prev0, cur0, kSteps);
  for (const cuda::VariantInfo& kernel : cuda::variant_table()) {
    const std::string& variant = kernel.name;
    auto gpu = cuda::make_wavefield(setup, variant, {true, true}, 0);
    EXPECT_EQ(gpu->name().rfind("cuda/" + variant, 0), 0u) << gpu->name();
    // The name says which options are in effect, and reads back as the same variant.
    const cuda::VariantSelection named = cuda::find_variant(gpu->name().substr(5));
    EXPECT_EQ(named.kernel, &kernel) << gpu->name();
    if (test::is_bfp16(variant)) {
      // Block floating point keeps no halo values (tests/test_bfp16_gpu.cpp checks its arithmetic
      // against the CPU): here the options must leave its result bit for bit as it is without
      // them, from the same fields with their halos and padding zeroed.
      const std::vector<float> prev = interior_only(setup.layout, prev0),
                               cur = interior_only(setup.layout, cur0);
      auto plain = cuda::make_wavefield(setup, variant, {}, 0);
      EXPECT_EQ(state_after(*gpu, prev, cur, kSteps).cur, state_after(*plain, prev, cur, kSteps).cur)
          << gpu->name();
      continue;
    }
    const State got = state_after(*gpu, prev0, cur0, kSteps);
    EXPECT_LE(interior_relative_l2(setup.layout, got.cur, cpu.cur), tolerance(variant)) << gpu->name();
  }
}

TEST(CudaBackend, PresetsRunTheirKernelWithTheirMemoryOptions) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({33, 70, 41}, rng, false);
  for (const cuda::VariantPreset& preset : cuda::variant_presets()) {
    const cuda::VariantSelection chosen = cuda::find_variant(preset.name);
    auto by_preset = cuda::make_wavefield(setup, preset.name, {}, 0);
    auto spelt_out = cuda::make_wavefield(
        setup, chosen.kernel->name + "+" + cuda::memory_options_name(preset.memory), {}, 0);
    // Both are the preset's kernel, with the preset's options where the GPU has them.
    EXPECT_EQ(by_preset->name(), spelt_out->name()) << preset.name;
    EXPECT_EQ(by_preset->name().rfind("cuda/" + chosen.kernel->name, 0), 0u) << by_preset->name();
  }
}

TEST(CudaBackend, StateRoundTripIsExactInFloat32) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({33, 70, 41}, rng, false);
  const std::vector<float> prev0 = random_field(setup.layout, rng), cur0 = random_field(setup.layout, rng);
  // Every float32 kernel this GPU runs.
  for (const cuda::VariantInfo* kernel : cuda::auto_candidates(cuda::compute_capability(cuda::query_device(0)))) {
    auto gpu = cuda::make_wavefield(setup, kernel->name, {}, 0);
    gpu->set_state(prev0, cur0);
    std::vector<float> prev, cur;
    gpu->get_state(prev, cur);
    EXPECT_EQ(prev, prev0) << kernel->name;
    EXPECT_EQ(cur, cur0) << kernel->name;
  }
}

TEST(CudaBackend, RefusesBadInput) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup({16, 16, 16}, rng, false);
  EXPECT_THROW(cuda::make_wavefield(setup, "no_such_variant", {}, 0), std::invalid_argument);
  EXPECT_THROW(cuda::make_wavefield(setup, "naive_32x32+fast", {}, 0), std::invalid_argument);
  auto gpu = cuda::make_wavefield(setup, "naive_32x32", {}, 0);
  EXPECT_THROW(gpu->set_state({1.0f}, {1.0f}), std::invalid_argument);
  const std::unique_ptr<PointSet> set = gpu->add_points({point_at_cell(1, 2, 3)}, 2);
  EXPECT_THROW(set->inject(2, 1.0f), std::out_of_range);
  PropagatorSetup short_v2dt2 = setup;
  short_v2dt2.v2dt2.pop_back();
  EXPECT_THROW(cuda::make_wavefield(short_v2dt2, "naive_32x32", {}, 0), std::invalid_argument);
}

} // namespace
} // namespace rtm
