// The C-PML's one-pass GPU kernels (kernels/cuda/fields/cpml.cu) against the CPU reference (label gpu;
// each test skips where no GPU is usable).
//
// What is checked, and why it can fail:
// - Shapes and layer widths chosen for the kernels' cases: layers wider than one warp's segment
//   of the x layers (20 cells at the face, 16 further in), layers of different widths on each face,
//   faces without a layer (a free surface, an axis without layers), and interiors thinner than
//   2 kHalo, where a neighbour's psi lies in the opposite layer. The x layers take the tile kernel
//   where their interior is at least kHalo cells, the warp-segment kernel where it is thinner
//   (thin_x_interior); the y and z rows and planes of the x layers go to an instance with or
//   without the edges' terms.
// - Fresh random wavefields (halos and padding included), random C-PML coefficients in the layers,
//   a random medium; the GPU steps in plane ranges whose ends fall inside the z layers, the CPU whole
//   steps. Relative L2 of both wavefields over the interior after kSteps steps: <= 1e-5 in float32
//   (the two differ in contractions to fused multiply-adds only), <= 1e-2 for half storage (as
//   tests/test_cuda_variants.cpp argues). A cell the kernels skip, or a psi or zeta stored at the
//   wrong place, changes the next steps by O(1) of that cell and fails the bound.
// - The halo and padding of both float32 wavefields are exactly what they were.
// - The C-PML has acted: the same steps without it end far from the reference with it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/support/cuda_test_support.h"
#include "tests/support/random_medium.h"
#include "tests/support/relative_l2.h"

