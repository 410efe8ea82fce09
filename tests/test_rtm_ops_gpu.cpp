// The RTM operations of the CUDA propagator (kernels/cuda/fields/rtm_ops.cu, docs/rtm.md section 10) against
// the CPU reference, for every variant (label gpu; each test skips where no GPU is usable).
//
// What is checked, and why it can fail:
// - Fresh random inputs every run (the seed is printed with a failure), on a grid whose sizes are
//   multiples of no block size, and boxes that start off the grid's origin or touch its faces.
// - The CPU reference is given exactly the values the GPU holds (the GPU's state read back after
//   set_state: in half storage that is the input rounded to half). Then every data movement
//   (ring save/restore, box copies) must give the reference's values bit for bit, in either
//   storage, and every element outside the operation's cells must stay exactly as it was.
// - Imaging and the Born source do the reference's float operations in its order, each rounded
//   (no fused multiply-add): the results agree to 1e-6 of the largest value (bit for bit where
//   both sides round the same way); a wrong index, weight or pairing is off by O(1). In half
//   storage the Born source's result is rounded to half once: within 2^-11 relative per cell.
// - Timing (enable_timing) counts what ran and changes no result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/migration.h"
#include "tests/support/cuda_test_support.h"

namespace rtm {
namespace {

using test::all_variants;
using test::fresh_seed;
using test::is_fp16;
using test::max_abs;
using test::max_relative_difference;
using test::random_signed_values;

constexpr int kNx = 37, kNy = 29, kNz = 33;
// Off the origin on every axis; touching the top (z = 0) and both y faces; the whole grid.
const Box kBoxes[] = {{3, 31, 2, 27, 5, 30}, {3, 31, 0, kNy, 0, 30}, {0, kNx, 0, kNy, 0, kNz}};

// v2dt2 = k / 1024 with k in [10, 100]: exact in half too, so both backends hold the same values.
PropagatorSetup make_setup(std::mt19937_64& rng) {
  PropagatorSetup setup;
  setup.layout = make_layout(kNx, kNy, kNz);
  setup.weights = make_laplacian_weights(10.0, 12.0, 8.0);
  std::uniform_int_distribution<int> k(10, 100);
  setup.v2dt2.resize(size_t(setup.layout.interior_cells()));
  for (float& v : setup.v2dt2) v = float(k(rng)) / 1024.0f;
  return setup;
}

struct State {
  std::vector<float> prev, cur;
};

// Sets a fresh random state on the GPU and returns what the GPU holds (rounded in half storage).
State set_random_state(Wavefield& gpu, std::mt19937_64& rng) {
  const size_t n = size_t(gpu.layout().size);
  const std::vector<float> prev = random_signed_values(n, rng), cur = random_signed_values(n, rng);
  gpu.set_state(prev, cur);
  State held;
  gpu.get_state(held.prev, held.cur);
  return held;
}

State state_of(const Wavefield& p) {
  State s;
  p.get_state(s.prev, s.cur);
  return s;
}

class RtmOps : public ::testing::TestWithParam<std::string> {};

TEST_P(RtmOps, ReverseTimeSwapsTheFields) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  const State held = set_random_state(*gpu, rng);
  gpu->reverse_time();
  const State reversed = state_of(*gpu);
  EXPECT_EQ(reversed.prev, held.cur);
  EXPECT_EQ(reversed.cur, held.prev);
}

// Three slots saved from three states, restored into a fourth: the ring cells (and only they)
// take the slot's values; the same sequence on the CPU gives the same arrays bit for bit.
TEST_P(RtmOps, BoundaryRingSaveAndRestoreMatchTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  const GridLayout& g = setup.layout;
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  CpuWavefield cpu(setup);
  for (const Box& box : kBoxes) {
    SCOPED_TRACE("box x " + std::to_string(box.x0) + ".." + std::to_string(box.x1) + ", y " +
                 std::to_string(box.y0) + ".." + std::to_string(box.y1) + ", z " +
                 std::to_string(box.z0) + ".." + std::to_string(box.z1));
    constexpr int kSlots = 3;
    const std::unique_ptr<BoundaryStore> gpu_store = gpu->make_boundary_store(box, kSlots);
    const std::unique_ptr<BoundaryStore> cpu_store = cpu.make_boundary_store(box, kSlots);
    std::vector<State> saved;
    for (int slot = 0; slot < kSlots; ++slot) {
      saved.push_back(set_random_state(*gpu, rng));
      cpu.set_state(saved.back().prev, saved.back().cur);
      gpu_store->save(slot);
      cpu_store->save(slot);
    }
    for (int slot : {1, 0, 2}) {
      const State before = set_random_state(*gpu, rng);
      cpu.set_state(before.prev, before.cur);
      gpu_store->restore(slot);
      cpu_store->restore(slot);
      const State after = state_of(*gpu);
      EXPECT_EQ(after.prev, before.prev) << "restore must not touch the previous field";
      int64_t wrong = 0, ring = 0;
      for (int64_t n = 0; n < g.size; ++n) {
        const int64_t rel = n - g.offset;
        const int64_t k = rel / g.plane - kHalo, j = (rel % g.plane) / g.pitch - kHalo,
                      i = rel % g.pitch - kHalo;
        const bool in_box = rel >= 0 && i >= box.x0 && i < box.x1 && j >= box.y0 && j < box.y1 &&
                            k >= box.z0 && k < box.z1;
        const bool in_ring = in_box && in_boundary_ring(box, int(i), int(j), int(k));
        ring += in_ring;
        const float expected = in_ring ? saved[size_t(slot)].cur[size_t(n)] : before.cur[size_t(n)];
        wrong += after.cur[size_t(n)] != expected;
      }
      EXPECT_EQ(ring, boundary_ring_cells(box));
      EXPECT_EQ(wrong, 0) << "slot " << slot << ": cells not as saved / not left alone";
      EXPECT_EQ(after.cur, state_of(cpu).cur) << "slot " << slot << ": differs from the CPU";
    }
  }
  EXPECT_THROW(gpu->make_boundary_store({0, kNx + 1, 0, kNy, 0, kNz}, 2), std::invalid_argument);
}

TEST_P(RtmOps, BoxCopiesMatchTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_wavefield(setup, GetParam(), {}, 0);
  CpuWavefield cpu(setup);
  for (const Box& box : kBoxes) {
    const State held = set_random_state(*gpu, rng);
    cpu.set_state(held.prev, held.cur);
    std::vector<float> gpu_dense, cpu_dense;
    gpu->copy_current(box, gpu_dense);
    cpu.copy_current(box, cpu_dense);
    ASSERT_EQ(int64_t(gpu_dense.size()), box.cells());
    EXPECT_EQ(gpu_dense, cpu_dense) << "copy_current";

    const std::vector<float> dense = random_signed_values(size_t(box.cells()), rng);
    gpu->set_current(box, dense);
    cpu.set_current(box, dense);
    const State g = state_of(*gpu), c = state_of(cpu);
    EXPECT_EQ(g.prev, held.prev) << "set_current must not touch the previous field";
    if (is_fp16(GetParam())) {
      int64_t wrong = 0;
      for (size_t n = 0; n < c.cur.size(); ++n)
        wrong += !(std::fabs(g.cur[n] - c.cur[n]) <= std::ldexp(std::fabs(c.cur[n]), -11));
      EXPECT_EQ(wrong, 0) << "set_current: more than one half rounding away from the CPU";
    } else {
      EXPECT_EQ(g.cur, c.cur) << "set_current";
    }
    // A round trip of what the field holds is exact in either storage.
    std::vector<float> again;
    gpu->copy_current(box, again);
    gpu->set_current(box, again);
    EXPECT_EQ(state_of(*gpu).cur, g.cur) << "copy_current then set_current changed the field";
  }
  std::vector<float> dense;
  EXPECT_THROW(gpu->copy_current({0, 0, 0, kNy, 0, kNz}, dense), std::invalid_argument);
  EXPECT_THROW(gpu->set_current(kBoxes[0], std::vector<float>(3)), std::invalid_argument);
}

// Several accumulations with different weights and fresh fields in between.
TEST_P(RtmOps, ImagingConditionMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  EXPECT_THROW(gpu->accumulate_image(1.0f), std::logic_error) << "no image allocated";
  const Box& box = kBoxes[0];
  gpu->allocate_image(box);
  cpu.allocate_image(box);
  std::uniform_real_distribution<float> weight(0.5f, 10.0f);
  for (int n = 0; n < 4; ++n) {
    const State s = set_random_state(gpu->source(), rng), r = set_random_state(gpu->receiver(), rng);
    cpu.source().set_state(s.prev, s.cur);
    cpu.receiver().set_state(r.prev, r.cur);
    const float w = weight(rng);
    gpu->accumulate_image(w);
    cpu.accumulate_image(w);
  }
  const std::vector<float> image = gpu->download_image(), ill = gpu->download_illumination();
  const std::vector<float> cpu_image = cpu.download_image(), cpu_ill = cpu.download_illumination();
  ASSERT_EQ(int64_t(image.size()), box.cells());
  ASSERT_EQ(int64_t(ill.size()), box.cells());
  const double e_image = max_relative_difference(image, cpu_image);
  const double e_ill = max_relative_difference(ill, cpu_ill);
  std::printf("%s: imaging vs CPU, max relative difference: image %.3g%s, illumination %.3g%s\n",
              GetParam().c_str(), e_image, image == cpu_image ? " (bitwise equal)" : "", e_ill,
              ill == cpu_ill ? " (bitwise equal)" : "");
  EXPECT_LE(e_image, 1e-6);
  EXPECT_LE(e_ill, 1e-6);
  // allocate_image zeroes both.
  gpu->allocate_image(box);
  EXPECT_EQ(max_abs(gpu->download_image()), 0.0);
  EXPECT_EQ(max_abs(gpu->download_illumination()), 0.0);
}

// ISIC and the separated condition (solvers/contracts/imaging_condition.h) on the CUDA separate
// path: the contract's per-cell arithmetic, each operation rounded on both sides, so the sums
// agree to 1e-6 of the largest value (bit for bit where both round alike). Boxes off the origin
// and on the grid's faces, where the derivatives' indices are clamped into the box; the separated
// condition reads the previous fields too. step_both images through the separate calls with these
// conditions (no fused kernel has them), before either field steps.
TEST_P(RtmOps, IsicAndSeparatedConditionsMatchTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  std::uniform_real_distribution<float> weight(0.5f, 10.0f);
  for (ImagingCondition c : {ImagingCondition::isic, ImagingCondition::separated})
    for (const Box& box : {kBoxes[0], kBoxes[1]}) {
      SCOPED_TRACE(std::string(imaging_condition_info(c).name) + ", box x " +
                   std::to_string(box.x0) + ".." + std::to_string(box.x1) + ", y " +
                   std::to_string(box.y0) + ".." + std::to_string(box.y1) + ", z " +
                   std::to_string(box.z0) + ".." + std::to_string(box.z1));
      gpu->allocate_image(box, c);
      cpu.allocate_image(box, c);
      for (int n = 0; n < 3; ++n) {
        const State s = set_random_state(gpu->source(), rng);
        const State r = set_random_state(gpu->receiver(), rng);
        cpu.source().set_state(s.prev, s.cur);
        cpu.receiver().set_state(r.prev, r.cur);
        const float w = weight(rng);
        if (n < 2) {
          gpu->accumulate_image(w);
          cpu.accumulate_image(w);
        } else {
          gpu->step_both(w);
          cpu.step_both(w);
        }
      }
      const std::vector<float> image = gpu->download_image(), ill = gpu->download_illumination();
      const std::vector<float> cpu_image = cpu.download_image(), cpu_ill = cpu.download_illumination();
      ASSERT_EQ(int64_t(image.size()), box.cells());
      const double e_image = max_relative_difference(image, cpu_image);
      const double e_ill = max_relative_difference(ill, cpu_ill);
      std::printf("%s, %s: vs CPU, max relative difference: image %.3g%s, illumination %.3g\n",
                  GetParam().c_str(), imaging_condition_info(c).name, e_image,
                  image == cpu_image ? " (bitwise equal)" : "", e_ill);
      EXPECT_GT(max_abs(image), 0.0);
      EXPECT_LE(e_image, 1e-6);
      EXPECT_LE(e_ill, 1e-6);
    }
}

// Subsurface-offset gathers (solvers/contracts/offset_gathers.h): the contract's per-value
// arithmetic on both sides, each product and sum rounded, so the sums agree to 1e-6 of the
// largest value (bit for bit where both round alike); a wrong shift, position or lag is off by
// O(1). Lags along x and y with a step of 2, strides that leave a remainder, boxes off the origin
// and on the grid's faces (where the shifted cells leave the box and contribute 0); the third
// imaging through step_both, which takes the separate calls when gathers are on. allocate_image
// drops them.
TEST_P(RtmOps, OffsetGathersMatchTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  OffsetGatherSpec spec;
  spec.lags = 4;
  spec.lag_step = 2;
  spec.stride_x = 5;
  spec.stride_y = 3;
  std::uniform_real_distribution<float> weight(0.5f, 10.0f);
  for (const Box& box : {kBoxes[0], kBoxes[1]}) {
    SCOPED_TRACE("box x " + std::to_string(box.x0) + ".." + std::to_string(box.x1) + ", y " +
                 std::to_string(box.y0) + ".." + std::to_string(box.y1));
    gpu->allocate_image(box);
    cpu.allocate_image(box);
    gpu->allocate_offset_gathers(spec);
    cpu.allocate_offset_gathers(spec);
    for (int n = 0; n < 3; ++n) {
      const State s = set_random_state(gpu->source(), rng);
      const State r = set_random_state(gpu->receiver(), rng);
      cpu.source().set_state(s.prev, s.cur);
      cpu.receiver().set_state(r.prev, r.cur);
      const float w = weight(rng);
      if (n < 2) {
        gpu->accumulate_image(w);
        cpu.accumulate_image(w);
      } else {
        gpu->step_both(w);
        cpu.step_both(w);
      }
    }
    const std::vector<float> gathers = gpu->download_offset_gathers();
    const std::vector<float> cpu_gathers = cpu.download_offset_gathers();
    ASSERT_EQ(int64_t(gathers.size()), gpu->gather_layout().values());
    ASSERT_EQ(gathers.size(), cpu_gathers.size());
    const double e = max_relative_difference(gathers, cpu_gathers);
    std::printf("%s: offset gathers vs CPU (%zu values), max relative difference %.3g%s\n",
                GetParam().c_str(), gathers.size(), e, gathers == cpu_gathers ? " (bitwise equal)" : "");
    EXPECT_GT(max_abs(gathers), 0.0);
    EXPECT_LE(e, 1e-6);
  }
  gpu->allocate_image(kBoxes[0]);
  EXPECT_FALSE(gpu->has_offset_gathers());
  EXPECT_TRUE(gpu->download_offset_gathers().empty());
}

// finish_image on the GPU (normalised, then filtered, where the sums lie) against the drivers'
// host finish of the downloaded sums: bit for bit (solvers/contracts/image_finish.h gives both the
// same order of every operation and the GPU no contracted multiply-add), with the filter and
// without, on a box off the origin and on the whole grid. The CPU fields offer no such finish.
TEST_P(RtmOps, ImageFinishedOnTheDeviceIsTheHostsFinish) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  std::uniform_real_distribution<float> weight(0.5f, 10.0f);
  for (const Box& box : {kBoxes[0], kBoxes[2]})
    for (const bool laplacian : {true, false}) {
      SCOPED_TRACE("box x " + std::to_string(box.x0) + ".." + std::to_string(box.x1) +
                   (laplacian ? ", filtered" : ", not filtered"));
      gpu->allocate_image(box);
      for (int n = 0; n < 3; ++n) {
        set_random_state(gpu->source(), rng);
        set_random_state(gpu->receiver(), rng);
        gpu->accumulate_image(weight(rng));
      }
      std::vector<float> raw = gpu->download_image();
      std::vector<float> illumination = gpu->download_illumination();
      // Subnormal sums, as a real image's far corners hold: the host may flush them in its
      // arithmetic, the GPU must give the same bits.
      for (size_t c = 0; c < raw.size(); c += 7) raw[c] = (c % 2 ? 1 : -1) * 3e-39f * float(c % 5);
      for (size_t c = 3; c < illumination.size(); c += 11) illumination[c] = 2e-40f;
      gpu->set_image(raw, illumination);
      ImageFinish finish;
      finish.eps_fraction = 0.05;
      finish.laplacian = laplacian;
      finish.dx = 10;
      finish.dy = 12.5;
      finish.dz = 7;
      std::vector<float> host = normalise_image(raw, illumination, box.nx(), finish.eps_fraction);
      if (laplacian)
        host = laplacian_filter(host, box.nx(), box.ny(), box.nz(), finish.dx, finish.dy, finish.dz);
      ASSERT_TRUE(gpu->supports_image_finish());
      gpu->finish_image(finish);
      const std::vector<float> device = gpu->download_image();
      ASSERT_EQ(device.size(), host.size());
      EXPECT_GT(max_abs(host), 0.0);
      size_t differ = 0;
      for (size_t c = 0; c < host.size(); ++c) differ += device[c] != host[c];
      std::printf("%s: finished image vs host (%zu values%s): %zu differ\n", GetParam().c_str(),
                  host.size(), laplacian ? ", filtered" : "", differ);
      EXPECT_EQ(differ, 0u);
    }
  CpuShotFields cpu(setup);
  cpu.allocate_image(kBoxes[0]);
  EXPECT_FALSE(cpu.supports_image_finish());
  EXPECT_THROW(cpu.finish_image(ImageFinish{}), std::logic_error);
}

