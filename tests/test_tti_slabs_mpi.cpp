// TTI on z-slabs (kernels/mpi/decomposed_propagator.h with the TTI step's 8-plane halos;
// docs/decomposition.md, "TTI") against the undivided grid. Run under the MPI launcher with 1, 2
// and 3 ranks (tests/CMakeLists.txt): every rank computes the undivided reference itself and the
// decomposed result over all ranks, and compares. CPU backend: bit for bit, as the isotropic
// decomposition (each cell is computed by the same code on the same inputs; the ghost planes are
// exact copies). CUDA backend (RTM_TEST_BACKEND=cuda, one GPU per rank; RTM_TEST_VARIANT,
// RTM_TEST_HALO_TRANSPORT): the CUDA TTI wavefield on each slab with the GPU transports' 8-plane
// halos, against the one-GPU run within kGpuTolerance (below).
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/decomposed_backend.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/tti_setup.h"
#include "tests/support/anisotropic_model.h"
#include "tests/support/mpi_backend_under_test.h"
#include "tests/support/mpi_test_main.h"
#include "tests/support/shared_temp_path.h"

namespace rtm::test {
namespace {

// On the GPU the split and the undivided run differ only in the order of the point sets' atomic
// adds (sources and receivers whose stencils share cells; the TTI step computes each cell the same
// way on any plane range): float rounding, grown by the propagation. The isotropic decomposition
// stays within 1e-6 of the largest value; 1e-5 leaves room for the coupled (p, q) system. A wrong
// halo is no rounding: with 4-plane ghosts the CPU's traces differ from the 9th value on, by the
// size of the signal. The final image (normalised, Laplacian-filtered: second differences of
// neighbours that nearly cancel) takes 1e-4, as the isotropic mpi_migrate tests argue.
constexpr float kGpuTolerance = 1e-5f;
constexpr float kGpuImageTolerance = 1e-4f;

float largest_of(const std::vector<float>& values) {
  float largest = 0;
  for (float v : values) largest = std::max(largest, std::abs(v));
  return largest;
}

// Bit for bit on the CPU; on a GPU within `tolerance` of `scale` (0: the largest |value| of `want`;
// a part of a volume is compared on the scale of the whole).
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const std::string& what,
                 bool nonzero = true, float tolerance = kGpuTolerance, float scale = 0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (nonzero) {
    EXPECT_GT(largest_of(want), 0.0f) << what << ": all zero, the comparison would be empty";
  }
  const float largest = scale > 0 ? scale : largest_of(want);
  if (test_backend() == "cpu") {
    size_t first = got.size();
    for (size_t i = 0; i < got.size() && first == got.size(); ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) first = i;
    EXPECT_EQ(first, got.size()) << what << ": first differing value at " << first << " of " << got.size();
    return;
  }
  float worst = 0;
  size_t at = 0; // NaN counts as the worst
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= worst)) worst = std::abs(got[i] - want[i]), at = i;
  EXPECT_LE(worst, tolerance * largest) << what << ": largest difference " << worst << " at " << at
                                        << " of " << got.size() << ", largest value " << largest;
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
  if (decomposed) return make_decomposed_wavefield(setup, backend_options(), MPI_COMM_WORLD, log);
  return make_wavefield(setup, backend_options(), log);
}
std::unique_ptr<ShotFields> shot_fields(const PropagatorSetup& setup, bool decomposed) {
  std::ostringstream log;
  if (decomposed) return make_decomposed_shot_fields(setup, backend_options(), MPI_COMM_WORLD, log);
  return make_shot_fields(setup, backend_options(), log);
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
  expect_same(got.traces, want.traces, "traces");
  expect_same(got.cur, want.cur, "final (p, q)[n]");
  expect_same(got.prev, want.prev, "final (p, q)[n-1]");
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
  expect_same(image[1], image[0], "image");
  expect_same(illumination[1], illumination[0], "illumination");
}

