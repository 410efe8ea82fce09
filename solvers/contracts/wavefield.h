// One acoustic wavefield on one device, stepped in time, and the RAII objects it hands out: point
// sets (sources, receivers) and the boundary store of reverse time migration.
//
// Plain C++ with no CUDA or MPI types: the CPU reference (kernels/cpu/cpu_propagator), the CUDA backend
// (kernels/cuda/fields/cuda_propagator.cuh) and the z-slab decomposition (kernels/mpi/decomposed_propagator.h)
// implement it; the drivers in solvers/ use only this and solvers/contracts/shot_fields.h. The step's formula
// is in solvers/contracts/propagator.h.
//
// The public methods are not virtual: they check their arguments here, once for every backend, and
// then call the private do_* hooks a backend implements (the non-virtual interface idiom), so the
// checks of the CPU and the CUDA backend cannot drift apart.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/field_probes.h"
#include "solvers/contracts/propagator.h"
#include "solvers/contracts/ring_codec.h"

namespace rtm {

class Wavefield;

// Where planes k_begin <= k < k_end of the field step_planes() writes live: whole padded planes
// (halo rows and padding included), contiguous because z is the slowest axis. Halo exchange sends a
// slab's edge planes from here and receives its neighbours' into the ghost planes.
struct PlaneSpan {
  void* data = nullptr; // host memory, or device memory of GPU `device`
  size_t bytes = 0;
  int device = -1;      // -1: host memory
};

// Points (sources or receivers) living with one wavefield, with a series buffer of nt rows x
// size() columns, [t][point], so a whole run needs no host round trip. Made by
// Wavefield::add_points; destroying it frees it (device memory too). It must not outlive its
// wavefield (a debug build asserts this in ~Wavefield).
class PointSet {
public:
  virtual ~PointSet();
  PointSet(const PointSet&) = delete;
  PointSet& operator=(const PointSet&) = delete;

  int size() const { return size_; }
  int nt() const { return nt_; }
  // nt x size() values, [t][point].
  void upload_series(const std::vector<float>& series);
  std::vector<float> download_series() const { return do_download_series(); }
  // Replaces the points (as many as the set has) and the series, for a driver that keeps its
  // point sets from shot to shot. Where the backend can it returns without waiting for the
  // device: the CUDA backend queues both copies, from pinned host memory of its own, behind the
  // work already queued on its field, so operations queued before see the old points and series
  // and those after the new ones. false (the set unchanged) where the backend cannot move its
  // points (the z-slab split, whose points belong to slabs): make a new set then.
  bool replace(const std::vector<PointStencil>& points, const std::vector<float>& series);
  // p_cur[cell] += weight * v2dt2[cell] * scale * series[t][point], for each point of the set
  // (PointStencil gives the weights and the order of the arithmetic).
  void inject(int t, float scale) {
    check_time(t, "inject");
    do_inject(t, scale);
  }
  // series[t][point] = sum over the point's cells of weight * p_cur[cell] (in PointStencil's order).
  void record(int t) {
    check_time(t, "record");
    do_record(t);
  }

protected:
  PointSet(Wavefield& owner, int size, int nt);

private:
  virtual void do_upload_series(const std::vector<float>& series) = 0;
  virtual bool do_replace(const std::vector<PointStencil>&, const std::vector<float>&) {
    return false;
  }
  virtual std::vector<float> do_download_series() const = 0;
  virtual void do_inject(int t, float scale) = 0;
  virtual void do_record(int t) = 0;
  void check_time(int t, const char* what) const;

  Wavefield& owner_;
  int size_ = 0, nt_ = 0;
};

// The boundary store of reverse time migration (docs/rtm.md): steps() slots, each holding the
// boundary ring (in_boundary_ring) of box() - boundary_ring_cells(box) floats - kept where the
// wavefield lives (device memory on a GPU). Its contents start undefined. The box may reach beyond
// the grid along z (ring_box_fits): then only the ring cells inside are stored. Made by
// Wavefield::make_boundary_store; destroying it frees the memory. It must not outlive its wavefield.
//
// An object of its own rather than state of the wavefield: it is large (a ring per time step), one
// migration sizes it once for its record length, and a forward-only run never has one; as an
// object its memory goes when the run drops it and a wavefield carries no "current store".
class BoundaryStore {
public:
  virtual ~BoundaryStore();
  BoundaryStore(const BoundaryStore&) = delete;
  BoundaryStore& operator=(const BoundaryStore&) = delete;

