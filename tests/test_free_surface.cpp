// The free surface where docs/physics.md puts it (solvers/contracts/free_surface.h): traces of
// `rtm model --free-surface` against the image solution, the mirror plane scanned. The figures
// in docs/physics.md, "The free surface", are what these tests print.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "solvers/contracts/free_surface.h"
#include "tests/support/free_surface_shot.h"

namespace rtm {
namespace {

using test::best_plane;
using test::misfit;
using test::model_surface_shot;
using test::SurfaceShot;

void report(const SurfaceShot& s, double documented, double best) {
  std::printf("dz %4.1f m, source %4.1f m below the top row: misfit %.3f%% with the mirror at "
              "z = -dz; best plane z = %+.3f dz (misfit %.3f%%)\n",
              s.h, s.source[0], 100 * misfit(s, documented), best / s.h, 100 * misfit(s, best));
}

// The case of issue 37 at two spacings: sources at 0 m and 20 m below the top row (at 7.5 m
// cells the deeper one lies between nodes, 2.67 cells down, its sinc weights folded across the
// surface), receivers 200-300 m below. The documented surface is one cell above the top row,
// z = -dz; the traces must fit the image solution there within 1%, and the best-fitting plane
// must lie within 0.05 dz of it. (The zero halo the surface had before fitted z = -0.9 dz best
// and missed z = -dz by 10.5%: docs/physics.md.)
TEST(FreeSurface, TracesFitTheImageSolutionAcrossTheDocumentedPlane) {
  for (double h : {10.0, 7.5})
    for (double depth : {0.0, 20.0}) {
      const SurfaceShot s = model_surface_shot(h, depth);
      const double documented = -h, best = best_plane(s);
      report(s, documented, best);
      EXPECT_LT(misfit(s, documented), 0.01) << "dz " << h << ", source at " << depth << " m";
      EXPECT_NEAR(best / h, -1.0, 0.05) << "dz " << h << ", source at " << depth << " m";
    }
}

// The issue's own set-up, 40-cell layers at 10 m, and 5 m cells (docs/physics.md quotes these;
// run with --gtest_also_run_disabled_tests, about a minute).
TEST(FreeSurface, DISABLED_MeasureTheIssueCase) {
  for (double h : {10.0, 5.0})
    for (double depth : {0.0, 20.0}) {
      const SurfaceShot s = model_surface_shot(h, depth, h == 10.0 ? 40 : 20);
      report(s, -h, best_plane(s));
    }
}

// The image is what makes the surface: a field stepped once has its top halo as the
// antisymmetric image of its first rows across k = -1, and the interior cells next to the
// surface step as in a grid twice as tall holding the field and its negative image.
TEST(FreeSurface, TheHaloIsTheAntisymmetricImageAcrossPlaneMinusOne) {
  PropagatorSetup setup;
  setup.layout = make_layout(9, 7, 12);
  setup.weights = make_laplacian_weights(10, 10, 10);
  setup.v2dt2.assign(size_t(setup.layout.interior_cells()), 0.04f);
  setup.free_surface = true;
  const GridLayout& g = setup.layout;
  // A twin grid holding the field below plane -1 and its negative image above: 2 nz + 1 planes,
  // plane nz of the twin being the surface (plane -1 of the half grid).
  PropagatorSetup twin_setup = setup;
  twin_setup.free_surface = false;
  twin_setup.layout = make_layout(g.nx, g.ny, 2 * g.nz + 1);
  twin_setup.v2dt2.assign(size_t(twin_setup.layout.interior_cells()), 0.04f);
  const GridLayout& t = twin_setup.layout;
  std::vector<float> prev(size_t(g.size), 0.0f), cur(size_t(g.size), 0.0f);
  std::vector<float> twin_prev(size_t(t.size), 0.0f), twin_cur(size_t(t.size), 0.0f);
  uint32_t seed = 12345;
  auto random = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1u << 24) - 0.5f;
  };
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const float a = random(), b = random();
        prev[size_t(g.index(i, j, k))] = a;
        cur[size_t(g.index(i, j, k))] = b;
        // Half-grid plane k is twin plane nz + 1 + k; its image, twin plane nz - 1 - k.
        twin_prev[size_t(t.index(i, j, g.nz + 1 + k))] = a;
        twin_cur[size_t(t.index(i, j, g.nz + 1 + k))] = b;
        twin_prev[size_t(t.index(i, j, g.nz - 1 - k))] = -a;
        twin_cur[size_t(t.index(i, j, g.nz - 1 - k))] = -b;
      }
  // Garbage in the top halo: the mirror must not depend on it.
  for (int k = -kHalo; k < 0; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) cur[size_t(g.index(i, j, k))] = 7.0f;
  CpuWavefield field(setup), twin(twin_setup);
  field.set_state(prev, cur);
  twin.set_state(twin_prev, twin_cur);
  for (int n = 0; n < 3; ++n) {
    field.step();
    twin.step();
  }
  std::vector<float> p, q, tp, tq;
  field.get_state(p, q);
  twin.get_state(tp, tq);
  double worst = 0, largest = 0;
  // Every plane: the twin's bottom wall is the half grid's, its top one that wall's image.
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const float a = q[size_t(g.index(i, j, k))], b = tq[size_t(t.index(i, j, g.nz + 1 + k))];
        worst = std::max(worst, double(std::abs(a - b)));
        largest = std::max(largest, double(std::abs(b)));
      }
  ASSERT_GT(largest, 0.0);
  // Bit for bit: each cell's sums meet the same values (negated ones in the image) in the same order.
  EXPECT_EQ(worst, 0.0) << "the half grid steps as the twin holding the image";
  // The halo of the field stepped from last (p[n-1] now): the image of its first three rows.
  for (int k = -kHalo; k <= kFreeSurfacePlane; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const float expected = k == kFreeSurfacePlane ? 0.0f : -p[size_t(g.index(i, j, free_surface_source(k)))];
        ASSERT_EQ(p[size_t(g.index(i, j, k))], expected) << "halo cell " << i << "," << j << "," << k;
      }
}

} // namespace
} // namespace rtm