// snapshot_image (a checkpoint's copy of the sums): the GPU queues the copy into pinned host memory
// on a stream of its own and returns, so it must follow the imaging queued before it and precede
// the imaging queued after it. The accumulations here are queued without the host waiting in
// between (one state for all), the snapshot between them: its sums are the reference's after the
// first four, the sums downloaded at the end the reference's after all six, through both ways of
// imaging (accumulate_image, and step_both with its weight). One snapshot at a time. The pinned
// buffers are made ahead (prepare_snapshots, as the migration driver does before its loop), and
// made again by the snapshot itself after allocate_image changed the box.
TEST_P(RtmOps, ImageSnapshotHoldsTheSumsOfItsPlaceInTheQueue) {
  SKIP_WITHOUT_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  const Box& box = kBoxes[0];
  gpu->allocate_image(box);
  cpu.allocate_image(box);
  gpu->prepare_snapshots();
  const State s = set_random_state(gpu->source(), rng), r = set_random_state(gpu->receiver(), rng);
  cpu.source().set_state(s.prev, s.cur);
  cpu.receiver().set_state(r.prev, r.cur);
  const std::vector<float> images = random_signed_values(size_t(box.cells()), rng);
  const std::vector<float> ills = random_signed_values(size_t(box.cells()), rng);
  gpu->set_image(images, ills); // non-zero sums, so that a copy of the wrong moment shows
  cpu.set_image(images, ills);
  for (const float w : {1.5f, 2.0f, 3.25f, 0.75f}) {
    gpu->accumulate_image(w);
    cpu.accumulate_image(w);
  }
  const std::vector<float> cpu_image_4 = cpu.download_image(), cpu_ill_4 = cpu.download_illumination();
  std::unique_ptr<ImageSnapshot> snapshot = gpu->snapshot_image();
  EXPECT_THROW(gpu->snapshot_image(), std::logic_error) << "the one before is still held";
  EXPECT_THROW(gpu->prepare_snapshots(), std::logic_error) << "a snapshot is still held";
  gpu->accumulate_image(4.0f);
  gpu->step_both(5.0f); // images, then steps both fields
  cpu.accumulate_image(4.0f);
  cpu.step_both(5.0f);
  ImageSnapshot::Sums sums = snapshot->take();
  EXPECT_THROW(snapshot->take(), std::logic_error) << "taken once";
  ASSERT_EQ(int64_t(sums.image.size()), box.cells());
  ASSERT_EQ(int64_t(sums.illumination.size()), box.cells());
  const double e_image = max_relative_difference(sums.image, cpu_image_4);
  const double e_ill = max_relative_difference(sums.illumination, cpu_ill_4);
  const std::vector<float> image = gpu->download_image(), ill = gpu->download_illumination();
  const double e_image_6 = max_relative_difference(image, cpu.download_image());
  const double e_ill_6 = max_relative_difference(ill, cpu.download_illumination());
  std::printf("%s: snapshot vs CPU after 4 accumulations: image %.3g, illumination %.3g; after 6: "
              "%.3g, %.3g (max relative difference)\n",
              GetParam().c_str(), e_image, e_ill, e_image_6, e_ill_6);
  EXPECT_LE(e_image, 1e-6);
  EXPECT_LE(e_ill, 1e-6);
  EXPECT_LE(e_image_6, 1e-6);
  EXPECT_LE(e_ill_6, 1e-6);
  // Taken, the next snapshot is allowed: the sums as they are now, as download_image gives them.
  snapshot.reset();
  ImageSnapshot::Sums again = gpu->snapshot_image()->take();
  EXPECT_EQ(again.image, image);
  EXPECT_EQ(again.illumination, ill);
  // A snapshot dropped untaken frees the buffers too.
  gpu->snapshot_image().reset();
  EXPECT_EQ(gpu->snapshot_image()->take().image, image);
  // Another box: the next snapshot makes buffers of its size (the new sums, zero).
  const Box& other = kBoxes[1];
  ASSERT_NE(other.cells(), box.cells());
  gpu->allocate_image(other);
  ImageSnapshot::Sums zero = gpu->snapshot_image()->take();
  EXPECT_EQ(zero.image, std::vector<float>(size_t(other.cells()), 0.0f));
  EXPECT_EQ(zero.illumination, std::vector<float>(size_t(other.cells()), 0.0f));
}

