// TTI on z-slabs (kernels/mpi/decomposed_propagator.h with the TTI step's 8-plane halos;
// docs/decomposition.md, "TTI") against the undivided grid. Run under the MPI launcher with 1, 2
// and 3 ranks (tests/CMakeLists.txt): every rank computes the undivided reference itself and the
// decomposed result over all ranks, and compares. CPU backend: bit for bit, as the isotropic
// decomposition (each cell is computed by the same code on the same inputs; the ghost planes are
// exact copies).
#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "io/anisotropy_file.h"
#include "io/velocity_model.h"
#include "kernels/mpi/decomposed_propagator.h"
#include "kernels/mpi/mpi_context.h"
#include "rtm_test_problem.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/tti_ring.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/decomposed_backend.h"
#include "solvers/drivers/slab_model.h"
#include "tests/support/anisotropic_model.h"
#include "tests/support/mpi_test_main.h"
#include "tests/support/shared_temp_path.h"

namespace rtm::test {
namespace {

BackendOptions cpu_options() {
  BackendOptions options;
  options.backend = "cpu";
  return options;
}

void expect_bitwise(const std::vector<float>& got, const std::vector<float>& want, const std::string& what,
                    bool nonzero = true) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t first = got.size();
  for (size_t i = 0; i < got.size() && first == got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) first = i;
  EXPECT_EQ(first, got.size()) << what << ": first differing value at " << first << " of " << got.size();
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::abs(v));
  if (nonzero) {
    EXPECT_GT(largest, 0.0f) << what << ": all zero, the comparison would be empty";
  }
}

constexpr int kNx = 20, kNy = 10, kNz = 40, kWidth = 8;

// Three layers with epsilon, delta, tilt and azimuth varying in every direction (so that every
// ghost plane carries different coefficients), sponge layers.
VelocityModel tti_model() {
  VelocityModel m = layered_model(ModelShape{kNx, kNy, kNz, 10, 10, 10}, {120, 260}, {1800, 2400, 2900});
  fill_anisotropy(m, [](int i, int j, int k, size_t) {
    return CellAnisotropy{0.2 + 0.05 * std::sin(0.2 * k + 0.1 * i), // >= 0.15 > delta
                          0.05 + 0.04 * std::cos(0.3 * j + 0.15 * k), 30 + 15 * std::sin(0.25 * i + 0.2 * k),
                          20 + 25 * std::cos(0.3 * j)};
  });
  return m;
}

BoundaryConfig boundary(bool free_surface) {
  BoundaryConfig b;
  b.width = kWidth;
  b.free_surface = free_surface;
  b.absorber = Absorber::sponge;
  return b;
}

// The TTI problem with its source straddling the first slab boundary and receivers on three
// depths, one across a slab boundary.
RtmProblem tti_problem(bool free_surface) {
  RtmProblem p;
  p.sim = make_simulation_grid(tti_model(), boundary(free_surface), 0.0);
  p.box = model_box(p.sim);
  p.nt = 90;
  p.f0 = 20;
  p.wavelet = ricker_wavelet(p.nt, p.sim.dt, p.f0, default_ricker_delay(p.f0));
  const int pad_z = p.sim.pad_z_lo;
  const double dz = p.sim.hz();
  const std::vector<Slab> slabs =
      split_into_slabs(p.sim.layout.nz, std::max(2, world_size()), 0, 0, kTtiRing);
  const int edge = slabs[1].z_begin;
  p.source = {(edge - 0.6 - pad_z) * dz, 0.5 * (kNy - 1) * 10 + 3.0, 0.5 * (kNx - 1) * 10 - 7.0};
  for (double depth : {20.0, (edge - 0.3 - pad_z) * dz, (edge + 2.5 - pad_z) * dz})
    for (const Position& r : line_along_x(depth, 0.5 * (kNy - 1) * 10, 5.0, (kNx - 1) * 10.0 - 5, 35.0)) {
      p.receivers.push_back(r);
      p.receiver_points.push_back(locate_point(p.sim, r, "receiver"));
    }
  return p;
}

