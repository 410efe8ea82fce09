// Small RTM problems shared by the CPU and GPU tests: a model on its compute grid, a source and
// receivers located on it, and propagator pairs built by the backend options given.
#pragma once

#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/wavelet.h"

namespace rtm::test {

struct RtmProblem {
  SimulationGrid sim;
  Box box;
  int nt = 0;
  double f0 = 0;
  std::vector<float> wavelet;
  Position source{};
  std::vector<Position> receivers;
  std::vector<PointStencil> receiver_points;
};

// A three-layer model (so that the source field scatters) with absorbing layers, an off-grid
// source and a receiver line: every part of the operators is exercised.
inline RtmProblem layered_problem(int nx = 30, int ny = 20, int nz = 26, int width = 8, int nt = 160,
                                  bool free_surface = false, Absorber absorber = Absorber::cpml) {
  RtmProblem p;
  const ModelShape shape{nx, ny, nz, 10, 10, 10};
  const VelocityModel model = layered_model(shape, {80, 170}, {1800, 2400, 2900});
  BoundaryConfig boundary;
  boundary.width = width;
  boundary.free_surface = free_surface;
  boundary.absorber = absorber;
  boundary.frequency = 20;
  p.sim = make_simulation_grid(model, boundary, 0.0);
  p.box = model_box(p.sim);
  p.nt = nt;
  p.f0 = 20;
  p.wavelet = ricker_wavelet(nt, p.sim.dt, p.f0, default_ricker_delay(p.f0));
  p.source = {33.0, 0.5 * (ny - 1) * 10 + 3.0, 0.5 * (nx - 1) * 10 - 7.0};
  p.receivers = line_along_x(20.0, 0.5 * (ny - 1) * 10, 0.0, (nx - 1) * 10.0, 20.0);
  for (const Position& r : p.receivers) p.receiver_points.push_back(locate_point(p.sim, r, "receiver"));
  return p;
}

// Source and receiver propagators of one backend with the problem's point sets.
struct PropagatorPair {
  std::unique_ptr<Propagator> source_field, receiver_field;
  ShotSets sets;
};

inline PropagatorPair make_propagator_pair(const RtmProblem& p, const std::string& backend) {
  PropagatorPair pair;
  BackendOptions options;
  options.backend = backend;
  std::ostringstream log;
  const PropagatorSetup setup = make_propagator_setup(p.sim);
  pair.source_field = make_propagator(setup, options, log);
  pair.receiver_field = make_propagator(setup, options, log);
  pair.sets.nt = p.nt;
  pair.sets.source_scale = p.sim.injection_scale();
  pair.sets.source_set =
      pair.source_field->add_point_set({locate_point(p.sim, p.source, "source")}, p.nt);
  pair.source_field->upload_series(pair.sets.source_set, p.wavelet);
  pair.sets.receiver_set = pair.receiver_field->add_point_set(p.receiver_points, p.nt);
  return pair;
}

inline std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

} // namespace rtm::test