// set_image replaces both sums exactly (a resumed migration continues from them), and the next
// accumulation adds onto them as the reference does.
TEST_P(RtmOps, SetImageRestoresTheSumsExactly) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  const Box& box = kBoxes[0];
  EXPECT_THROW(gpu->set_image({}, {}), std::logic_error) << "no image allocated";
  gpu->allocate_image(box);
  cpu.allocate_image(box);
  const std::vector<float> image = random_signed_values(size_t(box.cells()), rng);
  const std::vector<float> ill = random_signed_values(size_t(box.cells()), rng);
  EXPECT_THROW(gpu->set_image(image, {}), std::invalid_argument);
  gpu->set_image(image, ill);
  cpu.set_image(image, ill);
  EXPECT_EQ(gpu->download_image(), image);
  EXPECT_EQ(gpu->download_illumination(), ill);
  const State s = set_random_state(gpu->source(), rng), r = set_random_state(gpu->receiver(), rng);
  cpu.source().set_state(s.prev, s.cur);
  cpu.receiver().set_state(r.prev, r.cur);
  gpu->accumulate_image(2.0f);
  cpu.accumulate_image(2.0f);
  EXPECT_LE(max_relative_difference(gpu->download_image(), cpu.download_image()), 1e-6);
  EXPECT_LE(max_relative_difference(gpu->download_illumination(), cpu.download_illumination()), 1e-6);
}

