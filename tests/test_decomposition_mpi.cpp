// Domain decomposition (kernels/mpi/decomposed_propagator.h) against the undivided grid. Run under the
// MPI launcher with 1, 2 and 3 ranks (tests/CMakeLists.txt): every rank computes the undivided
// reference itself (the grids are small) and the decomposed result over all ranks, and compares.
//
// CPU backend: bit for bit (each cell is computed by the same code on the same inputs). CUDA
// backend (RTM_TEST_BACKEND=cuda, one GPU per rank): 1e-6 relative to the largest value, since the
// GPU's point injection adds with atomics in no fixed order.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "solvers/contracts/errors.h"
#include "kernels/mpi/halo_messages.h"
#include "rtm_test_problem.h"
#include "solvers/drivers/born.h"
#include "kernels/mpi/decomposed_propagator.h"
#include "solvers/drivers/decomposed_backend.h"
#include "tests/support/mpi_backend_under_test.h"
#include "tests/support/mpi_test_main.h"

namespace rtm::test {
namespace {

// Equal bit for bit on the CPU; within 1e-6 of the largest |value| on a GPU (2e-3 for fp16 storage).
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (test_backend() == "cpu") {
    size_t first_difference = got.size();
    for (size_t i = 0; i < got.size() && first_difference == got.size(); ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) first_difference = i;
    EXPECT_EQ(first_difference, got.size())
        << what << ": first differing value at " << first_difference << " of " << got.size();
    return;
  }
  float largest = 0, worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    largest = std::max(largest, std::abs(want[i]));
    worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  ASSERT_GT(largest, 0.0f) << what << ": the reference is all zero, the comparison would be empty";
  // fp16_storage rounds each receiver's injected contribution to half before its atomic add, and
  // overlapping sinc stencils add in any order: a split and an undivided grid then differ by a few
  // half roundings (measured on two H200s: up to 4.4e-4 of the largest image value), where the
  // float32 variants differ by float rounding only.
  const char* variant = std::getenv("RTM_TEST_VARIANT");
  const float tolerance = variant && std::string(variant) == "fp16_storage" ? 2e-3f : 1e-6f;
  EXPECT_LE(worst, tolerance * largest) << what;
}

// A layered problem whose source straddles the first slab boundary and whose receivers sit on
// three depths: one of them across a slab boundary too, so points are split between ranks.
RtmProblem straddling_problem(bool free_surface) {
  RtmProblem p = layered_problem(30, 20, 27, 8, 120, free_surface);
  const int pad_z = p.sim.pad_z_lo;
  const double dz = p.sim.hz();
  const std::vector<Slab> slabs = split_into_slabs(p.sim.layout.nz, std::max(2, world_size()));
  const int boundary = slabs[1].z_begin; // planes boundary-1 and boundary on different ranks
  p.source[0] = (boundary - 0.6 - pad_z) * dz; // Position is (z, y, x)
  p.receivers.clear();
  p.receiver_points.clear();
  for (double depth : {20.0, (boundary - 0.3 - pad_z) * dz, (boundary + 2.5 - pad_z) * dz}) {
    for (const Position& r : line_along_x(depth, 0.5 * (p.sim.model.ny - 1) * dz, 5.0, 285.0, 35.0)) {
      p.receivers.push_back(r);
      p.receiver_points.push_back(locate_point(p.sim, r, "receiver"));
    }
  }
  return p;
}

// The undivided grid (the backend's own fields) or the z-slabs over all ranks.
struct Maker {
  bool decomposed = false;
  std::unique_ptr<Wavefield> wavefield(const PropagatorSetup& setup) const {
    std::ostringstream log;
    if (decomposed) return make_decomposed_wavefield(setup, backend_options(), MPI_COMM_WORLD, log);
    return make_wavefield(setup, backend_options(), log);
  }
  std::unique_ptr<ShotFields> fields(const PropagatorSetup& setup) const {
    std::ostringstream log;
    if (decomposed) return make_decomposed_shot_fields(setup, backend_options(), MPI_COMM_WORLD, log);
    return make_shot_fields(setup, backend_options(), log);
  }
};
Maker undivided_maker() { return Maker{false}; }
Maker decomposed_maker() { return Maker{true}; }

ShotPair make_pair_with(const RtmProblem& p, const Maker& make) {
  return make_shot_pair(p, make.fields(make_propagator_setup(p.sim)));
}

struct ModelingResult {
  std::vector<float> traces, p_prev, p_cur;
};
ModelingResult model_with(const RtmProblem& p, const Maker& make) {
  const std::unique_ptr<Wavefield> field = make.wavefield(make_propagator_setup(p.sim));
  const std::unique_ptr<PointSet> source =
      field->add_points({locate_point(p.sim, p.source, "source")}, p.nt);
  source->upload_series(p.wavelet);
  const std::unique_ptr<PointSet> receivers = field->add_points(p.receiver_points, p.nt);
  ModelingResult r;
  r.traces = model_one_shot(*field, p.sim.injection_scale(), *source, *receivers,
                            int(p.receiver_points.size()), p.nt);
  field->get_state(r.p_prev, r.p_cur);
  return r;
}

class Decomposition : public ::testing::TestWithParam<bool> {}; // free surface or not

TEST(Slabs, SplitEvenlyAndRefuseThinSlabs) {
  const std::vector<Slab> slabs = split_into_slabs(43, 3);
  ASSERT_EQ(slabs.size(), 3u);
  EXPECT_EQ(slabs[0].z_begin, 0);
  EXPECT_EQ(slabs[0].z_end, 15);
  EXPECT_EQ(slabs[1].z_end, 29);
  EXPECT_EQ(slabs[2].z_end, 43);
  EXPECT_EQ(slabs[0].ghost_lo, 0);
  EXPECT_EQ(slabs[0].ghost_hi, kHalo);
  EXPECT_EQ(slabs[1].ghost_lo, kHalo);
  EXPECT_EQ(slabs[2].ghost_hi, 0);
  EXPECT_EQ(slabs[1].local_planes(), 14 + 2 * kHalo);
  EXPECT_NO_THROW(split_into_slabs(16, 2));
  // C-PML layers of 20 planes at both ends of 60: the end slabs own them whole, the rest share.
  const std::vector<Slab> layered = split_into_slabs(60, 4, 20, 20);
  EXPECT_EQ(layered[0].z_end, 20);
  EXPECT_EQ(layered[1].z_end, 30);
  EXPECT_EQ(layered[2].z_end, 40);
  EXPECT_EQ(layered[3].own_planes(), 20);
  EXPECT_EQ(split_into_slabs(60, 2, 20, 20)[0].z_end, 30); // the even split already does
  EXPECT_EQ(split_into_slabs(60, 2, 40, 0)[0].z_end, 40);
  EXPECT_THROW(split_into_slabs(50, 4, 20, 20), InputError); // 10 planes left for 2 slabs
  try {
    split_into_slabs(15, 2);
    FAIL() << "a 7-plane slab was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use at most 1 ranks"), std::string::npos) << e.what();
  }
}

