// One grid over several ranks: the compute grid split along z into slabs (docs/parallel.md).
//
//   global plane k:   0 .............................................. nz-1
//   rank 0:           [ own planes ][ghost]
//   rank 1:                  [ghost][ own planes  ][ghost]
//   rank 2:                                [ghost][ own planes .......... ]
//
// z is the slowest axis, so a slab and its halo messages are contiguous whole planes. Each rank
// runs an ordinary wavefield (CPU or CUDA) on its own planes plus ghost planes on each side that
// has a neighbour: kHalo of them for the isotropic step, kTtiRing = 2 kHalo for the TTI step (its
// two passes of radius kHalo reach that far: docs/decomposition.md, "TTI"). The ghost planes are never computed: after each step they receive the
// neighbour's edge planes. Everything else that changes the field cell by cell (source injection,
// boundary restore, Born source, set_current) is applied to the ghost copies too, with the same
// inputs, so they stay bit-for-bit equal to the owner's cells without another exchange.
//
// A step: the own edge planes next to a neighbour first, then the halo exchange starts while the
// interior planes are computed, then the exchange completes. Each cell is computed exactly as on
// one rank, so on the CPU a decomposed run equals a single-rank run bit for bit.
//
// DecomposedWavefield wraps the backend's local wavefield (solvers/contracts/wavefield.h) and adds the halo
// exchange and the clipping of boxes and points to the slab; DecomposedShotFields wraps the
// backend's local shot fields (solvers/contracts/shot_fields.h) the same way. The drivers run on them
// unchanged. The operations that return data (download_series, download_image, copy_current,
// get_state, check_health) return the whole grid's answer on every rank of the group; they are
// collective, like every other call: all ranks of the group make the same calls in the same order.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/mpi/halo_exchange.h"
#include "solvers/contracts/physics.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

// The planes one rank owns, and its ghost planes.
struct Slab {
  int z_begin = 0, z_end = 0;     // own planes of the global grid, z_begin <= k < z_end
  int ghost_lo = 0, ghost_hi = 0; // ghost planes below and above: the ghost width where a neighbour is
  int own_planes() const { return z_end - z_begin; }
  int local_planes() const { return own_planes() + ghost_lo + ghost_hi; }
  int first_local() const { return z_begin - ghost_lo; } // global plane of local plane 0
};

// Splits nz planes into `parts` slabs as evenly as possible (the first nz % parts slabs get one
// plane more), except that with several parts the first slab owns at least first_min planes and
// the last at least last_min (the C-PML's top and bottom layers: its psi_z memory variables are
// read across planes, so no slab edge may cut them). `ghost`: the ghost width (kHalo; kTtiRing for
// TTI). Refuses (InputError, with the numbers) slabs thinner than 2 ghost planes: the edge planes
// sent each way must not overlap, and a ghost region must come from one neighbour.
std::vector<Slab> split_into_slabs(int nz, int parts, int first_min = 0, int last_min = 0,
                                   int ghost = kHalo);

// The ghost width the step of `physics` needs: its row's slab_halo_planes (kHalo; kTtiRing for
// TTI's two passes).
int slab_ghost_planes(Physics physics);

// The split of one grid over the ranks of a group, shared by the wavefields of a shot: the slabs,
// this rank's local grid, its halo plan, and the moves between global and local boxes. Collective
// to make (it duplicates the group's communicator).
class SlabDecomposition {
public:
  SlabDecomposition(const PropagatorSetup& global, MPI_Comm group);
  // The same, where each rank builds only its own slab's model term (a model read plane range by
  // plane range, docs/decomposition.md): `profiles` is the whole grid's setup less v2dt2 (layout,
  // weights, the one-dimensional damping and C-PML profiles; profiles.v2dt2 is not read), and
  // local_v2dt2(slab) returns v2dt2 on the slab's local planes (own and ghosts, dense [z][y][x]).
  // The slabs are split_into_slabs(nz, ranks, profiles.cpml.z.lo, profiles.cpml.z.hi, ghost).
  // A TTI run also passes local_tti(slab): the TTI coefficients of the slab's local planes (dense,
  // as PropagatorSetup::tti); the ghost width is then kTtiRing.
  SlabDecomposition(const PropagatorSetup& profiles, MPI_Comm group,
                    const std::function<std::vector<float>(const Slab&)>& local_v2dt2,
                    const std::function<TtiCoefficients(const Slab&)>& local_tti = {});
  ~SlabDecomposition();
  SlabDecomposition(const SlabDecomposition&) = delete;
  SlabDecomposition& operator=(const SlabDecomposition&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const GridLayout& global() const { return global_; }
  // The layout of a whole-grid field of this run: global(), or tti_layout(global()) for TTI (the
  // (p, q) planes interleaved; solvers/contracts/tti.h).
  GridLayout global_field() const;
  int ghost_planes() const { return ghost_; }
  const std::vector<Slab>& slabs() const { return slabs_; }
  const Slab& slab() const { return slab_; }
  // The local grid: same x and y, own planes plus ghosts; v2dt2 and the z profiles sliced.
  const PropagatorSetup& local_setup() const { return local_; }
  // Frees local_setup().v2dt2 once the slab's fields are made (they keep their own copy): the
  // decomposition lives as long as the fields, and the model term need not be held twice.
  void release_model_term() { std::vector<float>().swap(local_.v2dt2); }
  const HaloPlan& plan() const { return plan_; }

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

private:
  void build(const PropagatorSetup& global, MPI_Comm group,
             const std::function<std::vector<float>(const Slab&)>& local_v2dt2,
             const std::function<TtiCoefficients(const Slab&)>& local_tti);

  GridLayout global_;
  MPI_Comm comm_ = MPI_COMM_NULL; // a duplicate of the group's communicator
  int rank_ = 0, size_ = 1;
  int ghost_ = kHalo;
  std::vector<Slab> slabs_;
  Slab slab_;
  PropagatorSetup local_;
  HaloPlan plan_;
};

class DecomposedWavefield final : public Wavefield {
public:
  // Wraps `local` (a wavefield on decomposition->local_setup(), owned by the caller unless passed
  // in `owned` too) and the transport trading its planes.
  DecomposedWavefield(std::shared_ptr<const SlabDecomposition> decomposition, Wavefield& local,
                      std::unique_ptr<HaloExchange> exchange,
                      std::unique_ptr<Wavefield> owned = nullptr);