  const Box& box() const { return box_; }
  int steps() const { return steps_; }
  // Copies the ring of the wavefield's current field into slot `step`, or slot `step` into the
  // ring of the current field. Any order of cells is fine as long as restore inverts save exactly.
  void save(int step) {
    check_step(step, "save");
    do_save(step);
  }
  void restore(int step) {
    check_step(step, "restore");
    do_restore(step);
  }

protected:
  BoundaryStore(Wavefield& owner, const Box& box, int steps);

private:
  virtual void do_save(int step) = 0;
  virtual void do_restore(int step) = 0;
  void check_step(int step, const char* what) const;

  Wavefield& owner_;
  Box box_;
  int steps_ = 0;
};

// Where a snapshot store keeps its slots.
enum class SnapshotPlace {
  device, // with the wavefield: device memory on a GPU (host memory for the CPU backend)
  host,   // host memory (pinned on a GPU, the copies overlapped with the steps)
};
const char* snapshot_place_name(SnapshotPlace place);

// Snapshots of the source wavefield for two-sweep migration (docs/rtm.md, section 4): slots()
// slots, each holding the current field inside box() (inside the grid), coded in precision()
// (solvers/contracts/ring_codec.h, encode_rows: float32, or 16 bits with a scale per block of
// kRingBlock cells of a row of the box, to 2^-12 of each block's largest value). save(slot) copies the current
// field into a slot; restore(slot) writes a slot back into the current field inside the box (the
// cells outside keep what they held). Made by Wavefield::make_snapshot_store; destroying it frees
// the memory. It must not outlive its wavefield.
class SnapshotStore {
public:
  virtual ~SnapshotStore();
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;

  const Box& box() const { return box_; }
  int slots() const { return slots_; }
  RingPrecision precision() const { return precision_; }
  SnapshotPlace place() const { return place_; }
  void save(int slot) {
    check_slot(slot, "save");
    do_save(slot);
  }
  // A store may fetch the slot below `slot` ahead (the backward sweep's next), so restoring in
  // decreasing order is the fast order; any order gives the same values.
  void restore(int slot) {
    check_slot(slot, "restore");
    do_restore(slot);
  }

protected:
  SnapshotStore(Wavefield& owner, const Box& box, int slots, RingPrecision precision,
                SnapshotPlace place);
  Wavefield& owner() const { return owner_; }

private:
  virtual void do_save(int slot) = 0;
  virtual void do_restore(int slot) = 0;
  void check_slot(int slot, const char* what) const;

  Wavefield& owner_;
  Box box_;
  int slots_ = 0;
  RingPrecision precision_ = RingPrecision::full;
  SnapshotPlace place_ = SnapshotPlace::device;
};

class Wavefield : public HealthProbe, public TimingProbe {
public:
  ~Wavefield() override {
    // Point sets and boundary stores refer to their wavefield: they must go first.
    assert(live_point_sets_ == 0 && live_boundary_stores_ == 0 && live_snapshot_stores_ == 0);
  }
  Wavefield(const Wavefield&) = delete;
  Wavefield& operator=(const Wavefield&) = delete;

  // "cpu", "cuda/<variant>[+option]", "<local's name> x <ranks> z-slabs".
  virtual std::string name() const = 0;
  const GridLayout& layout() const { return layout_; }