// Both transports take their messages from halo_messages(): between neighbours every message one
// rank sends must be the one the other receives (same tag, same global planes), each way once.
TEST(HaloMessages, NeighboursSendWhatTheOtherReceives) {
  // 43 planes on 3 ranks: 15, 14, 14 own planes; kHalo ghost planes towards each neighbour. The
  // plans DecomposedPropagator makes for them (local planes: ghosts below come first).
  const std::vector<Slab> slabs = split_into_slabs(43, 3);
  ASSERT_EQ(slabs.size(), 3u);
  ASSERT_EQ(slabs[0].own_planes(), 15);
  ASSERT_EQ(slabs[1].own_planes(), 14);
  ASSERT_EQ(kHalo, 4);
  //            comm           below above send_below recv_below send_above recv_above
  const std::vector<HaloPlan> plans = {{MPI_COMM_NULL, -1, 1, 0, 0, 11, 15},
                                       {MPI_COMM_NULL, 0, 2, 4, 0, 14, 18},
                                       {MPI_COMM_NULL, 1, -1, 4, 0, 0, 0}};
  const int n = int(plans.size());
  for (int r = 0; r < n; ++r) {
    const HaloMessages m = halo_messages(plans[size_t(r)]);
    const int expected = (r > 0) + (r < n - 1);
    ASSERT_EQ(m.sends.size(), expected) << "rank " << r;
    ASSERT_EQ(m.receives.size(), expected) << "rank " << r;
    for (const HaloMessage& send : m.sends) {
      int matches = 0;
      for (const HaloMessage& receive : halo_messages(plans[size_t(send.peer)]).receives) {
        if (receive.peer != r || receive.tag != send.tag) continue;
        ++matches;
        // The same global planes: the sender's own edge is the receiver's ghost region.
        EXPECT_EQ(slabs[size_t(r)].first_local() + send.first_plane,
                  slabs[size_t(send.peer)].first_local() + receive.first_plane)
            << "rank " << r << " to " << send.peer;
      }
      EXPECT_EQ(matches, 1) << "rank " << r << " to " << send.peer << " tag " << send.tag;
    }
  }
  // Up and down differ: a receive can never take the message going the other way.
  EXPECT_NE(kHaloTagUp, kHaloTagDown);
  EXPECT_EQ(halo_message_bytes(size_t(1) << 20, "test"), 1 << 20);
  EXPECT_THROW(halo_message_bytes(size_t(1) << 31, "test"), std::runtime_error);
}

