// The bench's point workload on a small box, run by the CPU reference in float32 and as bfp16
// stores it (solvers/contracts/bfp16.h): the CPU twin that tests/test_bfp16.cpp measures and
// tests/test_bfp16_gpu.cpp compares the GPU kernel with. The medium and source are those of
// docs/tools/fp16_storage_emulation.cpp (2000 m/s, 10 m cells, Courant 0.3985, a 16 Hz Ricker
// delayed 1.2/f0, injected as v2dt2 w(t) / h^3 into the centre cell before each step), with the
// rigid (zero) halo of that tool and of bfp16.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_propagator.h"
#include "solvers/contracts/bfp16.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/wavefield.h"

namespace rtm::test {

struct PointWorkload {
  PropagatorSetup setup;
  PointStencil source;
  std::vector<float> series; // one value per step
  float scale = 0;           // 1 / h^3
};

inline PointWorkload bfp16_point_workload(int n, int steps) {
  const double h = 10, v = 2000, dt = 0.3985 * h / v, f0 = v / (5 * h * 2.5), t0 = 1.2 / f0;
  PointWorkload w;
  w.setup.layout = make_layout(n, n, n);
  w.setup.weights = make_laplacian_weights(h, h, h);
  w.setup.v2dt2.assign(size_t(w.setup.layout.interior_cells()), float(v * v * dt * dt));
  w.source = point_at_cell(n / 2, n / 2, n / 2);
  for (int s = 0; s < steps; ++s) {
    const double a = M_PI * f0 * (s * dt - t0);
    w.series.push_back(float((1 - 2 * a * a) * std::exp(-a * a)));
  }
  w.scale = float(1.0 / (h * h * h));
  return w;
}

// p[n] after all steps of `w` on the CPU reference; `bfp16`: both fields quantised as bfp16 stores
// them after every injection and every step (the GPU quantises the injected blocks and each new
// p[n+1]; quantising a quantised block again leaves it as it is).
inline std::vector<float> run_point_workload_on_cpu(const PointWorkload& w, bool bfp16) {
  CpuWavefield field(w.setup);
  const int steps = int(w.series.size());
  const std::unique_ptr<PointSet> source = field.add_points({w.source}, steps);
  source->upload_series(w.series);
  std::vector<float> prev, cur;
  for (int s = 0; s < steps; ++s) {
    source->inject(s, w.scale);
    if (bfp16) {
      field.get_state(prev, cur);
      bfp16::quantise_field(w.setup.layout, cur);
      field.set_state(prev, cur);
    }
    field.step();
    if (bfp16) {
      field.get_state(prev, cur);
      bfp16::quantise_field(w.setup.layout, cur); // p[n+1], now current
      field.set_state(prev, cur);
    }
  }
  field.get_state(prev, cur);
  return cur;
}

} // namespace rtm::test