// A step computed in parts (step_planes over ranges of planes, then finish_step), as a slab of a
// decomposed grid does it, equals the whole step bit for bit: every kernel sees a shifted grid.
TEST_P(RtmOps, StepInPlaneRangesEqualsTheWholeStep) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  PropagatorSetup setup = make_setup(rng);
  // Damped, with zeros inside as in real absorbing layers: the z profile is shifted too.
  std::uniform_real_distribution<float> e(0.0f, 0.05f);
  for (auto [profile, n] : {std::pair{&setup.damping.x, kNx}, {&setup.damping.y, kNy}, {&setup.damping.z, kNz}})
    for (int i = 0; i < n; ++i) profile->push_back(i < 6 || i >= n - 6 ? e(rng) : 0.0f);
  const int nz = setup.layout.nz;
  auto whole = cuda::make_wavefield(setup, GetParam(), {}, 0);
  auto parts = cuda::make_wavefield(setup, GetParam(), {}, 0);
  const State start = set_random_state(*whole, rng);
  parts->set_state(start.prev, start.cur);
  for (int n = 0; n < 3; ++n) {
    whole->step();
    // Edges of 4 planes, then the rest in two uneven pieces, in a scrambled order.
    const int a = kHalo, b = nz - kHalo, c = a + (b - a) / 3;
    parts->step_planes(b, nz);
    parts->step_planes(c, b);
    parts->step_planes(0, a);
    parts->step_planes(a, c);
    parts->finish_step();
  }
  const State w = state_of(*whole), p = state_of(*parts);
  EXPECT_TRUE(w.cur == p.cur) << "p[n] differs, max relative " << max_relative_difference(p.cur, w.cur);
  EXPECT_TRUE(w.prev == p.prev) << "p[n-1] differs";
  EXPECT_THROW(parts->step_planes(-1, 2), std::invalid_argument);
  EXPECT_THROW(parts->step_planes(0, nz + 1), std::invalid_argument);
}