  // Wavefield state as two arrays of layout().size floats (halo and padding included).
  void set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
    const auto n = size_t(layout_.size);
    if (p_prev.size() != n || p_cur.size() != n)
      throw std::invalid_argument(name() + "::set_state: arrays must have layout().size = " +
                                  std::to_string(n) + " floats, got " +
                                  std::to_string(p_prev.size()) + " and " +
                                  std::to_string(p_cur.size()));
    do_set_state(p_prev, p_cur);
  }
  void get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
    do_get_state(p_prev, p_cur);
  }
  virtual void zero_state() = 0;

  // Advance one step: afterwards the "current" field is p[n+1] and "previous" is p[n].
  void step() { do_step(); }
  // The step in parts, for domain decomposition (kernels/mpi/decomposed_propagator.h): step_planes
  // computes p[n+1] on planes k_begin <= k < k_end only (into the array that held p[n-1]);
  // finish_step then makes p[n+1] current. Each plane gets exactly the bits a whole step gives it.
  void step_planes(int k_begin, int k_end) {
    if (k_begin < 0 || k_end > layout_.nz || k_begin > k_end)
      throw std::invalid_argument(name() + "::step_planes: planes [" + std::to_string(k_begin) +
                                  ", " + std::to_string(k_end) + ") are not inside 0.." +
                                  std::to_string(layout_.nz));
    do_step_planes(k_begin, k_end);
  }
  virtual void finish_step() = 0;
  // step_planes beside the planes step_planes queues, for a split grid's edge planes
  // (kernels/mpi/decomposed_propagator.cpp): a GPU queues them on a second stream of the field, at
  // the highest priority, so that they run while the interior does. fork_beside() makes that
  // stream wait for the work queued so far, join_beside() the work queued from then on wait for
  // it; beside work may only touch planes the main stream's work between the two does not. Where
  // a backend has one stream, as here by default, the three are step_planes and nothing.
  void step_planes_beside(int k_begin, int k_end) {
    if (k_begin < 0 || k_end > layout_.nz || k_begin > k_end)
      throw std::invalid_argument(name() + "::step_planes_beside: planes [" + std::to_string(k_begin) +
                                  ", " + std::to_string(k_end) + ") are not inside 0.." +
                                  std::to_string(layout_.nz));
    do_step_planes_beside(k_begin, k_end);
  }
  virtual void fork_beside() {}
  virtual void join_beside() {}
  PlaneSpan next_field_planes(int k_begin, int k_end) {
    if (k_begin < -kHalo || k_end > layout_.nz + kHalo || k_begin > k_end)
      throw std::invalid_argument(name() + "::next_field_planes: planes outside the grid and its halo");
    return do_next_field_planes(k_begin, k_end);
  }
  // Block until queued device work is done (a no-op on the CPU).
  virtual void synchronize() {}

  // Swaps the previous and the current field. The undamped step is symmetric in time, so after
  // this, step() computes p[n-1] = 2 p[n] - p[n+1] + v2dt2 lap p[n] from (p[n+1], p[n]): the
  // wavefield runs backwards. (Inside absorbing layers it stays damped, i.e. is not the forward
  // field; boundary saving never reads it there.) C-PML memory variables restart from zero, as
  // they do on zero_state() and set_state(): the layers absorb whatever runs into them.
  virtual void reverse_time() = 0;

  // The current field inside `box` as a dense [z][y][x] array (host snapshots), and back.
  void copy_current(const Box& box, std::vector<float>& dense) const {
    check_box(box, "copy_current");
    do_copy_current(box, dense);
  }
  void set_current(const Box& box, const std::vector<float>& dense) {
    check_box(box, "set_current");
    check_box_values(box, dense.size(), "set_current");
    do_set_current(box, dense);
  }

  // A snapshot of the current field inside `box` that only restore_snapshot reads back: by
  // default the dense box (copy_current); a grid split over ranks keeps each rank's own planes
  // and ghosts only (docs/decomposition.md), so no rank holds the whole box per snapshot.
  virtual std::vector<float> keep_snapshot(const Box& box) const {
    std::vector<float> dense;
    copy_current(box, dense);
    return dense;
  }
  virtual void restore_snapshot(const Box& box, const std::vector<float>& snapshot) {
    set_current(box, snapshot);
  }

  // A point set of `points` with a series of nt steps (zeroed). Every point's cells must lie in
  // the grid (PointStencil::fits).
  std::unique_ptr<PointSet> add_points(const std::vector<PointStencil>& points, int nt) {
    if (nt <= 0) throw std::invalid_argument(name() + "::add_points: nt must be positive");
    for (size_t p = 0; p < points.size(); ++p)
      if (!points[p].fits(layout_))
        throw std::out_of_range(name() + "::add_points: the cells of point " + std::to_string(p) +
                                " leave the grid (or exceed " + std::to_string(kMaxPointTaps) +
                                " per axis)");
    return do_add_points(points, nt);
  }
  // A boundary store of `steps` rings of `box` (ring_box_fits), kept in `precision`
  // (solvers/contracts/ring_codec.h; half16: restore gives back the saved ring to 2^-12 of each
  // block's largest value).
  std::unique_ptr<BoundaryStore> make_boundary_store(const Box& box, int steps,
                                                     RingPrecision precision = RingPrecision::full) {
    if (!ring_box_fits(box, layout_))
      throw std::invalid_argument(name() + "::make_boundary_store: the box is empty, leaves the "
                                           "grid along x or y, or misses its planes");
    if (steps < 1) throw std::invalid_argument(name() + "::make_boundary_store: steps must be positive");
    return do_make_boundary_store(box, steps, precision);
  }

  // A snapshot store of `slots` snapshots of the current field inside `box` (inside the grid),
  // coded in `precision`, kept at `place`. Backends without a store of their own keep coded
  // copies of keep_snapshot's values in host memory (HostSnapshotStore below).
  std::unique_ptr<SnapshotStore> make_snapshot_store(const Box& box, int slots,
                                                     RingPrecision precision, SnapshotPlace place) {
    check_box(box, "make_snapshot_store");
    if (slots < 1) throw std::invalid_argument(name() + "::make_snapshot_store: slots must be positive");
    return do_make_snapshot_store(box, slots, precision, place);
  }

  // How many of this wavefield's point sets exist now (each shot's go when the shot drops them).
  int live_point_sets() const { return live_point_sets_; }

  // For the checks of the implementations and of ShotFields: a box of interior cells inside the
  // grid, and `values` values for it.
  void check_box(const Box& box, const char* what) const {
    if (!box.inside(layout_))
      throw std::invalid_argument(name() + "::" + what + ": the box is empty or leaves the grid");
  }
  void check_box_values(const Box& box, size_t values, const char* what) const {
    if (int64_t(values) != box.cells())
      throw std::invalid_argument(name() + "::" + what + ": expected " + std::to_string(box.cells()) +
                                  " values for the box, got " + std::to_string(values));
  }