TEST_P(TtiDecomposition, BornModelingEqualsTheUndividedGrid) {
  const RtmProblem p = tti_problem(GetParam());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 11);
  std::vector<float> traces[2];
  for (int decomposed = 0; decomposed < 2; ++decomposed) {
    ShotPair pair = make_shot_pair(p, shot_fields(make_propagator_setup(p.sim), decomposed == 1));
    traces[decomposed] = born_model_one_shot(*pair.fields, pair.sets, int(p.receiver_points.size()), p.box, m);
  }
  expect_same(traces[1], traces[0], "Born traces");
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
  params.backend = backend_options();
  params.reconstruction = Reconstruction::boundary;
  params.direct_wave = DirectWaveRemoval::none; // the record is short: keep all of it

  std::ostringstream log;
  VelocityModel whole = read_velocity_model(path);
  read_anisotropy(path, whole);
  const MigrationResult want = migrate_shots(whole, shots, params, log);

  const SlabModel part = read_slab_model(path, "vp", VelocityCheck::plausible, 0.0, params.boundary,
                                         parallel.group_comm(), Physics::tti);
  ASSERT_EQ(part.physics, Physics::tti);
  // The slab run's grid carries the part's physics: its sim.model is the shape, no anisotropy.
  EXPECT_EQ(slab_simulation_grid(part, params.boundary, 0.0).physics, Physics::tti);
  MigrationControl control;
  control.parallel = &parallel;
  const MigrationResult got = migrate_shots(part, shots, params, log, nullptr, control);
  // The ring it says it keeps is the whole run's: both fields, kTtiRing thick.
  EXPECT_EQ(got.memory.ring_cells, want.memory.ring_cells);
  const size_t plane = size_t(kNx) * kNy;
  auto own_planes = [&](const std::vector<float>& v) {
    return std::vector<float>(v.begin() + ptrdiff_t(size_t(got.image_z_first) * plane),
                              v.begin() + ptrdiff_t(size_t(got.image_z_first) * plane + got.image.size()));
  };
  ASSERT_FALSE(got.image.empty());
  ASSERT_GT(largest_of(want.image), 0.0f) << "the one-rank image is all zero: the comparison would be empty";
  // A slab's own planes may lie where the image is muted (the top): zero there on both. On a GPU
  // each part is compared on the scale of the whole volume.
  expect_same(got.raw_image, own_planes(want.raw_image), "raw image (own planes)", false, kGpuTolerance,
              largest_of(want.raw_image));
  expect_same(got.illumination, own_planes(want.illumination), "illumination (own planes)", true,
              kGpuTolerance, largest_of(want.illumination));
  expect_same(got.image, own_planes(want.image), "image (own planes)", false, kGpuImageTolerance,
              largest_of(want.image));
  // The checkpoint identity, the anisotropy's line included, is the one-rank run's: a TTI checkpoint
  // resumes with any rank count.
  const CheckpointIdentity one = migration_identity(whole, shots, path, params);
  const CheckpointIdentity split = migration_identity(part, parallel.group_comm(), shots, path, params);
  EXPECT_NE(one.parameters.find("anisotropy = tti"), std::string::npos) << one.parameters;
  EXPECT_EQ(split.parameters, one.parameters);
  EXPECT_EQ(split.model_fingerprint, one.model_fingerprint);
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) std::remove(path.c_str());
}