  std::string name() const override;
  const Slab& slab() const { return d_->slab(); }
  const Wavefield& local() const { return local_; }
  std::string transport_name() const { return exchange_ ? exchange_->name() : "none"; }

  void zero_state() override { local_.zero_state(); }
  // A decomposed grid steps whole (step()): it does not nest.
  void finish_step() override;
  void synchronize() override { local_.synchronize(); }
  void reverse_time() override { local_.reverse_time(); }
  FieldHealth check_health() const override;
  void enable_timing(bool on) override { local_.enable_timing(on); }
  PropagatorTiming timing() const override { return local_.timing(); }

  // Snapshots stay per slab: the own and ghost planes of the box (the ghosts are exact copies of
  // their owners' cells, so restoring them equals set_current of the whole box, bit for bit).
  std::vector<float> keep_snapshot(const Box& box) const override;
  void restore_snapshot(const Box& box, const std::vector<float>& snapshot) override;

  // For the scaling benchmark (solvers/drivers/scaling_bench.h): one step with parts left out, to time
  // each part alone. step() is run_step(true, true, true).
  void run_step(bool compute_edges, bool compute_interior, bool exchange);

private:
  void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void do_step() override { run_step(true, true, true); }
  std::unique_ptr<SnapshotStore> do_make_snapshot_store(const Box& box, int slots,
                                                         RingPrecision precision,
                                                         SnapshotPlace place) override;
  void do_step_planes(int k_begin, int k_end) override;
  PlaneSpan do_next_field_planes(int k_begin, int k_end) override;
  void do_copy_current(const Box& box, std::vector<float>& dense) const override;
  void do_set_current(const Box& box, const std::vector<float>& dense) override;
  std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) override;
  std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                         RingPrecision precision) override;

  std::shared_ptr<const SlabDecomposition> d_;
  std::unique_ptr<Wavefield> owned_; // declared before exchange_: the transport goes first
  Wavefield& local_;
  std::unique_ptr<HaloExchange> exchange_;
};

class DecomposedShotFields final : public ShotFields {
public:
  DecomposedShotFields(std::shared_ptr<const SlabDecomposition> decomposition, SlabShotFields local);

  const SlabDecomposition& decomposition() const { return *d_; }

private:
  void do_allocate_image(const Box& box) override;
  void do_accumulate_image(float weight) override;
  std::vector<float> do_download_image(bool illumination) const override;
  // This rank's own planes of the image (or illumination) box, not gathered: dense over
  // own_part(image_box()), empty where the box misses the slab's own planes. Not collective.
  std::vector<float> do_download_own_image(bool illumination) const override;
  // The reverse: this rank's own planes of both sums (a resumed migration's partial sums, read
  // by slab). Not collective.
  void do_set_own_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  // Every rank passes the whole box's arrays (a resumed migration's partial sums); each keeps its
  // own planes.
  void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void do_set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void do_inject_born_source() override;

  std::shared_ptr<const SlabDecomposition> d_;
  std::unique_ptr<ShotFields> local_; // declared first: the wrappers below refer to its fields
  DecomposedWavefield source_, receiver_;
  bool image_here_ = false; // does the image box cross this slab's own planes?
  bool born_here_ = false;  // does the Born box cross its own or ghost planes?
};

} // namespace rtm
