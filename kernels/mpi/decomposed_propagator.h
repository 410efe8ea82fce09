// One grid over several ranks: the compute grid split along z into slabs (docs/parallel.md).
//
//   global plane k:   0 .............................................. nz-1
//   rank 0:           [ own planes ][ghost]
//   rank 1:                  [ghost][ own planes  ][ghost]
//   rank 2:                                [ghost][ own planes .......... ]
//
// z is the slowest axis, so a slab and its halo messages are contiguous whole planes. Each rank
// runs an ordinary propagator (CPU or CUDA) on its own planes plus kHalo ghost planes on each side
// that has a neighbour. The ghost planes are never computed: after each step they receive the
// neighbour's edge planes. Everything else that changes the field cell by cell (source injection,
// boundary restore, Born source, set_current) is applied to the ghost copies too, with the same
// inputs, so they stay bit-for-bit equal to the owner's cells without another exchange.
//
// A step: the own edge planes next to a neighbour first, then the halo exchange starts while the
// interior planes are computed, then the exchange completes. Each cell is computed exactly as on
// one rank, so on the CPU a decomposed run equals a single-rank run bit for bit.
//
// The class implements Propagator, so the modeling and migration drivers run on it unchanged. The
// operations that return data (download_series, download_image, copy_current, get_state,
// check_health) return the whole grid's answer on every rank of the group; they are collective,
// like every other call: all ranks of the group make the same calls in the same order.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/mpi/halo_exchange.h"
#include "solvers/contracts/propagator.h"

namespace rtm {

// The planes one rank owns, and its ghost planes.
struct Slab {
  int z_begin = 0, z_end = 0;     // own planes of the global grid, z_begin <= k < z_end
  int ghost_lo = 0, ghost_hi = 0; // ghost planes below and above: kHalo where a neighbour is
  int own_planes() const { return z_end - z_begin; }
  int local_planes() const { return own_planes() + ghost_lo + ghost_hi; }
  int first_local() const { return z_begin - ghost_lo; } // global plane of local plane 0
};

// Splits nz planes into `parts` slabs as evenly as possible (the first nz % parts slabs get one
// plane more), except that with several parts the first slab owns at least first_min planes and
// the last at least last_min (the C-PML's top and bottom layers: its psi_z memory variables are
// read across planes, so no slab edge may cut them). Refuses (InputError, with the numbers) slabs
// thinner than 2 kHalo planes: the edge planes sent each way must not overlap, and a ghost region
// must come from one neighbour.
std::vector<Slab> split_into_slabs(int nz, int parts, int first_min = 0, int last_min = 0);

class DecomposedPropagator final : public Propagator {
public:
  using LocalFactory = std::function<std::unique_ptr<Propagator>(const PropagatorSetup&)>;
  using ExchangeFactory =
      std::function<std::unique_ptr<HaloExchange>(Propagator& local, const HaloPlan& plan)>;

  // `global` describes the whole grid (every rank passes the same). The group's ranks split it in
  // rank order. Collective over `group`.
  DecomposedPropagator(const PropagatorSetup& global, MPI_Comm group, const LocalFactory& make_local,
                       const ExchangeFactory& make_exchange);
  ~DecomposedPropagator() override;

  std::string name() const override;
  const GridLayout& layout() const override { return global_; }
  const Slab& slab() const { return slab_; }
  const Propagator& local() const { return *local_; }
  std::string transport_name() const { return exchange_ ? exchange_->name() : "none"; }

  void set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void zero_state() override { local_->zero_state(); }
  void step() override;
  // Whole-grid planes; used by step() for the local grid. Decomposed grids are not nested.
  void step_planes(int k_begin, int k_end) override;
  void finish_step() override;
  PlaneSpan next_field_planes(int k_begin, int k_end) override;
  void synchronize() override { local_->synchronize(); }

  int add_point_set(const std::vector<PointStencil>& points, int nt) override;
  void upload_series(int set, const std::vector<float>& series) override;
  std::vector<float> download_series(int set) const override;
  void inject(int set, int t, float scale) override { local_->inject(set, t, scale); }
  void record(int set, int t) override { local_->record(set, t); }
  FieldHealth check_health() const override;

  void reverse_time() override { local_->reverse_time(); }
  void allocate_boundary_store(const Box& box, int steps) override;
  void save_boundary(int step) override {
    if (ring_here_) local_->save_boundary(step);
  }
  void restore_boundary(int step) override {
    if (ring_here_) local_->restore_boundary(step);
  }
  void copy_current(const Box& box, std::vector<float>& dense) const override;
  void set_current(const Box& box, const std::vector<float>& dense) override;
  void allocate_image(const Box& box) override;
  void accumulate_image(const Propagator& source_field, float weight) override;
  std::vector<float> download_image() const override { return gather_image(false); }
  std::vector<float> download_illumination() const override { return gather_image(true); }
  // Every rank passes the whole box's arrays (a resumed migration's partial sums); each keeps its
  // own planes.
  void set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void inject_born_source(const Propagator& background) override;

  void enable_timing(bool on) override { local_->enable_timing(on); }
  PropagatorTiming timing() const override { return local_->timing(); }

  // For the scaling benchmark (solvers/drivers/scaling_bench.h): one step with parts left out, to time
  // each part alone. step() is run_step(true, true, true).
  void run_step(bool compute_edges, bool compute_interior, bool exchange);

private:
  // A box of global cells in local plane numbers (it may reach beyond the slab along z), and the
  // same limited to local planes [k_lo, k_hi): empty when they miss.
  Box to_local(const Box& global_box) const;
  Box clipped(const Box& global_box, int k_lo, int k_hi) const;
  Box own_part(const Box& global_box) const;   // own planes only
  Box local_part(const Box& global_box) const; // own and ghost planes
  // The planes of `part` (local_part or own_part of `box`) cut from a dense array over `box`.
  std::vector<float> planes_of(const Box& box, const Box& part, const std::vector<float>& dense) const;
  // Gathers each rank's own part of a dense box array, in z order, onto every rank.
  std::vector<float> gather_box(const Box& global_box, const std::vector<float>& own_dense) const;
  std::vector<float> gather_image(bool illumination) const;
  const DecomposedPropagator& same_kind(const Propagator& other, const char* what) const;

  GridLayout global_;
  MPI_Comm comm_ = MPI_COMM_NULL; // a duplicate of the group's communicator
  int rank_ = 0, size_ = 1;
  std::vector<Slab> slabs_;
  Slab slab_;
  std::unique_ptr<Propagator> local_;
  std::unique_ptr<HaloExchange> exchange_;
  // Per point set: which rank records each point (the one owning its lowest plane, whose ghost
  // planes hold the rest), and the set's size.
  struct PointSetInfo {
    std::vector<int> owner;
    int nt = 0;
  };
  std::vector<PointSetInfo> sets_;
  bool ring_here_ = false; // does the boundary ring cross this slab?
  Box image_box_;          // global
  bool image_here_ = false;
  Box born_box_;
  bool born_here_ = false;
};

} // namespace rtm
