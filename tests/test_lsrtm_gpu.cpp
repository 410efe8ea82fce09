// Least-squares RTM on the CUDA backend (label gpu): the problem of tests/test_lsrtm.cpp, its data
// modelled on the CPU, inverted on the GPU and on the CPU; the residual per iteration and the model
// agree, and the residual falls every iteration on the GPU too.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "solvers/drivers/lsrtm.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/lsrtm_problem.h"
#include "tests/support/relative_l2.h"

namespace rtm {

TEST(LsrtmGpu, ResidualsAndModelMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const test::Problem& p = test::problem();
  LsrtmParams params = p.params;
  params.iterations = 5;
  std::ostringstream log;
  const LsrtmResult cpu = lsrtm_shots(p.background, p.data, params, log);
  params.migration.backend.backend = "cuda";
  const LsrtmResult gpu = lsrtm_shots(p.background, p.data, params, log);
  ASSERT_EQ(gpu.residual_norm.size(), cpu.residual_norm.size());
  for (size_t k = 0; k < gpu.residual_norm.size(); ++k) {
    std::printf("iteration %zu: residual GPU %.7g, CPU %.7g\n", k, gpu.residual_norm[k],
                cpu.residual_norm[k]);
    EXPECT_NEAR(gpu.residual_norm[k], cpu.residual_norm[k], 1e-4 * cpu.residual_norm[0]);
    if (k > 0) {
      EXPECT_LT(gpu.residual_norm[k], gpu.residual_norm[k - 1]);
    }
  }
  const double model_l2 = relative_l2(gpu.model, cpu.model);
  std::printf("model: relative L2 GPU against CPU %.2e; correlation with m_true GPU %.4f, CPU %.4f\n",
              model_l2, test::cosine(gpu.model, p.truth), test::cosine(cpu.model, p.truth));
  EXPECT_LT(model_l2, 1e-3);
}

} // namespace rtm