namespace rtm {
namespace {

constexpr int kSteps = 10;
constexpr double kFp32Tolerance = 1e-5;
constexpr double kFp16Tolerance = 1e-2;

struct CpmlCase {
  const char* name;
  int n[3];         // nx, ny, nz
  int width[3][2];  // [axis][lo, hi]
};

void PrintTo(const CpmlCase& c, std::ostream* out) { *out << c.name; }

const CpmlCase kCases[] = {
    // Every face a different width, none a multiple of anything.
    {"mixed_widths", {67, 45, 53}, {{6, 5}, {4, 7}, {5, 6}}},
    // x layers of two and three segments per side (20 + 16 + ...), the drivers' 20 on y.
    {"wide_layers", {97, 61, 58}, {{23, 37}, {20, 20}, {22, 3}}},
    // Interiors of 6, 4 and 4 cells: psi of the opposite layer within kHalo.
    {"thin_interior", {17, 15, 11}, {{5, 6}, {7, 4}, {3, 4}}},
    // An x interior of 2 cells (< kHalo): the x layers' warp-segment kernel.
    {"thin_x_interior", {13, 15, 11}, {{5, 6}, {4, 4}, {3, 4}}},
    // A free surface (no layer at z = 0) and one-sided layers on x and y.
    {"one_sided", {40, 33, 29}, {{0, 6}, {5, 0}, {0, 7}}},
    // No x layers at all.
    {"no_x_layers", {37, 31, 27}, {{0, 0}, {6, 6}, {5, 5}}},
};

PropagatorSetup make_setup(const CpmlCase& c, std::mt19937_64& rng) {
  const double h[3] = {10.0, 12.0, 8.0};
  PropagatorSetup setup = test::random_medium_setup(c.n[0], c.n[1], c.n[2], h[0], h[1], h[2], rng);
  // Half-precision values, so that half storage runs the very model of the reference.
  for (float& v : setup.v2dt2) v = test::round_to_half(v);
  std::uniform_real_distribution<float> a(-0.3f, -0.01f), b(0.7f, 0.99f);
  CpmlAxis* axes[3] = {&setup.cpml.x, &setup.cpml.y, &setup.cpml.z};
  for (int d = 0; d < 3; ++d) {
    CpmlAxis& axis = *axes[d];
    axis.n = c.n[d];
    axis.lo = c.width[d][0];
    axis.hi = c.width[d][1];
    axis.h = h[d];
    if (axis.lo + axis.hi == 0) continue; // no coefficients: no layers on this axis
    axis.a.assign(size_t(axis.n), 0.0f);
    axis.b.assign(size_t(axis.n), 0.0f);
    for (int i = 0; i < axis.n; ++i)
      if (i < axis.lo || i >= axis.n - axis.hi) {
        axis.a[size_t(i)] = a(rng);
        axis.b[size_t(i)] = b(rng);
      }
  }
  return setup;
}

// Elements outside the interior (halo and padding) that differ between a and b.
int64_t changed_outside_interior(const GridLayout& g, const std::vector<float>& a,
                                 const std::vector<float>& b) {
  std::vector<char> interior(size_t(g.size), 0);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) interior[size_t(g.index(i, j, k))] = 1;
  int64_t changed = 0;
  for (size_t n = 0; n < size_t(g.size); ++n)
    if (!interior[n] && a[n] != b[n]) ++changed;
  return changed;
}

class CpmlGpu : public ::testing::TestWithParam<CpmlCase> {};

TEST_P(CpmlGpu, StepsInPlaneRangesMatchTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const CpmlCase& c = GetParam();
  FRESH_RNG(rng);
  const PropagatorSetup setup = make_setup(c, rng);
  const GridLayout& g = setup.layout;
  const std::vector<float> prev0 = test::random_signed_values(size_t(g.size), rng);
  const std::vector<float> cur0 = test::random_signed_values(size_t(g.size), rng);

  CpuWavefield cpu(setup);
  cpu.set_state(prev0, cur0);
  for (int s = 0; s < kSteps; ++s) cpu.step();
  std::vector<float> cpu_prev, cpu_cur;
  cpu.get_state(cpu_prev, cpu_cur);

  // Plane ranges whose ends cut through the z layers and the interior.
  const int cut1 = std::min(3, g.nz), cut2 = std::max(cut1, g.nz - 2);
  const std::pair<int, int> ranges[] = {{0, cut1}, {cut1, g.nz / 2}, {g.nz / 2, cut2}, {cut2, g.nz}};
  for (const cuda::VariantRole role : {cuda::VariantRole::baseline, cuda::VariantRole::half_storage}) {
    const cuda::VariantInfo* kernel = cuda::variant_with_role(role);
    if (!kernel) continue; // a table without a half-storage kernel
    SCOPED_TRACE(kernel->name);
    const bool fp16 = kernel->element_bytes == 2;
    auto gpu = cuda::make_wavefield(setup, kernel->name, {}, 0);
    gpu->set_state(prev0, cur0);
    for (int s = 0; s < kSteps; ++s) {
      for (auto [k0, k1] : ranges)
        if (k1 > k0) gpu->step_planes(k0, k1);
      gpu->finish_step();
    }
    std::vector<float> gpu_prev, gpu_cur;
    gpu->get_state(gpu_prev, gpu_cur);
    const double tolerance = fp16 ? kFp16Tolerance : kFp32Tolerance;
    EXPECT_LE(interior_relative_l2(g, gpu_cur, cpu_cur), tolerance) << "p[n+1]";
    EXPECT_LE(interior_relative_l2(g, gpu_prev, cpu_prev), tolerance) << "p[n]";
    if (!fp16) { // half storage rounds the halo once on the way in
      // After an even number of steps the buffers are back in their places.
      static_assert(kSteps % 2 == 0, "the halo comparison pairs the buffers by parity");
      EXPECT_EQ(changed_outside_interior(g, gpu_prev, prev0), 0) << "halo or padding of p[n] changed";
      EXPECT_EQ(changed_outside_interior(g, gpu_cur, cur0), 0) << "halo or padding of p[n+1] changed";
    }
  }

  // The C-PML must have acted.
  PropagatorSetup plain_setup = setup;
  plain_setup.cpml = {};
  CpuWavefield plain(plain_setup);
  plain.set_state(prev0, cur0);
  for (int s = 0; s < kSteps; ++s) plain.step();
  std::vector<float> plain_prev, plain_cur;
  plain.get_state(plain_prev, plain_cur);
  EXPECT_GT(interior_relative_l2(g, plain_cur, cpu_cur), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Cases, CpmlGpu, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<CpmlCase>& case_info) {
                           return std::string(case_info.param.name);
                         });

} // namespace
} // namespace rtm