std::unique_ptr<Wavefield> wavefield(const PropagatorSetup& setup, bool decomposed) {
  std::ostringstream log;
  if (decomposed) return make_decomposed_wavefield(setup, cpu_options(), MPI_COMM_WORLD, log);
  return make_wavefield(setup, cpu_options(), log);
}
std::unique_ptr<ShotFields> shot_fields(const PropagatorSetup& setup, bool decomposed) {
  std::ostringstream log;
  if (decomposed) return make_decomposed_shot_fields(setup, cpu_options(), MPI_COMM_WORLD, log);
  return make_shot_fields(setup, cpu_options(), log);
}

struct Modeled {
  std::vector<float> traces, prev, cur;
};
Modeled model_tti(const RtmProblem& p, bool decomposed) {
  const std::unique_ptr<Wavefield> field = wavefield(make_propagator_setup(p.sim), decomposed);
  EXPECT_NE(field->name().find("tti"), std::string::npos) << field->name();
  const std::unique_ptr<PointSet> source = field->add_points({locate_point(p.sim, p.source, "source")}, p.nt);
  source->upload_series(p.wavelet);
  const std::unique_ptr<PointSet> receivers = field->add_points(p.receiver_points, p.nt);
  Modeled m;
  m.traces = model_one_shot(*field, p.sim.injection_scale(), *source, *receivers,
                            int(p.receiver_points.size()), p.nt);
  field->get_state(m.prev, m.cur); // (p, q) of the whole grid, gathered
  return m;
}

class TtiDecomposition : public ::testing::TestWithParam<bool> {}; // free surface or not

TEST(TtiSlabs, TheHaloIsTwoPassesDeepAndThinSlabsAreRefused) {
  const std::vector<Slab> slabs = split_into_slabs(56, 3, 0, 0, kTtiRing);
  ASSERT_EQ(slabs.size(), 3u);
  EXPECT_EQ(slabs[0].ghost_hi, 8);
  EXPECT_EQ(slabs[1].ghost_lo, 8);
  EXPECT_EQ(slabs[1].local_planes(), slabs[1].own_planes() + 16);
  try {
    split_into_slabs(40, 3, 0, 0, kTtiRing); // 13-plane slabs
    FAIL() << "13-plane TTI slabs were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("TTI"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(split_into_slabs(40, 3)); // the isotropic halo fits
}

TEST_P(TtiDecomposition, ModelingEqualsTheUndividedGrid) {
  const RtmProblem p = tti_problem(GetParam());
  const Modeled want = model_tti(p, false);
  const Modeled got = model_tti(p, true);
  expect_bitwise(got.traces, want.traces, "traces");
  expect_bitwise(got.cur, want.cur, "final (p, q)[n]");
  expect_bitwise(got.prev, want.prev, "final (p, q)[n-1]");
}

TEST_P(TtiDecomposition, MigrationEqualsTheUndividedGrid) {
  const RtmProblem p = tti_problem(GetParam());
  const std::vector<float> data = model_tti(p, false).traces;
  std::vector<float> image[2], illumination[2];
  for (int decomposed = 0; decomposed < 2; ++decomposed) {
    ShotPair pair = make_shot_pair(p, shot_fields(make_propagator_setup(p.sim), decomposed == 1));
    pair.receivers->upload_series(traces_to_series(data, int(p.receiver_points.size()), p.nt));
    pair.fields->allocate_image(p.box);
    pair.make_boundary_store(p.box, p.nt - 1); // the 8-cell ring of p and q, per slab
    migrate_one_shot(*pair.fields, pair.sets, p.box, Reconstruction::boundary,
                     snapshot_interval(p.sim.dt, p.f0));
    image[decomposed] = pair.fields->download_image();
    illumination[decomposed] = pair.fields->download_illumination();
  }
  expect_bitwise(image[1], image[0], "image");
  expect_bitwise(illumination[1], illumination[0], "illumination");
}

TEST_P(TtiDecomposition, BornModelingEqualsTheUndividedGrid) {
  const RtmProblem p = tti_problem(GetParam());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 11);
  std::vector<float> traces[2];
  for (int decomposed = 0; decomposed < 2; ++decomposed) {
    ShotPair pair = make_shot_pair(p, shot_fields(make_propagator_setup(p.sim), decomposed == 1));
    traces[decomposed] = born_model_one_shot(*pair.fields, pair.sets, int(p.receiver_points.size()), p.box, m);
  }
  expect_bitwise(traces[1], traces[0], "Born traces");
}