TEST(Slabs, TooManyRanksForTheGridIsRefused) {
  // 2 x 2 x 9 model cells with no absorbing layers: 9 planes, fewer than 2 x 8 for two ranks.
  if (world_size() < 2) GTEST_SKIP() << "needs 2 or more ranks";
  const VelocityModel model = constant_model(ModelShape{12, 12, 9, 10, 10, 10}, 2000);
  BoundaryConfig boundary;
  boundary.width = 0;
  const SimulationGrid sim = make_simulation_grid(model, boundary, 0.0);
  std::ostringstream log;
  EXPECT_THROW(make_decomposed_wavefield(make_propagator_setup(sim), backend_options(),
                                         MPI_COMM_WORLD, log),
               InputError);
}

TEST_P(Decomposition, ModelingEqualsTheUndividedGrid) {
  const RtmProblem p = straddling_problem(GetParam());
  const ModelingResult want = model_with(p, undivided_maker());
  const ModelingResult got = model_with(p, decomposed_maker());
  expect_same(got.traces, want.traces, "traces");
  expect_same(got.p_cur, want.p_cur, "final wavefield p[n]");
  expect_same(got.p_prev, want.p_prev, "final wavefield p[n-1]");
}

TEST_P(Decomposition, MigrationEqualsTheUndividedGrid) {
  const RtmProblem p = straddling_problem(GetParam());
  const std::vector<float> data = model_with(p, undivided_maker()).traces;
  for (Reconstruction reconstruction : {Reconstruction::boundary, Reconstruction::snapshots}) {
    std::vector<float> image[2], illumination[2];
    int which = 0;
    for (const Maker& make : {undivided_maker(), decomposed_maker()}) {
      ShotPair pair = make_pair_with(p, make);
      pair.receivers->upload_series(traces_to_series(data, int(p.receiver_points.size()), p.nt));
      pair.fields->allocate_image(p.box);
      if (reconstruction == Reconstruction::boundary) pair.make_boundary_store(p.box, p.nt - 1);
      migrate_one_shot(*pair.fields, pair.sets, p.box, reconstruction,
                       snapshot_interval(p.sim.dt, p.f0));
      image[which] = pair.fields->download_image();
      illumination[which] = pair.fields->download_illumination();
      ++which;
    }
    const std::string name = reconstruction_name(reconstruction);
    expect_same(image[1], image[0], (name + ": image").c_str());
    expect_same(illumination[1], illumination[0], (name + ": illumination").c_str());
  }
}

TEST_P(Decomposition, BornModelingEqualsTheUndividedGrid) {
  const RtmProblem p = straddling_problem(GetParam());
  const std::vector<float> m = random_values(size_t(p.box.cells()), 7);
  std::vector<float> traces[2];
  int which = 0;
  for (const Maker& make : {undivided_maker(), decomposed_maker()}) {
    ShotPair pair = make_pair_with(p, make);
    traces[which++] = born_model_one_shot(*pair.fields, pair.sets, int(p.receiver_points.size()),
                                          p.box, m);
  }
  expect_same(traces[1], traces[0], "Born traces");
}

INSTANTIATE_TEST_SUITE_P(Boundaries, Decomposition, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "FreeSurface" : "Absorbing"; });

TEST(DecomposedHealth, FindsTheSameWorstCellAsTheUndividedGrid) {
  const RtmProblem p = straddling_problem(false);
  const PropagatorSetup setup = make_propagator_setup(p.sim);
  const GridLayout& g = setup.layout;
  std::vector<float> prev(size_t(g.size), 0.0f), cur(size_t(g.size), 0.0f);
  // A large value in the last rank's slab and a NaN in the first's: the NaN must win.
  cur[size_t(g.index(5, 6, g.nz - 3))] = 1e30f;
  cur[size_t(g.index(7, 3, 2))] = std::nanf("");
  for (const Maker& make : {undivided_maker(), decomposed_maker()}) {
    std::unique_ptr<Wavefield> prop = make.wavefield(setup);
    prop->set_state(prev, cur);
    const FieldHealth h = prop->check_health();
    EXPECT_FALSE(h.finite);
    EXPECT_EQ(h.i, 7);
    EXPECT_EQ(h.j, 3);
    EXPECT_EQ(h.k, 2);
  }
}


} // namespace
} // namespace rtm::test

int main(int argc, char** argv) {
  return rtm::test::run_mpi_tests(argc, argv, new rtm::test::GpuPerRank);
}