// One Born source on a fresh state, and a few in a row while both fields step (the stream
// handoff between the two propagators: each reads the other's field while it changes).
TEST_P(RtmOps, BornSourceMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  const bool fp16 = is_fp16(GetParam());
  auto gpu = cuda::make_shot_fields(setup, GetParam(), {}, 0);
  CpuShotFields cpu(setup);
  // Born modeling: the source field is the background, the receiver field the scattered field.
  Wavefield& background = gpu->source();
  Wavefield& scattered = gpu->receiver();
  Wavefield& cpu_background = cpu.source();
  Wavefield& cpu_scattered = cpu.receiver();
  EXPECT_THROW(gpu->inject_born_source(), std::logic_error) << "no perturbation";
  const Box& box = kBoxes[1];
  const std::vector<float> m = random_signed_values(size_t(box.cells()), rng);
  gpu->set_born_perturbation(box, m);
  cpu.set_born_perturbation(box, m);

  const State s = set_random_state(background, rng), d = set_random_state(scattered, rng);
  cpu_background.set_state(s.prev, s.cur);
  cpu_scattered.set_state(d.prev, d.cur);
  gpu->inject_born_source();
  cpu.inject_born_source();
  const State g = state_of(scattered), c = state_of(cpu_scattered);
  EXPECT_EQ(g.prev, d.prev);
  const GridLayout& layout = setup.layout;
  int64_t changed_outside = 0, wrong = 0;
  for (int k = -kHalo; k < layout.nz + kHalo; ++k)
    for (int j = -kHalo; j < layout.ny + kHalo; ++j)
      for (int i = -kHalo; i < layout.nx + kHalo; ++i) {
        const size_t n = size_t(layout.index(i, j, k));
        const bool in_box = i >= box.x0 && i < box.x1 && j >= box.y0 && j < box.y1 &&
                            k >= box.z0 && k < box.z1;
        if (!in_box) {
          changed_outside += g.cur[n] != d.cur[n];
        } else if (fp16) {
          wrong += !(std::fabs(g.cur[n] - c.cur[n]) <= std::ldexp(std::fabs(c.cur[n]), -11));
        }
      }
  EXPECT_EQ(changed_outside, 0) << "cells outside the box changed";
  if (fp16) {
    EXPECT_EQ(wrong, 0) << "more than one half rounding away from the CPU";
  } else {
    const double e = max_relative_difference(g.cur, c.cur);
    std::printf("%s: Born source vs CPU, max relative difference %.3g%s\n", GetParam().c_str(), e,
                g.cur == c.cur ? " (bitwise equal)" : "");
    EXPECT_LE(e, 1e-6);
  }

  // Interleaved with steps, as born_model_one_shot runs it (float32 only: in half storage every
  // step rounds again, which the variant tests cover).
  if (!fp16) {
    for (int n = 0; n < 5; ++n) {
      scattered.step();
      cpu_scattered.step();
      gpu->inject_born_source();
      cpu.inject_born_source();
      background.step();
      cpu_background.step();
    }
    const double e = max_relative_difference(state_of(scattered).cur, state_of(cpu_scattered).cur);
    EXPECT_LE(e, 1e-5) << "Born source interleaved with steps";
  }
}

