// The fused backward step of the CUDA backend (kernels/cuda/steps/fused_backward.cu and
// fused_backward_tma.cu, docs/rtm.md section 5b) against the separate path it replaces:
// ShotFields::step_both (one kernel for the source and receiver fields' steps and the imaging)
// against accumulate_image + the receiver's step + the source's step, the same variant's
// arithmetic run in separate launches. Each test runs for every variant with a fused step:
// regqueue_vec4 and tma_ring (compute capability 9.0: skipped on older GPUs, with the launcher's
// reason). Label gpu; skips where no GPU is usable.
//
// Tolerance: 1e-6 of the largest value, per array (bit for bit expected: the fused kernels do
// their variant's operations in its order, and the imaging's rounded one at a time; the bar allows
// nvcc contracting one multiply-add differently). A wrong neighbour, a missed tile edge or z-chunk
// boundary, a swapped field or the imaging of the wrong step is off by O(1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "solvers/drivers/backend.h"
#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/max_difference.h"
#include "tests/support/relative_l2.h"
#include "tests/support/two_layer_migration.h"

namespace rtm {
namespace {

using test::max_relative_difference;

std::vector<float> random_vector(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// The variants with a fused backward step (has_fused_backward).
const char* const kFusedVariants[] = {"regqueue_vec4", "tma_ring"};

BackendOptions cuda_options(const std::string& variant) {
  BackendOptions options;
  options.backend = "cuda";
  options.variant = variant;
  return options;
}

std::unique_ptr<ShotFields> cuda_fields(const PropagatorSetup& setup, const std::string& variant) {
  std::ostringstream log;
  return make_shot_fields(setup, cuda_options(variant), log);
}

// Why this GPU cannot run `variant` ("" where it can): tma_ring's launcher refuses GPUs before
// compute capability 9.0 (no bulk tensor copy) with a message that names it. Found out once per
// variant by one step of a small grid.
std::string variant_refused(const std::string& variant) {
  static std::map<std::string, std::string> known;
  const auto found = known.find(variant);
  if (found != known.end()) return found->second;
  const test::RtmProblem p = test::layered_problem(20, 20, 20, 4, 4);
  std::string why;
  try {
    std::ostringstream log;
    make_wavefield(make_propagator_setup(p.sim), cuda_options(variant), log)->step();
  } catch (const std::exception& e) {
    why = e.what();
    if (why.find("compute capability") == std::string::npos) throw; // a real failure
  }
  return known[variant] = why;
}

#define SKIP_WITHOUT_VARIANT(variant)                                                              \
  do {                                                                                             \
    const std::string why_refused = variant_refused(variant);                                      \
    if (!why_refused.empty()) GTEST_SKIP() << why_refused;                                         \
  } while (0)

struct Case {
  const char* name;
  Absorber absorber;
  int width;
};

// Model sizes in cells (the grid adds the absorbing layers, `width` cells a side).
struct ModelSize {
  int nx, ny, nz;
};

using FusedParam = std::tuple<const char*, Case, ModelSize>; // variant, absorber, model

class FusedBackward : public ::testing::TestWithParam<FusedParam> {};

// Fresh random fields (every element, halos too) and image, on grids whose sizes are multiples of
// no tile size: with the 8-cell layers 77x45x70, 67x45x53 and 67x45x133, partial tiles along x and
// y for both kernels' tiles (64x8 and 64x16 cells); on a GPU of 100+ multiprocessors 2 z-chunks of
// 35 planes, one of 53, and 34 + 34 + 34 + 31 (more than 96 planes: tma_ring's longest chunk).
// Three consecutive steps (the pointer swaps and the C-PML's memory variables carry over),
// imaging on the first and the third.
TEST_P(FusedBackward, StepBothMatchesTheSeparateCallsOnRandomFields) {
  SKIP_WITHOUT_GPU();
  const std::string variant = std::get<0>(GetParam());
  const Case c = std::get<1>(GetParam());
  const ModelSize m = std::get<2>(GetParam());
  SKIP_WITHOUT_VARIANT(variant);
  const test::RtmProblem p =
      test::layered_problem(m.nx, m.ny, m.nz, c.width, 10, false, c.absorber);
  const PropagatorSetup setup = make_propagator_setup(p.sim);
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const size_t n = size_t(setup.layout.size);
  const std::vector<float> s_prev = random_vector(n, rng), s_cur = random_vector(n, rng);
  const std::vector<float> r_prev = random_vector(n, rng), r_cur = random_vector(n, rng);
  const std::vector<float> image = random_vector(size_t(p.box.cells()), rng);
  const std::vector<float> illumination = random_vector(size_t(p.box.cells()), rng);

  auto prepared = [&] {
    std::unique_ptr<ShotFields> f = cuda_fields(setup, variant);
    f->source().set_state(s_prev, s_cur);
    f->receiver().set_state(r_prev, r_cur);
    f->allocate_image(p.box);
    f->set_image(image, illumination);
    return f;
  };
  std::unique_ptr<ShotFields> fused = prepared(), separate = prepared();
  fused->enable_timing(true);
  const float weights[] = {3.0f, 0.0f, 1.5f};
  for (float w : weights) {
    fused->step_both(w);
    if (w > 0) separate->accumulate_image(w);
    separate->receiver().step();
    separate->source().step();
  }
  EXPECT_EQ(fused->timing().fused_steps, 6) << "three fused pairs";
  EXPECT_EQ(fused->timing().steps, 6);

  std::vector<float> a_prev, a_cur, b_prev, b_cur;
  for (const bool receiver : {false, true}) {
    (receiver ? fused->receiver() : fused->source()).get_state(a_prev, a_cur);
    (receiver ? separate->receiver() : separate->source()).get_state(b_prev, b_cur);
    const double e_cur = max_relative_difference(a_cur, b_cur);
    const double e_prev = max_relative_difference(a_prev, b_prev);
    std::printf("%s, %s, %dx%dx%d, %s field: fused vs separate, max difference / max value: "
                "current %.3g, previous %.3g\n", variant.c_str(), c.name, setup.layout.nx,
                setup.layout.ny, setup.layout.nz, receiver ? "receiver" : "source", e_cur, e_prev);
    EXPECT_LE(e_cur, 1e-6);
    EXPECT_LE(e_prev, 1e-6);
  }
  const double e_image = max_relative_difference(fused->download_image(), separate->download_image());
  const double e_illumination =
      max_relative_difference(fused->download_illumination(), separate->download_illumination());
  std::printf("%s, %s: image %.3g, illumination %.3g\n", variant.c_str(), c.name, e_image,
              e_illumination);
  EXPECT_LE(e_image, 1e-6);
  EXPECT_LE(e_illumination, 1e-6);
}

// Test names: variant, absorber, grid (e.g. tma_ring_sponge_67x45x133).
INSTANTIATE_TEST_SUITE_P(
    Variants, FusedBackward,
    ::testing::Combine(::testing::ValuesIn(kFusedVariants),
                       ::testing::Values(Case{"cpml", Absorber::cpml, 8},
                                         Case{"sponge", Absorber::sponge, 8},
                                         Case{"none", Absorber::cpml, 0}),
                       ::testing::Values(ModelSize{61, 29, 54}, ModelSize{51, 29, 37},
                                         ModelSize{51, 29, 117})),
    [](const auto& param_info) {
      const Case& c = std::get<1>(param_info.param);
      const ModelSize& m = std::get<2>(param_info.param);
      return std::string(std::get<0>(param_info.param)) + "_" + c.name + "_" +
             std::to_string(m.nx + 2 * c.width) + "x" + std::to_string(m.ny + 2 * c.width) + "x" +
             std::to_string(m.nz + 2 * c.width);
    });

class FusedBackwardMigration : public ::testing::TestWithParam<const char*> {};

// A whole migration (C-PML, automatic imaging interval): fused and separate images agree to
// rounding, every backward step pair but the last is fused, and both match the CPU's image (run
// once for all variants).
TEST_P(FusedBackwardMigration, ImagesAgreeWithTheSeparatePathAndTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::string variant = GetParam();
  SKIP_WITHOUT_VARIANT(variant);
  test::TwoLayerMigration run;
  std::ostringstream log;
  const ShotFile shots = run.line_shots(log);
  const VelocityModel& migration = run.migration;
  MigrationParams& params = run.params;
  params.reconstruction = Reconstruction::boundary; // the fused step is the three-sweep path's
  static const MigrationResult cpu = [&] {
    MigrationParams on_cpu = params;
    on_cpu.backend.backend = "cpu";
    return migrate_shots(migration, shots, on_cpu, log);
  }();
  params.backend.backend = "cuda";
  params.backend.variant = variant;
  params.profile = true;
  const MigrationResult fused = migrate_shots(migration, shots, params, log);
  params.fused_backward = false;
  const MigrationResult separate = migrate_shots(migration, shots, params, log);
  const double e_raw = relative_l2(fused.raw_image, separate.raw_image);
  const double e_illumination = relative_l2(fused.illumination, separate.illumination);
  const double e_cpu = relative_l2(fused.raw_image, cpu.raw_image);
  std::printf("migration on %s: fused vs separate raw image %.3g, illumination %.3g; fused vs CPU "
              "raw %.3g (relative L2)\n", variant.c_str(), e_raw, e_illumination, e_cpu);
  EXPECT_LE(e_raw, 1e-6);
  EXPECT_LE(e_illumination, 1e-6);
  EXPECT_LE(e_cpu, 1e-4);
  const int64_t pairs = int64_t(shots.nt - 1) * int64_t(shots.shots.size());
  EXPECT_EQ(fused.profile.timing.fused_steps, 2 * pairs);
  EXPECT_EQ(separate.profile.timing.fused_steps, 0);
}

INSTANTIATE_TEST_SUITE_P(Variants, FusedBackwardMigration, ::testing::ValuesIn(kFusedVariants),
                         [](const auto& param_info) { return std::string(param_info.param); });

// The 16-bit boundary rings (solvers/contracts/ring_codec.h, float16 and int16) on the GPU hold the
// CPU store's bits: the same block maxima, exponents and round-to-nearest-even halves or integers,
// so restore gives the same floats. Fresh random values over many magnitudes, a ring of several blocks with a partial last one.
TEST(HalfRingGpu, RestoresTheCpuStoresValuesBitForBit) {
  SKIP_WITHOUT_GPU();
  const test::RtmProblem p = test::layered_problem(37, 29, 33, 8, 4);
  const PropagatorSetup setup = make_propagator_setup(p.sim);
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<float> cur = random_vector(size_t(setup.layout.size), rng);
  for (size_t c = 0; c < cur.size(); ++c) cur[c] *= std::pow(10.0f, float(c % 31) - 20.0f);
  const std::vector<float> zero(cur.size(), 0.0f);
  for (const RingPrecision precision : {RingPrecision::half16, RingPrecision::fixed16}) {
  std::vector<float> restored[2], prev;
  const char* backends[2] = {"cpu", "cuda"};
  for (int b = 0; b < 2; ++b) {
    BackendOptions options;
    options.backend = backends[b];
    options.variant = "regqueue_vec4";
    std::ostringstream log;
    std::unique_ptr<ShotFields> f = make_shot_fields(setup, options, log);
    Wavefield& w = f->source();
    w.set_state(zero, cur);
    const std::unique_ptr<BoundaryStore> store = w.make_boundary_store(p.box, 3, precision);
    store->save(2);
    w.set_state(zero, zero);
    store->restore(2);
    w.get_state(prev, restored[b]);
  }
  size_t differ = 0, changed = 0;
  for (size_t c = 0; c < cur.size(); ++c) {
    differ += restored[0][c] != restored[1][c];
    changed += restored[0][c] != 0.0f && restored[0][c] != cur[c];
  }
  const char* name = precision == RingPrecision::half16 ? "float16" : "int16";
  std::printf("%s ring: %zu of %zu values differ between CPU and GPU; %zu rounded\n", name, differ,
              cur.size(), changed);
  EXPECT_EQ(differ, 0u) << name;
  EXPECT_GT(changed, 0u) << name << ": the 16-bit ring was not used";
  }
}

} // namespace
} // namespace rtm
