// CudaWavefield::check_health (kernels/cuda/fields/health.cu) against the CPU reference's, for every variant
// (float32 and half storage): same finiteness, same worst value, same cell, on shapes that are
// multiples of no block size, with NaN in the halo and padding that must not be seen; and an
// unstable run on the GPU is stopped like on the CPU. Label gpu: skips where no GPU is usable.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cpu/cpu_propagator.h"
#include "solvers/drivers/health.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/cuda_test_support.h"

namespace rtm {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Planted {
  int i, j, k;
  float value; // representable in half precision, so both storages hold it exactly
};

PropagatorSetup setup_for(int nx, int ny, int nz) {
  PropagatorSetup s;
  s.layout = make_layout(nx, ny, nz);
  s.weights = make_laplacian_weights(10, 10, 10);
  s.v2dt2.assign(size_t(s.layout.interior_cells()), 0.1f);
  return s;
}

void expect_same_health(const std::string& variant, int nx, int ny, int nz,
                        const std::vector<Planted>& planted) {
  SCOPED_TRACE(variant + " on " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
               std::to_string(nz));
  const PropagatorSetup setup = setup_for(nx, ny, nz);
  const GridLayout& g = setup.layout;
  std::vector<float> field(size_t(g.size), kNaN); // halo and padding: must not be seen
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) field[size_t(g.index(i, j, k))] = ((i + 2 * j + k) % 7) * 0.25f - 0.75f;
  for (const Planted& p : planted) field[size_t(g.index(p.i, p.j, p.k))] = p.value;
  const std::vector<float> previous(size_t(g.size), kNaN); // p[n-1]: must not be seen either

  CpuWavefield cpu(setup);
  cpu.set_state(previous, field);
  const FieldHealth expected = cpu.check_health();
  auto gpu = cuda::make_wavefield(setup, variant, cuda::MemoryOptions{}, 0);
  gpu->set_state(previous, field);
  const FieldHealth got = gpu->check_health();

  EXPECT_EQ(got.finite, expected.finite);
  if (std::isnan(expected.worst_value))
    EXPECT_TRUE(std::isnan(got.worst_value));
  else
    EXPECT_EQ(got.worst_value, expected.worst_value);
  EXPECT_EQ(got.i, expected.i);
  EXPECT_EQ(got.j, expected.j);
  EXPECT_EQ(got.k, expected.k);
}

TEST(CudaHealth, EveryVariantFindsTheSameWorstCellAsTheCpu) {
  SKIP_WITHOUT_GPU();
  // Every variant with a value per cell; the block floating point ones (no halo values, a value
  // per block when not finite) have their own health test (tests/test_bfp16_gpu.cpp).
  for (const std::string& name : test::all_variants()) {
    // Nothing planted: the largest value 0.75 occurs many times; the lowest index must win.
    expect_same_health(name, 67, 45, 53, {});
    expect_same_health(name, 67, 45, 53, {{66, 44, 52, -1000.0f}, {3, 40, 1, 999.0f}});
    expect_same_health(name, 67, 45, 53, {{10, 20, 30, 1000.0f}, {5, 20, 30, -1000.0f}});
    expect_same_health(name, 67, 45, 53, {{1, 2, 3, kInf}, {60, 40, 50, -kInf}});
    expect_same_health(name, 67, 45, 53, {{1, 2, 3, kInf}, {60, 40, 50, kNaN}});
    expect_same_health(name, 3, 2, 5, {{2, 1, 4, -kInf}}); // smaller than any block
  }
}

TEST(CudaHealth, UnstableRunOnTheGpuIsStopped) {
  SKIP_WITHOUT_GPU();
  const double h = 10, v = 2000, dt = 1.5 * cfl_dt_limit(v, h, h, h);
  PropagatorSetup setup = setup_for(40, 40, 40);
  std::fill(setup.v2dt2.begin(), setup.v2dt2.end(), float(v * v * dt * dt));
  auto gpu = cuda::make_wavefield(setup, "naive_32x32", cuda::MemoryOptions{}, 0);
  const PointStencil point = point_at_cell(20, 20, 20);
  const int nt = 300;
  const std::unique_ptr<PointSet> source = gpu->add_points({point}, nt);
  const std::unique_ptr<PointSet> receiver = gpu->add_points({point}, nt);
  const std::vector<float> wavelet = ricker_wavelet(nt, dt, 25.0, default_ricker_delay(25.0));
  source->upload_series(wavelet);
  const float scale = float(1.0 / (h * h * h));
  HealthCheck check;
  check.dt = dt;
  check.runaway_limit = runaway_limit(injected_amplitude(wavelet, scale, v * v * dt * dt), 0.0, nt);
  try {
    model_one_shot(*gpu, scale, *source, *receiver, 1, nt, &check, "gpu shot");
    ADD_FAILURE() << "the unstable run was not stopped";
  } catch (const NumericalInstability& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("gpu shot: numerical instability: after step 50 of 300"));
  }
}

} // namespace
} // namespace rtm