// Timing counts each kind of operation and changes no result; off again, nothing is counted.
TEST_P(RtmOps, TimingCountsOperationsAndChangesNothing) {
  SKIP_WITHOUT_GPU();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(rng);
  const Box& box = kBoxes[0];
  std::vector<State> results; // the receiver field's, untimed then timed
  std::vector<std::vector<float>> images;
  const State start_s = [&] {
    auto p = cuda::make_wavefield(setup, GetParam(), {}, 0);
    return set_random_state(*p, rng);
  }();
  const State start_r = [&] {
    auto p = cuda::make_wavefield(setup, GetParam(), {}, 0);
    return set_random_state(*p, rng);
  }();
  for (bool timed : {false, true}) {
    auto fields = cuda::make_shot_fields(setup, GetParam(), {}, 0);
    Wavefield* s = &fields->source();
    Wavefield* r = &fields->receiver();
    s->set_state(start_s.prev, start_s.cur);
    r->set_state(start_r.prev, start_r.cur);
    s->enable_timing(timed);
    r->enable_timing(timed);
    const std::unique_ptr<BoundaryStore> store = s->make_boundary_store(box, 4);
    fields->allocate_image(box);
    for (int n = 0; n < 4; ++n) {
      store->save(n);
      s->step();
      r->step();
      fields->accumulate_image(1.0f);
    }
    store->restore(2);
    const PropagatorTiming ts = s->timing(), tr = r->timing();
    if (timed) {
      EXPECT_EQ(ts.steps, 4);
      EXPECT_EQ(tr.steps, 4);
      EXPECT_GT(ts.step_ms, 0.0);
      EXPECT_GT(ts.boundary_ms, 0.0);
      EXPECT_GT(tr.imaging_ms, 0.0);
      EXPECT_EQ(ts.imaging_ms, 0.0);
      EXPECT_EQ(tr.boundary_ms, 0.0);
      // Off again: the totals stay, nothing more is counted.
      s->enable_timing(false);
      s->step();
      EXPECT_EQ(s->timing().steps, 4);
    } else {
      EXPECT_EQ(ts.steps, 0);
      EXPECT_EQ(ts.total_ms(), 0.0);
    }
    results.push_back(state_of(*r));
    images.push_back(fields->download_image());
  }
  EXPECT_EQ(results[0].cur, results[1].cur);
  EXPECT_EQ(images[0], images[1]);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, RtmOps, ::testing::ValuesIn(all_variants()),
                         [](const auto& test) { return test.param; });