// The shear taper's note on a model held in slabs: each rank sums up the points and the tapered
// cells of its own planes, the group adds them up. The upper half of the model is made elliptic
// (delta = epsilon), one point sits in each plane and one below the model (its nearest cell: the
// last plane), so the note must count the lower half's 20 points and that one, and the cells of the
// lower half within the radius of any point, as the one-rank note does; with the taper off, the
// points alone.
TEST(TtiSlabModel, ShearTaperNoteSumsUpThePointsAndCellsOfEverySlab) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 or more ranks";
  const ParallelContext parallel(world_size());
  const std::string path = shared_temp_stem("rtm_tti_slabs_note") + ".h5";
  VelocityModel model = tti_model();
  const size_t plane = size_t(kNx) * kNy;
  for (size_t c = 0; c < plane * (kNz / 2); ++c) model.anisotropy.delta[c] = model.anisotropy.epsilon[c];
  if (parallel.is_root()) write_velocity_model(path, model);
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<Position> points;
  for (int k = 0; k < kNz; ++k) points.push_back({k * 10.0, 45.0, 95.0});
  points.push_back({(kNz + 3) * 10.0, 45.0, 95.0});
  VelocityModel whole = read_velocity_model(path);
  read_anisotropy(path, whole);
  const SlabModel part = read_slab_model(path, "vp", VelocityCheck::plausible, 0.0, boundary(false),
                                         parallel.group_comm(), Physics::tti);
  EXPECT_LT(part.own_end - part.own_first, kNz) << "one rank holds every plane: nothing is added up";
  ShearTaperOptions options;
  options.radius = 25;
  ShearTaperOptions off;
  off.enabled = false;
  for (const ShearTaperOptions& o : {options, off}) {
    const ShearTaper taper = make_shear_taper(o, whole, points);
    std::ostringstream one_rank, split;
    const ShearTaperSummary want = note_shear_taper(whole, taper, one_rank);
    EXPECT_EQ(want.anisotropic.count, size_t(kNz / 2 + 1));
    const ShearTaperSummary got = note_shear_taper(part, taper, parallel.group_comm(), split);
    EXPECT_EQ(got.anisotropic.count, want.anisotropic.count);
    EXPECT_EQ(got.anisotropic.worst, want.anisotropic.worst);
    EXPECT_EQ(got.cells, want.cells);
    EXPECT_EQ(split.str(), one_rank.str());
    if (o.enabled) {
      EXPECT_GT(want.cells, 0u);
      EXPECT_NE(split.str().find("of the 41 source and receiver position(s), 21 of them where epsilon > delta"),
                std::string::npos) << split.str();
    } else {
      EXPECT_EQ(want.cells, 0u);
      EXPECT_NE(split.str().find("21 of 41 source and receiver position(s) sit where epsilon > delta"),
                std::string::npos) << split.str();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) std::remove(path.c_str());
}

// `rtm model --physics tti --ranks-per-shot R`'s path: each rank reads its planes of the five
// datasets (read_slab_model, not smoothed) and models every shot on its slab; world rank 0's
// traces equal the one-rank modeling of the whole model's. Sources and receivers at the depth of a
// slab boundary (195 m: compute plane 27 of 56, the boundary of two slabs being at 28), two shots
// (the second's source placed on the split grid anew).
TEST(TtiSlabModel, SlabReadsModelAsOneRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 or more ranks";
  const ParallelContext parallel(world_size());
  int pid = int(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string path = "/tmp/rtm_tti_slabs_model_" + std::to_string(pid) + ".h5";
  if (parallel.is_root()) write_velocity_model(path, tti_model());
  MPI_Barrier(MPI_COMM_WORLD);

  ModelingParams params;
  params.wavelet.f0 = 20;
  params.record_time = 0.1;
  params.boundary = boundary(false);
  params.backend = backend_options();
  VelocityModel whole = read_velocity_model(path);
  read_anisotropy(path, whole);
  const Acquisition acq = default_line_survey(whole, 2, 195.0, 3);
  std::ostringstream log;
  const ShotFile want = model_shots(whole, acq, params, log);

  const SlabModel part = read_slab_model(path, "vp", VelocityCheck::plausible, 0.0, params.boundary,
                                         parallel.group_comm(), Physics::tti);
  ASSERT_EQ(part.physics, Physics::tti);
  const ShotFile got = model_shots(part, acq, params, log, nullptr, parallel);
  if (parallel.is_root()) {
    ASSERT_EQ(got.shots.size(), want.shots.size());
    EXPECT_EQ(got.nt, want.nt);
    for (size_t s = 0; s < want.shots.size(); ++s)
      expect_same(got.shots[s].data, want.shots[s].data, "shot " + std::to_string(s) + " traces");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) std::remove(path.c_str());
}


} // namespace
} // namespace rtm::test

int main(int argc, char** argv) { return rtm::test::run_mpi_tests(argc, argv, new rtm::test::GpuPerRank); }
