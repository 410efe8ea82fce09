// The propagator interface: one acoustic wavefield on one device, stepped in time.
//
// Plain C++ with no CUDA types: the CPU reference (kernels/cpu/cpu_propagator) and the CUDA backend
// (kernels/cuda/cuda_propagator.cu) both implement it, and the drivers in solvers/drivers/ use only this.
//
// The step (docs/physics.md), with an optional absorbing-layer damping e = eta * dt / 2 >= 0 (the
// "sponge"; the C-PML of solvers/contracts/cpml.h is instead a correction added after the undamped step):
//   p[n+1] = ( 2 p[n] - (1 - e) p[n-1] + v2dt2 * lap p[n] ) / (1 + e)
// With e = 0 (everywhere outside the absorbing layers) this is exactly the undamped step
//   p[n+1] = 2 p[n] - p[n-1] + v2dt2 * lap p[n].
// eta is separable, eta(i,j,k) = eta_x(i) + eta_y(j) + eta_z(k), so only three short
// profiles are stored, never a full damping array (it would add 4 bytes per cell per step).
// Halo cells are never written: they stay zero (a pressure-release wall outside the grid).
//
// Reverse time migration (docs/rtm.md) adds: running time backwards, saving and restoring the
// boundary ring of a box each step, copying the field in a box to and from the host, the
// imaging condition between two propagators, and the Born (linearised) source term. For
// profiling, a propagator can time its own operations (enable_timing, PropagatorTiming).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solvers/contracts/cpml.h"
#include "solvers/contracts/field_health.h"
#include "solvers/contracts/grid_layout.h"
#include "solvers/contracts/stencil.h"

namespace rtm {

// Per-axis damping profiles, e = eta * dt / 2 (dimensionless); sizes nx, ny, nz, or all empty
// for no absorbing layers.
struct DampingProfiles {
  std::vector<float> x, y, z;
  bool empty() const { return x.empty() && y.empty() && z.empty(); }
};

// A point (source or receiver) spread over a box of cells with separable weights: cell
// (i0 + a, j0 + b, k0 + c) of the compute grid (interior coordinates) gets
//   weight = wz[c] * wy[b] * wx[a],   0 <= a < nx, 0 <= b < ny, 0 <= c < nz.
// The same weights inject and sample, which keeps modeling and migration adjoint.
//
// Why separable: a Kaiser-windowed sinc of radius 4 (solvers/drivers/point_interpolation.h) touches up to
// 8 cells per axis, 512 cells in all. A flat (index, weight) list of 512 entries would be 6 KiB per
// point (and as much device memory per receiver); the three 1-D weight lists are 120 bytes. They
// also make the arithmetic cheaper (record() sums rows, then planes, then the volume) and let a
// z-slab of a decomposed grid keep the planes it holds by clipping [k0, k0 + nz).
// Trilinear points are the same thing with at most 2 cells per axis, and a point on a node is
// nx = ny = nz = 1 with weights 1.
//
// Arithmetic order (the CPU reference and the CUDA kernels follow it, so traces agree to the bit
// where the wavefields do), float32 throughout, each sum from 0 in increasing index order:
//   inject: p[cell] += (((wz[c] * wy[b]) * wx[a]) * v2dt2[cell]) * amp,   amp = scale * series
//   record: row(c, b) = sum_a wx[a] * p[cell];  plane(c) = sum_b wy[b] * row(c, b);
//           series = sum_c wz[c] * plane(c)
constexpr int kMaxPointTaps = 8; // cells per axis: twice the sinc radius

struct PointStencil {
  int i0 = 0, j0 = 0, k0 = 0; // first cell (x, y, z), interior coordinates of the compute grid
  int nx = 0, ny = 0, nz = 0; // cells along each axis, 0 .. kMaxPointTaps; 0: no cells at all
  float wx[kMaxPointTaps] = {}, wy[kMaxPointTaps] = {}, wz[kMaxPointTaps] = {};

