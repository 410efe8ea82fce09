// Small RTM problems shared by the CPU and GPU tests: a model on its compute grid, a source and
// receivers located on it, and shot fields built by the backend options given.
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

// A shot's source and receiver fields of one backend with the problem's point sets (the source's
// wavelet uploaded) and, once make_boundary_store is called, the source field's boundary store.
struct ShotPair {
  std::unique_ptr<ShotFields> fields; // first: the point sets and the store go before it
  std::unique_ptr<PointSet> source, receivers;
  std::unique_ptr<BoundaryStore> boundary;
  std::unique_ptr<SnapshotStore> snapshots;
  ShotSets sets;

  Wavefield& S() { return fields->source(); }
  Wavefield& R() { return fields->receiver(); }
  void make_boundary_store(const Box& box, int steps) {
    boundary = fields->source().make_boundary_store(box, steps);
    sets.boundary = boundary.get();
  }
  void make_snapshot_store(const Box& box, int slots, RingPrecision precision, SnapshotPlace place) {
    snapshots = fields->source().make_snapshot_store(box, slots, precision, place);
    sets.snapshots = snapshots.get();
  }
};

inline ShotPair make_shot_pair(const RtmProblem& p, std::unique_ptr<ShotFields> fields) {
  ShotPair pair;
  pair.fields = std::move(fields);
  pair.sets.nt = p.nt;
  pair.sets.source_scale = p.sim.injection_scale();
  pair.source = pair.fields->source().add_points({locate_point(p.sim, p.source, "source")}, p.nt);
  pair.source->upload_series(p.wavelet);
  pair.receivers = pair.fields->receiver().add_points(p.receiver_points, p.nt);
  pair.sets.source = pair.source.get();
  pair.sets.receiver = pair.receivers.get();
  return pair;
}

inline ShotPair make_shot_pair(const RtmProblem& p, const std::string& backend) {
  BackendOptions options;
  options.backend = backend;
  std::ostringstream log;
  return make_shot_pair(p, make_shot_fields(make_propagator_setup(p.sim), options, log));
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
