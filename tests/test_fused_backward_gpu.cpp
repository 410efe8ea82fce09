// The fused backward step of the CUDA backend (kernels/cuda/fused_backward.cu, docs/rtm.md section
// 5) against the separate path it replaces: ShotFields::step_both on regqueue_vec4 (one kernel for
// the source and receiver fields' steps and the imaging) against accumulate_image + the receiver's
// step + the source's step, the same kernel's arithmetic run in separate launches. Label gpu; skips
// where no GPU is usable.
//
// Tolerance: 1e-6 of the largest value, per array (bit for bit expected: the fused kernel does the
// register-queue kernel's operations in its order, and the imaging's rounded one at a time; the
// bar allows nvcc contracting one multiply-add differently). A wrong neighbour, a missed tile edge,
// a swapped field or the imaging of the wrong step is off by O(1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
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

std::unique_ptr<ShotFields> regqueue_fields(const PropagatorSetup& setup) {
  BackendOptions options;
  options.backend = "cuda";
  options.variant = "regqueue_vec4";
  std::ostringstream log;
  return make_shot_fields(setup, options, log);
}

struct Case {
  const char* name;
  Absorber absorber;
  int width;
};

class FusedBackward : public ::testing::TestWithParam<Case> {};

// Fresh random fields (every element, halos too) and image, on a grid whose sizes are multiples of
// no tile size (77x45x70 with the 8-cell layers: two tiles along x, six along y, two z-chunks on a
// GPU of 100+ multiprocessors); three consecutive steps (the pointer swaps and the C-PML's memory
// variables carry over), imaging on the first and the third.
TEST_P(FusedBackward, StepBothMatchesTheSeparateCallsOnRandomFields) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const test::RtmProblem p = test::layered_problem(61, 29, 54, c.width, 10, false, c.absorber);
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
    std::unique_ptr<ShotFields> f = regqueue_fields(setup);
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
    std::printf("%s, %s field: fused vs separate, max difference / max value: current %.3g, "
                "previous %.3g\n", c.name, receiver ? "receiver" : "source", e_cur, e_prev);
    EXPECT_LE(e_cur, 1e-6);
    EXPECT_LE(e_prev, 1e-6);
  }
  const double e_image = max_relative_difference(fused->download_image(), separate->download_image());
  const double e_illumination =
      max_relative_difference(fused->download_illumination(), separate->download_illumination());
  std::printf("%s: image %.3g, illumination %.3g\n", c.name, e_image, e_illumination);
  EXPECT_LE(e_image, 1e-6);
  EXPECT_LE(e_illumination, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Absorbers, FusedBackward,
                         ::testing::Values(Case{"cpml", Absorber::cpml, 8},
                                           Case{"sponge", Absorber::sponge, 8},
                                           Case{"none", Absorber::cpml, 0}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// A whole migration (C-PML, automatic imaging interval): fused and separate images agree to
// rounding, every backward step pair but the last is fused, and both match the CPU's image.
TEST(FusedBackwardMigration, ImagesAgreeWithTheSeparatePathAndTheCpu) {
  SKIP_WITHOUT_GPU();
  test::TwoLayerMigration run;
  std::ostringstream log;
  const ShotFile shots = run.line_shots(log);
  const VelocityModel& migration = run.migration;
  MigrationParams& params = run.params;
  params.backend.backend = "cpu";
  const MigrationResult cpu = migrate_shots(migration, shots, params, log);
  params.backend.backend = "cuda";
  params.backend.variant = "regqueue_vec4";
  params.profile = true;
  const MigrationResult fused = migrate_shots(migration, shots, params, log);
  params.fused_backward = false;
  const MigrationResult separate = migrate_shots(migration, shots, params, log);
  const double e_raw = relative_l2(fused.raw_image, separate.raw_image);
  const double e_illumination = relative_l2(fused.illumination, separate.illumination);
  const double e_cpu = relative_l2(fused.raw_image, cpu.raw_image);
  std::printf("migration: fused vs separate raw image %.3g, illumination %.3g; fused vs CPU raw "
              "%.3g (relative L2)\n", e_raw, e_illumination, e_cpu);
  EXPECT_LE(e_raw, 1e-6);
  EXPECT_LE(e_illumination, 1e-6);
  EXPECT_LE(e_cpu, 1e-4);
  const int64_t pairs = int64_t(shots.nt - 1) * int64_t(shots.shots.size());
  EXPECT_EQ(fused.profile.timing.fused_steps, 2 * pairs);
  EXPECT_EQ(separate.profile.timing.fused_steps, 0);
}

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