protected:
  explicit Wavefield(const GridLayout& layout) : layout_(layout) {}

private:
  friend class PointSet;
  friend class BoundaryStore;
  friend class SnapshotStore;

  virtual void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) = 0;
  virtual void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const = 0;
  // The whole step; decomposition overrides it to overlap the halo exchange.
  virtual void do_step() {
    step_planes(0, layout_.nz);
    finish_step();
  }
  virtual void do_step_planes(int k_begin, int k_end) = 0;
  virtual void do_step_planes_beside(int k_begin, int k_end) { do_step_planes(k_begin, k_end); }
  virtual PlaneSpan do_next_field_planes(int k_begin, int k_end) = 0;
  virtual void do_copy_current(const Box& box, std::vector<float>& dense) const = 0;
  virtual void do_set_current(const Box& box, const std::vector<float>& dense) = 0;
  virtual std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) = 0;
  virtual std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                                 RingPrecision precision) = 0;
  virtual std::unique_ptr<SnapshotStore> do_make_snapshot_store(const Box& box, int slots,
                                                                 RingPrecision precision,
                                                                 SnapshotPlace place);

  GridLayout layout_;
  int live_point_sets_ = 0, live_boundary_stores_ = 0, live_snapshot_stores_ = 0;
};

// check_health the slow way: the whole state copied to the host. The reference a backend's
// reduction is tested against (tests/test_health.cpp).
inline FieldHealth host_field_health(const Wavefield& field) {
  std::vector<float> p_prev, p_cur;
  field.get_state(p_prev, p_cur);
  const GridLayout& g = field.layout();
  return field_health_of(g, p_cur.data(), worst_cell_in_planes(g, p_cur.data(), 0, g.nz));
}

// ---- inline definitions that need Wavefield complete ------------------------------------------

inline PointSet::PointSet(Wavefield& owner, int size, int nt) : owner_(owner), size_(size), nt_(nt) {
  ++owner_.live_point_sets_;
}

inline PointSet::~PointSet() { --owner_.live_point_sets_; }

inline void PointSet::upload_series(const std::vector<float>& series) {
  const size_t expected = size_t(nt_) * size_t(size_);
  if (series.size() != expected)
    throw std::invalid_argument(owner_.name() + "::upload_series: expected nt x points = " +
                                std::to_string(expected) + " values, got " +
                                std::to_string(series.size()));
  do_upload_series(series);
}

