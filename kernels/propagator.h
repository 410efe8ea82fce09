// The propagator interface: one acoustic wavefield on one device, stepped in time.
//
// Plain C++ with no CUDA types: the CPU reference (solvers/cpu_propagator) and the CUDA backend
// (kernels/cuda_propagator.cu) both implement it, and the drivers in solvers/ use only this.
//
// The step (PHYSICS.md), with an optional absorbing-layer damping e = eta * dt / 2 >= 0:
//   p[n+1] = ( 2 p[n] - (1 - e) p[n-1] + v2dt2 * lap p[n] ) / (1 + e)
// With e = 0 (everywhere outside the absorbing layers) this is exactly the undamped step
//   p[n+1] = 2 p[n] - p[n-1] + v2dt2 * lap p[n].
// eta is separable, eta(i,j,k) = eta_x(i) + eta_y(j) + eta_z(k), so only three short
// profiles are stored, never a full damping array (it would add 4 bytes per cell per step).
// Halo cells are never written: they stay zero (a pressure-release wall outside the grid).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/field_health.h"
#include "kernels/grid_layout.h"
#include "kernels/stencil.h"

namespace rtm {

// Per-axis damping profiles, e = eta * dt / 2 (dimensionless); sizes nx, ny, nz, or all empty
// for no absorbing layers.
struct DampingProfiles {
  std::vector<float> x, y, z;
  bool empty() const { return x.empty() && y.empty() && z.empty(); }
};

// A point (source or receiver) spread over up to 8 cells with interpolation weights.
// The same weights inject and sample, which keeps modeling and migration adjoint.
struct PointStencil {
  int64_t index[8] = {0, 0, 0, 0, 0, 0, 0, 0}; // GridLayout::index of each cell
  float weight[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int count = 0;
};

// Everything a propagator needs to know about the grid, fixed for its lifetime.
struct PropagatorSetup {
  GridLayout layout;
  LaplacianWeights weights;      // from the grid spacing
  std::vector<float> v2dt2;      // v^2 dt^2, dense [nz][ny][nx], interior cells only
  DampingProfiles damping;       // empty: no absorbing layers
};

class Propagator {
public:
  virtual ~Propagator() = default;

  // "cpu", or "cuda/<variant>".
  virtual std::string name() const = 0;
  virtual const GridLayout& layout() const = 0;

  // Wavefield state as two arrays of layout().size floats (halo and padding included).
  virtual void set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) = 0;
  virtual void get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const = 0;
  virtual void zero_state() = 0;

  // Advance one step: afterwards the "current" field is p[n+1] and "previous" is p[n].
  virtual void step() = 0;
  // Block until queued device work is done (a no-op on the CPU).
  virtual void synchronize() {}

  // Point sets (sources, receivers) live with the propagator, each with a series buffer of
  // nt rows x points.size() columns, [t][point], so a whole run needs no host round trip.
  virtual int add_point_set(const std::vector<PointStencil>& points, int nt) = 0;
  virtual void upload_series(int set, const std::vector<float>& series) = 0;
  virtual std::vector<float> download_series(int set) const = 0;
  // p_cur[cell] += scale * weight * v2dt2[cell] * series[t][point], for each point of the set.
  virtual void inject(int set, int t, float scale) = 0;
  // series[t][point] = sum over the point's cells of weight * p_cur[cell].
  virtual void record(int set, int t) = 0;

  // Is the current field p[n] finite, how large is it, and where is its worst cell (rules in
  // kernels/field_health.h). Drivers call it every few dozen steps (solvers/health.h), so it must be
  // cheap next to a step: backends override it with a reduction where the field lives. This
  // default copies the state to the host, which is correct but slow.
  virtual FieldHealth check_health() const {
    std::vector<float> p_prev, p_cur;
    get_state(p_prev, p_cur);
    const GridLayout& g = layout();
    return field_health_of(g, p_cur.data(), worst_cell_in_planes(g, p_cur.data(), 0, g.nz));
  }
};

} // namespace rtm
