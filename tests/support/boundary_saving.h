// Boundary saving (docs/rtm.md) measured as every backend's test measures it: a shot's source field
// run forward with its box stored at every step, then backwards from its boundary store, the two
// compared step by step (tests/test_rtm.cpp, test_rtm_gpu.cpp, test_tti.cpp, test_tti_app_gpu.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "solvers/drivers/migration.h"
#include "tests/rtm_test_problem.h"

namespace rtm::test {

struct ReconstructionNorms {
  // Per step n (0 where not visited): the L2 norms over p.box of reconstructed - forward field,
  // and of the forward field.
  std::vector<double> error, field;
  int visited = 0;         // steps the backward run visited
  bool weights_one = true; // every visit had boundary saving's weight, 1

  double worst_error() const { return *std::max_element(error.begin(), error.end()); }
  double largest_field() const { return *std::max_element(field.begin(), field.end()); }
};

// `pair`'s source field from zero over p.nt steps (inject after step, as the migration does), then
// backwards from a boundary store of p.nt - 1 steps (run_source_backwards, Reconstruction::boundary).
inline ReconstructionNorms reconstruct_source_field(const RtmProblem& p, ShotPair& pair) {
  Wavefield& S = pair.S();
  std::vector<std::vector<float>> forward(size_t(p.nt));
  S.zero_state();
  for (int n = 0; n < p.nt; ++n) {
    S.copy_current(p.box, forward[size_t(n)]);
    S.step();
    pair.source->inject(n, pair.sets.source_scale);
  }
  pair.make_boundary_store(p.box, p.nt - 1);
  ReconstructionNorms norms;
  norms.error.assign(size_t(p.nt), 0.0);
  norms.field.assign(size_t(p.nt), 0.0);
  std::vector<float> reconstructed;
  run_source_backwards(S, pair.sets, p.box, Reconstruction::boundary, 1, [&](int n, float weight) {
    ++norms.visited;
    if (weight != 1.0f) norms.weights_one = false;
    S.copy_current(p.box, reconstructed);
    const std::vector<float>& f = forward[size_t(n)];
    double diff2 = 0, norm2 = 0;
    for (size_t c = 0; c < f.size(); ++c) {
      diff2 += double(reconstructed[c] - f[c]) * (reconstructed[c] - f[c]);
      norm2 += double(f[c]) * f[c];
    }
    norms.error[size_t(n)] = std::sqrt(diff2);
    norms.field[size_t(n)] = std::sqrt(norm2);
  });
  return norms;
}

} // namespace rtm::test