inline bool PointSet::replace(const std::vector<PointStencil>& points,
                              const std::vector<float>& series) {
  const size_t expected = size_t(nt_) * size_t(size_);
  if (points.size() != size_t(size_) || series.size() != expected)
    throw std::invalid_argument(owner_.name() + "::replace: expected " + std::to_string(size_) +
                                " points and nt x points = " + std::to_string(expected) +
                                " values, got " + std::to_string(points.size()) + " and " +
                                std::to_string(series.size()));
  return do_replace(points, series);
}

inline void PointSet::check_time(int t, const char* what) const {
  if (t < 0 || t >= nt_)
    throw std::out_of_range(owner_.name() + "::" + what + ": time index " + std::to_string(t) +
                            " outside the series (0.." + std::to_string(nt_ - 1) + ")");
}

inline BoundaryStore::BoundaryStore(Wavefield& owner, const Box& box, int steps)
    : owner_(owner), box_(box), steps_(steps) {
  ++owner_.live_boundary_stores_;
}

inline BoundaryStore::~BoundaryStore() { --owner_.live_boundary_stores_; }

inline void BoundaryStore::check_step(int step, const char* what) const {
  if (step < 0 || step >= steps_)
    throw std::out_of_range(owner_.name() + "::" + what + "_boundary: step " + std::to_string(step) +
                            " outside the store (" + std::to_string(steps_) + " steps)");
}

inline const char* snapshot_place_name(SnapshotPlace place) {
  return place == SnapshotPlace::device ? "device" : "host";
}

inline SnapshotStore::SnapshotStore(Wavefield& owner, const Box& box, int slots,
                                    RingPrecision precision, SnapshotPlace place)
    : owner_(owner), box_(box), slots_(slots), precision_(precision), place_(place) {
  ++owner_.live_snapshot_stores_;
}

inline SnapshotStore::~SnapshotStore() { --owner_.live_snapshot_stores_; }

inline void SnapshotStore::check_slot(int slot, const char* what) const {
  if (slot < 0 || slot >= slots_)
    throw std::out_of_range(owner_.name() + "::" + what + "_snapshot: slot " + std::to_string(slot) +
                            " outside the store (" + std::to_string(slots_) + " slots)");
}

// The snapshot store of a backend without one of its own: each slot the coded values of
// Wavefield::keep_snapshot (the dense box, or a rank's part of it), in host memory.
class HostSnapshotStore final : public SnapshotStore {
public:
  HostSnapshotStore(Wavefield& owner, const Box& box, int slots, RingPrecision precision)
      : SnapshotStore(owner, box, slots, precision, SnapshotPlace::host), coded_(size_t(slots)) {}

private:
  void do_save(int slot) override {
    const std::vector<float> values = owner().keep_snapshot(box());
    count_ = int64_t(values.size());
    const int64_t row = row_length();
    std::vector<char>& coded = coded_[size_t(slot)];
    coded.resize(size_t(coded_rows_bytes(row, count_ / row, precision())));
    encode_rows(values.data(), row, count_ / row, precision(), coded.data());
  }
  void do_restore(int slot) override {
    const std::vector<char>& coded = coded_[size_t(slot)];
    if (coded.empty() && count_ > 0)
      throw std::logic_error(owner().name() + "::restore_snapshot: slot " + std::to_string(slot) +
                             " was never saved");
    std::vector<float> values(static_cast<size_t>(count_));
    const int64_t row = row_length();
    decode_rows(coded.data(), row, count_ / row, precision(), values.data());
    owner().restore_snapshot(box(), values);
  }
  // keep_snapshot's values are rows of the box along x (the whole box, or a rank's planes of it).
  int64_t row_length() const { return box().nx() > 0 ? box().nx() : 1; }

  std::vector<std::vector<char>> coded_;
  int64_t count_ = 0; // values per slot (keep_snapshot's)
};

inline std::unique_ptr<SnapshotStore> Wavefield::do_make_snapshot_store(const Box& box, int slots,
                                                                        RingPrecision precision,
                                                                        SnapshotPlace) {
  return std::make_unique<HostSnapshotStore>(*this, box, slots, precision);
}

} // namespace rtm