  int64_t cells() const { return int64_t(nx) * ny * nz; }
  // Every cell inside the grid's interior (and at most kMaxPointTaps per axis)?
  bool fits(const GridLayout& g) const {
    auto axis = [](int first, int n, int size) {
      return n >= 0 && n <= kMaxPointTaps && (n == 0 || (first >= 0 && first + n <= size));
    };
    return axis(i0, nx, g.nx) && axis(j0, ny, g.ny) && axis(k0, nz, g.nz);
  }
};

// A point on cell (i, j, k) with weight 1.
inline PointStencil point_at_cell(int i, int j, int k) {
  PointStencil p;
  p.i0 = i;
  p.j0 = j;
  p.k0 = k;
  p.nx = p.ny = p.nz = 1;
  p.wx[0] = p.wy[0] = p.wz[0] = 1.0f;
  return p;
}

// A box of interior cells of the compute grid, half-open: x0 <= i < x1, y0 <= j < y1, z0 <= k < z1.
// RTM uses the model region (the grid less its absorbing layers). Dense arrays over a box are
// [z][y][x], x fastest, like every other array.
struct Box {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
  int nx() const { return x1 - x0; }
  int ny() const { return y1 - y0; }
  int nz() const { return z1 - z0; }
  int64_t cells() const { return int64_t(nx()) * ny() * nz(); }
  bool empty() const { return nx() <= 0 || ny() <= 0 || nz() <= 0; }
  bool inside(const GridLayout& g) const {
    return !empty() && x0 >= 0 && y0 >= 0 && z0 >= 0 && x1 <= g.nx && y1 <= g.ny && z1 <= g.nz;
  }
  bool operator==(const Box& o) const {
    return x0 == o.x0 && x1 == o.x1 && y0 == o.y0 && y1 == o.y1 && z0 == o.z0 && z1 == o.z1;
  }
};

// The boundary ring of a box: its cells less than kHalo cells from any of its six faces. A step
// of the cells deeper inside reads only cells of the box, so a box whose ring is restored from a
// store after each step evolves exactly as it did when the ring was saved (docs/rtm.md).
inline bool in_boundary_ring(const Box& b, int i, int j, int k) {
  return i < b.x0 + kHalo || i >= b.x1 - kHalo || j < b.y0 + kHalo || j >= b.y1 - kHalo ||
         k < b.z0 + kHalo || k >= b.z1 - kHalo;
}
inline int64_t boundary_ring_cells(const Box& b) {
  auto inner = [](int n) { return n > 2 * kHalo ? int64_t(n - 2 * kHalo) : int64_t(0); };
  return b.cells() - inner(b.nx()) * inner(b.ny()) * inner(b.nz());
}
// A box whose boundary ring a propagator can store: inside the grid along x and y; along z it may
// reach beyond the grid's planes (a z-slab of a decomposed grid stores the part of the global ring
// that crosses it, kernels/mpi/decomposed_propagator.h), as long as it overlaps them.
inline bool ring_box_fits(const Box& b, const GridLayout& g) {
  return !b.empty() && b.x0 >= 0 && b.y0 >= 0 && b.x1 <= g.nx && b.y1 <= g.ny && b.z0 < g.nz &&
         b.z1 > 0;
}
// GridLayout::index of every ring cell inside the grid, z slowest, x fastest: a gather/scatter
// list a backend can use for its boundary store (the order is the backend's own business).
inline std::vector<int64_t> boundary_ring_indices(const GridLayout& g, const Box& b) {
  std::vector<int64_t> index;
  const int k_begin = b.z0 > 0 ? b.z0 : 0, k_end = b.z1 < g.nz ? b.z1 : g.nz;
  index.reserve(size_t(boundary_ring_cells(b)));
  for (int k = k_begin; k < k_end; ++k)
    for (int j = b.y0; j < b.y1; ++j)
      for (int i = b.x0; i < b.x1; ++i)
        if (in_boundary_ring(b, i, j, k)) index.push_back(g.index(i, j, k));
  return index;
}

// Everything a propagator needs to know about the grid, fixed for its lifetime.
struct PropagatorSetup {
  GridLayout layout;
  LaplacianWeights weights;      // from the grid spacing
  std::vector<float> v2dt2;      // v^2 dt^2, dense [nz][ny][nx], interior cells only
  DampingProfiles damping;       // the sponge's profiles; empty: no sponge
  // The C-PML (solvers/contracts/cpml.h): an additive correction on the layer cells after the undamped step;
  // empty: none. A setup has the sponge or the C-PML, never both.
  CpmlProfiles cpml;
};

// Where a propagator's time went, for profiling a run (enable_timing). Milliseconds spent in each
// kind of operation: on a GPU the device time between events recorded around each operation
// (timed operations of all propagators on one device are serialised while timing is on, so the
// figures add up without counting overlapping work twice); on the CPU the wall time of the call.
// What none of these covers (host work between calls, uploads and downloads of whole fields and
// series, synchronisation, an idle device) is the caller's wall time less total_ms().
struct PropagatorTiming {
  double step_ms = 0;     // step(): the wave-step kernels
  double points_ms = 0;   // inject(), record(): point sets
  double boundary_ms = 0; // save_boundary(), restore_boundary()
  double imaging_ms = 0;  // accumulate_image()
  double box_copy_ms = 0; // copy_current(), set_current(), with their host transfers (snapshots)
  double born_ms = 0;     // inject_born_source()
  int64_t steps = 0;      // step() calls timed

  double non_step_ms() const { return points_ms + boundary_ms + imaging_ms + box_copy_ms + born_ms; }
  double total_ms() const { return step_ms + non_step_ms(); }
  PropagatorTiming& operator+=(const PropagatorTiming& o) {
    step_ms += o.step_ms;
    points_ms += o.points_ms;
    boundary_ms += o.boundary_ms;
    imaging_ms += o.imaging_ms;
    box_copy_ms += o.box_copy_ms;
    born_ms += o.born_ms;
    steps += o.steps;
    return *this;
  }
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
  virtual void step() {
    step_planes(0, layout().nz);
    finish_step();
  }
  // The step in parts, for domain decomposition (kernels/mpi/decomposed_propagator.h): step_planes
  // computes p[n+1] on planes k_begin <= k < k_end only (into the array that held p[n-1]);
  // finish_step then makes p[n+1] current. Each plane gets exactly the bits a whole step gives it.
  virtual void step_planes(int k_begin, int k_end) = 0;
  virtual void finish_step() = 0;