INSTANTIATE_TEST_SUITE_P(Boundaries, TtiDecomposition, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "FreeSurface" : "Absorbing";
                         });

// `rtm migrate --physics tti --ranks-per-shot R`'s path: each rank reads its planes of /vp and of
// /epsilon, /delta, /theta, /phi (hyperslabs), builds its slab's coefficients alone, and migrates;
// its own planes of the image equal the one-rank migration's of the whole model bit for bit.
TEST(TtiSlabModel, SlabReadsMigrateAsOneRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 or more ranks";
  const ParallelContext parallel(world_size());
  const std::string path = shared_temp_stem("rtm_tti_slabs") + ".h5";
  const VelocityModel model = tti_model();
  if (parallel.is_root()) write_velocity_model(path, model);
  MPI_Barrier(MPI_COMM_WORLD);

  const RtmProblem p = tti_problem(false);
  ShotFile shots;
  shots.nt = p.nt;
  shots.dt = p.sim.dt;
  shots.f0 = p.f0;
  shots.t0 = default_ricker_delay(p.f0);
  shots.wavelet = p.wavelet;
  shots.receivers = p.receivers;
  ShotGather g;
  g.source = p.source;
  g.data = model_tti(p, false).traces;
  shots.shots.push_back(g);
  MigrationParams params;
  params.boundary = boundary(false);
  params.backend = cpu_options();
  params.reconstruction = Reconstruction::boundary;
  params.direct_wave = DirectWaveRemoval::none; // the record is short: keep all of it

  std::ostringstream log;
  VelocityModel whole = read_velocity_model(path);
  read_anisotropy(path, whole);
  const MigrationResult want = migrate_shots(whole, shots, params, log);

  const SlabModel part = read_slab_model(path, "vp", VelocityCheck::plausible, 0.0, params.boundary,
                                         parallel.group_comm(), true);
  ASSERT_TRUE(part.tti);
  MigrationControl control;
  control.parallel = &parallel;
  const MigrationResult got = migrate_shots(part, shots, params, log, nullptr, control);
  const size_t plane = size_t(kNx) * kNy;
  auto own_planes = [&](const std::vector<float>& v) {
    return std::vector<float>(v.begin() + ptrdiff_t(size_t(got.image_z_first) * plane),
                              v.begin() + ptrdiff_t(size_t(got.image_z_first) * plane + got.image.size()));
  };
  ASSERT_FALSE(got.image.empty());
  float largest = 0;
  for (float v : want.image) largest = std::max(largest, std::abs(v));
  ASSERT_GT(largest, 0.0f) << "the one-rank image is all zero: the comparison would be empty";
  // A slab's own planes may lie where the image is muted (the top): zero there on both.
  expect_bitwise(got.raw_image, own_planes(want.raw_image), "raw image (own planes)", false);
  expect_bitwise(got.illumination, own_planes(want.illumination), "illumination (own planes)");
  expect_bitwise(got.image, own_planes(want.image), "image (own planes)", false);
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) std::remove(path.c_str());
}

} // namespace
} // namespace rtm::test

int main(int argc, char** argv) { return rtm::test::run_mpi_tests(argc, argv); }