// A store larger than the GPU is refused before anything is allocated, with both numbers.
TEST(RtmOpsMemory, TooLargeABoundaryStoreIsRefusedWithTheNumbers) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_wavefield(setup, "naive_32x32", {}, 0);
  // ~2^31 steps of a ring of thousands of cells: petabytes.
  try {
    gpu->make_boundary_store(kBoxes[2], 2147483647);
    FAIL() << "a petabyte boundary store was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("boundary store"), std::string::npos) << what;
    EXPECT_NE(what.find("MiB of device memory, only"), std::string::npos) << what;
    EXPECT_NE(what.find("are free"), std::string::npos) << what;
    EXPECT_NE(what.find("snapshots"), std::string::npos) << what;
  }
  // The wavefield still works afterwards (nothing half-allocated).
  const std::unique_ptr<BoundaryStore> store = gpu->make_boundary_store(kBoxes[0], 2);
  store->save(1);
  store->restore(1);
}

// Point sets and boundary stores give their device memory back when they go: many shots' worth of
// sets and stores made and dropped leave this process's device buffers where they were. (Counted
// by the device buffers, not read from the device's free memory: other tests run beside this one.)
TEST(RtmOpsMemory, PointSetsAndStoresFreeTheirDeviceMemory) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(fresh_seed());
  const PropagatorSetup setup = make_setup(rng);
  auto gpu = cuda::make_wavefield(setup, "naive_32x32", {}, 0);
  std::vector<PointStencil> points;
  for (int i = 0; i < 200; ++i) points.push_back(point_at_cell(i % kNx, (i / kNx) % kNy, 3));
  gpu->synchronize();
  const size_t before = cuda::live_device_buffer_bytes();
  for (int shot = 0; shot < 50; ++shot) {
    const std::unique_ptr<PointSet> source = gpu->add_points(points, 4000); // 3.2 MB of series
    const std::unique_ptr<BoundaryStore> store = gpu->make_boundary_store(kBoxes[0], 64);
    source->inject(shot, 1.0f);
    store->save(shot % 64);
    EXPECT_EQ(gpu->live_point_sets(), 1);
    // While they live, their memory is counted (so the check below can fail).
    EXPECT_GE(cuda::live_device_buffer_bytes(), before + size_t(200) * 4000 * sizeof(float));
  }
  gpu->synchronize();
  EXPECT_EQ(gpu->live_point_sets(), 0);
  EXPECT_EQ(cuda::live_device_buffer_bytes(), before);
}

} // namespace
} // namespace rtm