  // Where planes k_begin <= k < k_end of the field step_planes() writes live: whole padded planes
  // (halo rows and padding included), contiguous because z is the slowest axis. Halo exchange
  // sends a slab's edge planes from here and receives its neighbours' into the ghost planes.
  struct PlaneSpan {
    void* data = nullptr;  // host memory, or device memory of GPU `device`
    size_t bytes = 0;
    int device = -1;       // -1: host memory
  };
  virtual PlaneSpan next_field_planes(int k_begin, int k_end) = 0;
  // The CUDA stream (cudaStream_t) the propagator queues its work on; null on the CPU.
  virtual void* stream_handle() const { return nullptr; }
  // Block until queued device work is done (a no-op on the CPU).
  virtual void synchronize() {}

  // Point sets (sources, receivers) live with the propagator, each with a series buffer of
  // nt rows x points.size() columns, [t][point], so a whole run needs no host round trip.
  virtual int add_point_set(const std::vector<PointStencil>& points, int nt) = 0;
  virtual void upload_series(int set, const std::vector<float>& series) = 0;
  virtual std::vector<float> download_series(int set) const = 0;
  // p_cur[cell] += weight * v2dt2[cell] * scale * series[t][point], for each point of the set
  // (PointStencil gives the weights and the order of the arithmetic).
  virtual void inject(int set, int t, float scale) = 0;
  // series[t][point] = sum over the point's cells of weight * p_cur[cell] (in PointStencil's order).
  virtual void record(int set, int t) = 0;

  // ---- Reverse time migration (docs/rtm.md) ----------------------------------------------
  // Swaps the previous and the current field. The undamped step is symmetric in time, so after
  // this, step() computes p[n-1] = 2 p[n] - p[n+1] + v2dt2 lap p[n] from (p[n+1], p[n]): the
  // wavefield runs backwards. (Inside absorbing layers it stays damped, i.e. is not the
  // forward field; boundary saving never reads it there.) C-PML memory variables restart from
  // zero, as they do on zero_state() and set_state(): the layers absorb whatever runs into them.
  virtual void reverse_time() = 0;

  // The boundary store: `steps` slots, each holding the boundary ring (in_boundary_ring) of
  // `box` - boundary_ring_cells(box) floats - kept where the wavefield lives (device memory on
  // a GPU). Reallocating replaces the previous store; its contents start undefined. The box may
  // reach beyond the grid along z (ring_box_fits): then only the ring cells inside are stored.
  virtual void allocate_boundary_store(const Box& box, int steps) = 0;
  // Copies the ring of the current field into slot `step`, or slot `step` into the ring of the
  // current field. Any order of cells is fine as long as restore inverts save exactly.
  virtual void save_boundary(int step) = 0;
  virtual void restore_boundary(int step) = 0;

  // The current field inside `box` as a dense [z][y][x] array (host snapshots), and back.
  virtual void copy_current(const Box& box, std::vector<float>& dense) const = 0;
  virtual void set_current(const Box& box, const std::vector<float>& dense) = 0;

  // Imaging condition over `box`, with S the current field of `source_field` (a propagator of
  // the same backend and grid) and R this propagator's current field:
  //   image += weight * S * R,   illumination += weight * S * S.
  // allocate_image zeroes both; they are dense [z][y][x] arrays over the box.
  virtual void allocate_image(const Box& box) = 0;
  virtual void accumulate_image(const Propagator& source_field, float weight) = 0;
  virtual std::vector<float> download_image() const = 0;
  virtual std::vector<float> download_illumination() const = 0;
  // Replaces the image and the illumination (dense over the box of allocate_image) with saved
  // ones, so that a resumed migration accumulates onto exactly the sums it had reached
  // (solvers/drivers/migration.h). std::invalid_argument when a size differs from the box's.
  virtual void set_image(const std::vector<float>& image, const std::vector<float>& illumination) = 0;

  // Born modeling: a perturbation m, dense [z][y][x] over `box`, and its source term
  //   p_cur += v2dt2 * m * S   over the box, S the current field of `background`
  // (a propagator of the same backend and grid).
  virtual void set_born_perturbation(const Box& box, const std::vector<float>& m) = 0;
  virtual void inject_born_source(const Propagator& background) = 0;

  // ---- Profiling -------------------------------------------------------------------------
  // enable_timing(true) zeroes the counters and times every operation listed in
  // PropagatorTiming from then on; enable_timing(false) stops timing and keeps the totals.
  // Off by default: untimed operations carry no events and no synchronisation.
  virtual void enable_timing(bool on) = 0;
  // The totals so far; on a GPU this waits for the timed operations already queued.
  virtual PropagatorTiming timing() const = 0;

  // Is the current field p[n] finite, how large is it, and where is its worst cell (rules in
  // solvers/contracts/field_health.h). Drivers call it every few dozen steps (solvers/drivers/health.h), so it must be
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
