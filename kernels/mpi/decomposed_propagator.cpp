#include "kernels/mpi/decomposed_propagator.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/tti_ring.h"
#include "kernels/mpi/mpi_context.h"


namespace rtm {
namespace {

// Dense [z][y][x] planes k_begin <= k < k_end of an array over a box of nx x ny cells per plane.
std::vector<float> dense_planes(const std::vector<float>& dense, int64_t plane_cells, int k_begin,
                                int k_end) {
  return std::vector<float>(dense.begin() + k_begin * plane_cells, dense.begin() + k_end * plane_cells);
}

// The TTI coefficients of planes k_begin <= k < k_end of a whole grid's (same x and y).
TtiCoefficients tti_planes(const TtiCoefficients& c, int64_t plane_cells, int k_begin, int k_end) {
  TtiCoefficients part;
  part.e = dense_planes(c.e, plane_cells, k_begin, k_end);
  part.s = dense_planes(c.s, plane_cells, k_begin, k_end);
  part.nx = dense_planes(c.nx, plane_cells, k_begin, k_end);
  part.ny = dense_planes(c.ny, plane_cells, k_begin, k_end);
  part.nz = dense_planes(c.nz, plane_cells, k_begin, k_end);
  part.hx = c.hx;
  part.hy = c.hy;
  part.hz = c.hz;
  return part;
}

// Every rank's run of planes (`counts[r]` planes of `plane_floats` floats each, landing at plane
// `firsts[r]` of `whole`) onto every rank of `comm`: one plane is one MPI element, so counts stay
// far inside MPI's int range.
void allgather_planes(MPI_Comm comm, int64_t plane_floats, const float* mine, int my_planes,
                      const std::vector<int>& counts, const std::vector<int>& firsts, float* whole,
                      const char* what) {
  MPI_Datatype plane;
  check_mpi(MPI_Type_contiguous(int(plane_floats), MPI_FLOAT, &plane), "MPI_Type_contiguous");
  MPI_Type_commit(&plane);
  const int code = MPI_Allgatherv(mine, my_planes, plane, whole, counts.data(), firsts.data(), plane, comm);
  MPI_Type_free(&plane);
  check_mpi(code, what);
}

} // namespace

int slab_ghost_planes(Physics physics) { return physics_info(physics).slab_halo_planes; }

std::vector<Slab> split_into_slabs(int nz, int parts, int first_min, int last_min, int ghost) {
  if (parts < 1) throw InputError("split_into_slabs: need at least one part");
  const int thinnest = nz / parts;
  if (thinnest < 2 * ghost)
    throw InputError("cannot split " + std::to_string(nz) + " planes (z, absorbing layers included) "
                     "over " + std::to_string(parts) + " ranks: slabs would be " +
                     std::to_string(thinnest) + " planes thin, and each needs at least " +
                     std::to_string(2 * ghost) + " (two halo widths" +
                     (ghost != kHalo ? std::string(", the TTI step's halo being ") +
                                                std::to_string(ghost) + " planes"
                                          : std::string()) +
                     "); use at most " +
                     std::to_string(std::max(1, nz / (2 * ghost))) + " ranks per shot for this grid");
  // Planes per slab: even, except that the end slabs own at least first_min / last_min planes
  // (the C-PML's top and bottom layers) when the even share is smaller; the rest share the others.
  std::vector<int> planes(size_t(parts), 0);
  std::vector<bool> fixed(size_t(parts), false);
  if (parts > 1) {
    for (int round = 0; round < 2; ++round) {
      int free_planes = nz, free_parts = parts;
      for (int r = 0; r < parts; ++r)
        if (fixed[size_t(r)]) free_planes -= planes[size_t(r)], --free_parts;
      const int share = free_parts > 0 ? free_planes / free_parts : 0;
      for (auto [r, least] : {std::pair{0, first_min}, std::pair{parts - 1, last_min}})
        if (!fixed[size_t(r)] && least > share) {
          fixed[size_t(r)] = true;
          planes[size_t(r)] = least;
        }
    }
  }
  int free_planes = nz, free_parts = parts;
  for (int r = 0; r < parts; ++r)
    if (fixed[size_t(r)]) free_planes -= planes[size_t(r)], --free_parts;
  if (free_parts == 0 ? free_planes != 0 : free_planes < free_parts * 2 * ghost)
    throw InputError("cannot split " + std::to_string(nz) + " planes (z, absorbing layers included) "
                     "over " + std::to_string(parts) + " ranks: the first and last slabs must own "
                     "the C-PML's top and bottom layers (" + std::to_string(first_min) + " and " +
                     std::to_string(last_min) + " planes), which leaves " +
                     std::to_string(free_planes) + " planes for the other " +
                     std::to_string(free_parts) + ", each needing at least " +
                     std::to_string(2 * ghost) + "; use fewer ranks per shot, a thinner layer "
                     "(--boundary-width) or --absorber sponge");
  for (int r = 0, given = 0; r < parts; ++r)
    if (!fixed[size_t(r)]) {
      planes[size_t(r)] = free_planes / free_parts + (given < free_planes % free_parts ? 1 : 0);
      ++given;
    }
  std::vector<Slab> slabs(static_cast<size_t>(parts));
  int k = 0;
  for (int r = 0; r < parts; ++r) {
    Slab& s = slabs[size_t(r)];
    s.z_begin = k;
    s.z_end = k + planes[size_t(r)];
    s.ghost_lo = r > 0 ? ghost : 0;
    s.ghost_hi = r + 1 < parts ? ghost : 0;
    k = s.z_end;
  }
  return slabs;
}

// ---- the decomposition -------------------------------------------------------------------------

SlabDecomposition::SlabDecomposition(const PropagatorSetup& global, MPI_Comm group)
    : global_(global.layout) {
  const int64_t plane_cells = int64_t(global_.nx) * global_.ny;
  std::function<TtiCoefficients(const Slab&)> local_tti;
  if (!global.tti.empty())
    local_tti = [&](const Slab& s) {
      return tti_planes(global.tti, plane_cells, s.first_local(), s.first_local() + s.local_planes());
    };
  build(global, group,
        [&](const Slab& s) {
          return dense_planes(global.v2dt2, plane_cells, s.first_local(),
                              s.first_local() + s.local_planes());
        },
        local_tti);
}

SlabDecomposition::SlabDecomposition(const PropagatorSetup& profiles, MPI_Comm group,
                                     const std::function<std::vector<float>(const Slab&)>& local_v2dt2,
                                     const std::function<TtiCoefficients(const Slab&)>& local_tti)
    : global_(profiles.layout) {
  build(profiles, group, local_v2dt2, local_tti);
}

GridLayout SlabDecomposition::global_field() const {
  return local_.tti.empty() ? global_ : tti_layout(global_);
}

void SlabDecomposition::build(const PropagatorSetup& global, MPI_Comm group,
                              const std::function<std::vector<float>(const Slab&)>& local_v2dt2,
                              const std::function<TtiCoefficients(const Slab&)>& local_tti) {
  check_mpi(MPI_Comm_dup(group, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  ghost_ = slab_ghost_planes(local_tti ? Physics::tti : Physics::acoustic);
  try {
    // C-PML: psi_z is read across planes and lives in the top and bottom layers only, so the end
    // slabs own those layers whole (docs/decomposition.md); every other slab has no z layer.
    slabs_ = split_into_slabs(global_.nz, size_, global.cpml.z.lo, global.cpml.z.hi, ghost_);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  slab_ = slabs_[size_t(rank_)];

  // The local grid: same x and y, own planes plus ghosts; v2dt2 and the z damping profile sliced.
  PropagatorSetup& local = local_;
  local.layout = make_layout(global_.nx, global_.ny, slab_.local_planes());
  local.weights = global.weights;
  const int64_t plane_cells = int64_t(global_.nx) * global_.ny;
  const int k0 = slab_.first_local(), k1 = k0 + slab_.local_planes();
  try {
    local.v2dt2 = local_v2dt2(slab_);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  if (int64_t(local.v2dt2.size()) != plane_cells * (k1 - k0))
    throw std::logic_error("SlabDecomposition: the slab's v2dt2 has the wrong size");
  if (local_tti) {
    try {
      local.tti = local_tti(slab_);
    } catch (...) {
      MPI_Comm_free(&comm_);
      throw;
    }
    if (int64_t(local.tti.e.size()) != plane_cells * (k1 - k0))
      throw std::logic_error("SlabDecomposition: the slab's TTI coefficients have the wrong size");
  }
  if (!global.damping.empty()) {
    local.damping.x = global.damping.x;
    local.damping.y = global.damping.y;
    local.damping.z.assign(global.damping.z.begin() + k0, global.damping.z.begin() + k1);
  }
  // The surface is the grid's top halo plane: only the slab holding plane 0 has it; elsewhere the
  // planes above a slab are its neighbour's, received as ghosts.
  local.free_surface = global.free_surface && slab_.first_local() == 0;
  local.cpml = global.cpml;
  CpmlAxis& z = local.cpml.z;
  z.n = slab_.local_planes();
  z.lo = slab_.z_begin == 0 ? global.cpml.z.lo : 0;
  z.hi = slab_.z_end == global_.nz ? global.cpml.z.hi : 0;
  if (z.lo + z.hi == 0) {
    z.a.clear();
    z.b.clear();
  } else {
    z.a.assign(global.cpml.z.a.begin() + k0, global.cpml.z.a.begin() + k1);
    z.b.assign(global.cpml.z.b.begin() + k0, global.cpml.z.b.begin() + k1);
  }

  plan_.comm = comm_;
  plan_.planes = ghost_;
  const int own_end = slab_.ghost_lo + slab_.own_planes(); // local planes
  if (slab_.ghost_lo > 0) {
    plan_.rank_below = rank_ - 1;
    plan_.send_below = slab_.ghost_lo;
    plan_.recv_below = 0;
  }
  if (slab_.ghost_hi > 0) {
    plan_.rank_above = rank_ + 1;
    plan_.send_above = own_end - ghost_;
    plan_.recv_above = own_end;
  }
}

SlabDecomposition::~SlabDecomposition() {
  if (comm_ != MPI_COMM_NULL && mpi_active()) MPI_Comm_free(&comm_);
}

Box SlabDecomposition::to_local(const Box& b) const {
  Box local = b;
  local.z0 = b.z0 - slab_.first_local();
  local.z1 = b.z1 - slab_.first_local();
  return local;
}
Box SlabDecomposition::clipped(const Box& b, int k_lo, int k_hi) const {
  Box local = to_local(b);
  local.z0 = std::max(local.z0, k_lo);
  local.z1 = std::min(local.z1, k_hi);
  return local;
}
Box SlabDecomposition::own_part(const Box& b) const {
  return clipped(b, slab_.ghost_lo, slab_.ghost_lo + slab_.own_planes());
}
Box SlabDecomposition::local_part(const Box& b) const { return clipped(b, 0, slab_.local_planes()); }

std::vector<float> SlabDecomposition::planes_of(const Box& box, const Box& part,
                                                const std::vector<float>& dense) const {
  const int first = part.z0 + slab_.first_local() - box.z0; // part's first plane within the box
  return dense_planes(dense, int64_t(box.nx()) * box.ny(), first, first + part.nz());
}

std::vector<float> SlabDecomposition::gather_box(const Box& b, const std::vector<float>& own) const {
  const int64_t plane_cells = int64_t(b.nx()) * b.ny();
  std::vector<int> counts, firsts;
  for (const Slab& s : slabs_) {
    const int z0 = std::max(b.z0, s.z_begin), z1 = std::min(b.z1, s.z_end);
    counts.push_back(std::max(0, z1 - z0));
    firsts.push_back(std::max(0, z0 - b.z0));
  }
  const int mine = counts[size_t(rank_)];
  if (int64_t(own.size()) != int64_t(mine) * plane_cells)
    throw std::logic_error("SlabDecomposition::gather_box: own part has the wrong size");
  std::vector<float> whole(size_t(b.cells()));
  allgather_planes(comm_, plane_cells, own.data(), mine, counts, firsts, whole.data(),
                   "MPI_Allgatherv (box)");
  return whole;
}

// ---- the wavefield -------------------------------------------------------------------------------

DecomposedWavefield::DecomposedWavefield(std::shared_ptr<const SlabDecomposition> decomposition,
                                         Wavefield& local, std::unique_ptr<HaloExchange> exchange,
                                         std::unique_ptr<Wavefield> owned)
    : Wavefield(decomposition->global_field()), d_(std::move(decomposition)), owned_(std::move(owned)),
      local_(local), exchange_(std::move(exchange)) {
  if (!local_.layout().same_shape(d_->local_setup().layout))
    throw std::logic_error("DecomposedWavefield: the local wavefield is not on the slab's grid");
}

std::string DecomposedWavefield::name() const {
  return local_.name() + " (z-slabs over " + std::to_string(d_->size()) + " ranks, " +
         transport_name() + ")";
}

void DecomposedWavefield::do_set_state(const std::vector<float>& p_prev,
                                       const std::vector<float>& p_cur) {
  // Local and global padded planes are the same (same nx, ny): copy whole planes, local plane kl
  // from global plane first_local() + kl, for kl from -kHalo (the local halo) on.
  const GridLayout& g = local_.layout();
  const GridLayout& global = layout();
  const Slab& slab = d_->slab();
  auto slice = [&](const std::vector<float>& whole) {
    std::vector<float> part(size_t(g.size), 0.0f);
    for (int kl = -kHalo; kl < g.nz + kHalo; ++kl) {
      const int kg = slab.first_local() + kl;
      if (kg < -kHalo || kg >= global.nz + kHalo) continue;
      std::copy_n(whole.begin() + global.index(-kHalo, -kHalo, kg), global.plane,
                  part.begin() + g.index(-kHalo, -kHalo, kl));
    }
    return part;
  };
  local_.set_state(slice(p_prev), slice(p_cur));
}

void DecomposedWavefield::do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  std::vector<float> local_prev, local_cur;
  local_.get_state(local_prev, local_cur);
  const GridLayout& g = local_.layout();
  const GridLayout& global = layout();
  const Slab& slab = d_->slab();
  // Own planes of every rank, in rank order = z order, as whole padded planes; the first rank's
  // with the grid's top halo above them (the free surface's image, as one rank's state holds it).
  std::vector<int> counts, firsts;
  for (const Slab& s : d_->slabs()) {
    const int top_halo = s.z_begin == 0 ? kHalo : 0;
    counts.push_back(s.own_planes() + top_halo);
    firsts.push_back(s.z_begin + kHalo - top_halo); // planes from the global plane -kHalo
  }
  const int my_top_halo = slab.z_begin == 0 ? kHalo : 0;
  auto gather = [&](const std::vector<float>& part, std::vector<float>& whole) {
    whole.assign(size_t(global.size), 0.0f);
    allgather_planes(d_->comm(), global.plane,
                     part.data() + g.index(-kHalo, -kHalo, slab.ghost_lo - my_top_halo),
                     slab.own_planes() + my_top_halo, counts, firsts,
                     whole.data() + global.index(-kHalo, -kHalo, -kHalo), "MPI_Allgatherv (state)");
  };
  gather(local_prev, p_prev);
  gather(local_cur, p_cur);
}

// ---- the step --------------------------------------------------------------------------------

void DecomposedWavefield::run_step(bool compute_edges, bool compute_interior, bool exchange) {
  const Slab& slab = d_->slab();
  const int own_begin = slab.ghost_lo, own_end = slab.ghost_lo + slab.own_planes();
  // The edge planes are those a neighbour's ghosts copy: as many as the ghost width.
  const int interior_begin = own_begin + slab.ghost_lo;
  const int interior_end = own_end - slab.ghost_hi;
  // The edge planes beside the interior (on a GPU a stream of their own, after all of the step
  // before), their exchange behind them, the interior meanwhile: neither writes what the other
  // reads (each writes p[n+1] of its own planes and reads p[n]). The exchange's stream is the
  // beside one (kernels/cuda/halo): its finish() makes that stream wait for the ghost planes, and
  // the join the next step's work wait for both.
  local_.fork_beside();
  if (compute_edges) {
    if (slab.ghost_lo > 0) local_.step_planes_beside(own_begin, own_begin + slab.ghost_lo);
    if (slab.ghost_hi > 0) local_.step_planes_beside(own_end - slab.ghost_hi, own_end);
  }
  if (exchange) exchange_->start();
  if (compute_interior) local_.step_planes(interior_begin, interior_end);
  if (exchange) exchange_->finish();
  local_.join_beside();
  local_.finish_step();
}

void DecomposedWavefield::do_step_planes(int, int) {
  throw std::logic_error("DecomposedWavefield::step_planes: a decomposed grid steps whole "
                         "(step()); decomposed wavefields do not nest");
}
void DecomposedWavefield::finish_step() {
  throw std::logic_error("DecomposedWavefield::finish_step: see step_planes");
}
PlaneSpan DecomposedWavefield::do_next_field_planes(int, int) {
  throw std::logic_error("DecomposedWavefield::next_field_planes: see step_planes");
}

FieldHealth DecomposedWavefield::check_health() const {
  FieldHealth mine = local_.check_health();
  mine.k += d_->slab().first_local();
  const GridLayout& global = layout();
  // The worst cell of the whole grid by the same rule as one rank's (solvers/contracts/field_health.h).
  std::vector<FieldHealth> all(static_cast<size_t>(d_->size()));
  check_mpi(MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE,
                          d_->comm()),
            "MPI_Allgather (health)");
  auto cell_of = [&global](const FieldHealth& h) {
    WorstCell c;
    c.badness = health_badness(h.worst_value);
    c.cell = (int64_t(h.k) * global.ny + h.j) * global.nx + h.i;
    return c;
  };
  WorstCell worst;
  for (const FieldHealth& h : all) worst.merge(cell_of(h));
  for (const FieldHealth& h : all)
    if (cell_of(h).cell == worst.cell) return h; // (ghost copies may name it twice: equal values)
  return all.front();
}

// ---- points ------------------------------------------------------------------------------------

namespace {

// A point set of the global grid: the local set holds each point's planes on this slab; `owner`
// says which rank records each point.
class DecomposedPointSet final : public PointSet {
public:
  DecomposedPointSet(Wavefield& owner_field, std::shared_ptr<const SlabDecomposition> d,
                     std::unique_ptr<PointSet> local, std::vector<int> owner, int nt)
      : PointSet(owner_field, int(owner.size()), nt), d_(std::move(d)), local_(std::move(local)),
        owner_(std::move(owner)) {}

private:
  void do_upload_series(const std::vector<float>& series) override { local_->upload_series(series); }
  std::vector<float> do_download_series() const override {
    const std::vector<float> mine = local_->download_series();
    // Every rank's whole series, then each point's column from its owner: the owner's sum saw all
    // of the point's cells, in the single-rank order.
    std::vector<float> all(mine.size() * size_t(d_->size()));
    check_mpi(MPI_Allgather(mine.data(), int(mine.size()), MPI_FLOAT, all.data(), int(mine.size()),
                            MPI_FLOAT, d_->comm()),
              "MPI_Allgather (series)");
    const size_t npoints = owner_.size();
    std::vector<float> series(mine.size());
    for (size_t t = 0; t < size_t(nt()); ++t)
      for (size_t p = 0; p < npoints; ++p)
        series[t * npoints + p] = all[size_t(owner_[p]) * mine.size() + t * npoints + p];
    return series;
  }
  void do_inject(int t, float scale) override { local_->inject(t, scale); }
  void do_record(int t) override { local_->record(t); }

  std::shared_ptr<const SlabDecomposition> d_;
  std::unique_ptr<PointSet> local_;
  std::vector<int> owner_;
};

// The part of the global ring that crosses this slab, or nothing when it misses the slab.
class DecomposedBoundaryStore final : public BoundaryStore {
public:
  DecomposedBoundaryStore(Wavefield& owner, const Box& box, int steps,
                          std::unique_ptr<BoundaryStore> local)
      : BoundaryStore(owner, box, steps), local_(std::move(local)) {}

private:
  void do_save(int step) override {
    if (local_) local_->save(step);
  }
  void do_restore(int step) override {
    if (local_) local_->restore(step);
  }

  std::unique_ptr<BoundaryStore> local_;
};

// Snapshots of the own planes only, in the local field's store (device memory on a GPU): the
// image is summed over the own planes, and the source field is never stepped from a restored
// snapshot, so the ghost planes need none.
class DecomposedSnapshotStore final : public SnapshotStore {
public:
  DecomposedSnapshotStore(Wavefield& owner, const Box& box, int slots, RingPrecision precision,
                          SnapshotPlace place, std::unique_ptr<SnapshotStore> local)
      : SnapshotStore(owner, box, slots, precision, place), local_(std::move(local)) {}

private:
  void do_save(int slot) override {
    if (local_) local_->save(slot);
  }
  void do_restore(int slot) override {
    if (local_) local_->restore(slot);
  }

  std::unique_ptr<SnapshotStore> local_;
};

} // namespace

std::unique_ptr<SnapshotStore> DecomposedWavefield::do_make_snapshot_store(const Box& box, int slots,
                                                                          RingPrecision precision,
                                                                          SnapshotPlace place) {
  const Box part = d_->own_part(box); // in local plane numbers
  std::unique_ptr<SnapshotStore> here;
  if (!part.empty()) here = local_.make_snapshot_store(part, slots, precision, place);
  return std::make_unique<DecomposedSnapshotStore>(*this, box, slots, precision, place,
                                                   std::move(here));
}

// A point's stencil spans planes k0 .. k0 + nz - 1, at most kMaxPointTaps = 2 kHalo of them. The
// rank owning its middle plane m = k0 + (nz - 1) / 2 holds them all among its own and ghost planes
// (m - k0 <= kHalo and k0 + nz - 1 - m <= kHalo, and ghost planes reach kHalo beyond the own ones
// wherever a neighbour is), so its record() sums every cell in the single-rank order: that rank
// owns the point's series. Every rank injects into the cells it holds, ghost copies included, with
// the same arithmetic, so ghost copies stay equal to their owners' cells.
std::unique_ptr<PointSet> DecomposedWavefield::do_add_points(const std::vector<PointStencil>& points,
                                                             int nt) {
  const Slab& slab = d_->slab();
  const int first = slab.first_local(), local_nz = slab.local_planes();
  std::vector<PointStencil> local_points(points.size());
  std::vector<int> owner(points.size(), 0);
  for (size_t p = 0; p < points.size(); ++p) {
    const PointStencil& in = points[p];
    // The planes this rank holds, clipped from [k0, k0 + nz) in local plane numbers.
    PointStencil& out = local_points[p];
    out = in;
    const int lo = std::max(in.k0 - first, 0), hi = std::min(in.k0 + in.nz - first, local_nz);
    out.nz = std::max(hi - lo, 0);
    out.k0 = out.nz > 0 ? lo : 0;
    for (int c = 0; c < kMaxPointTaps; ++c) {
      const int from = lo + first - in.k0 + c; // index into in.wz
      out.wz[c] = c < out.nz ? in.wz[from] : 0.0f;
    }
    if (in.nz == 0) continue;
    const int middle = in.k0 + (in.nz - 1) / 2;
    for (int r = 0; r < d_->size(); ++r) {
      const Slab& s = d_->slabs()[size_t(r)];
      if (middle < s.z_begin || middle >= s.z_end) continue;
      if (in.k0 < s.first_local() || in.k0 + in.nz > s.first_local() + s.local_planes())
        throw std::logic_error("DecomposedWavefield::add_points: a point's planes do not fit "
                               "within one rank's own and ghost planes");
      owner[p] = r;
    }
  }
  return std::make_unique<DecomposedPointSet>(*this, d_, local_.add_points(local_points, nt),
                                              std::move(owner), nt);
}

// ---- boxes -----------------------------------------------------------------------------------

std::unique_ptr<BoundaryStore> DecomposedWavefield::do_make_boundary_store(const Box& box, int steps,
                                                                        RingPrecision precision) {
  // The whole box in local coordinates (its z faces may lie beyond this slab): the local store
  // then holds the global ring's cells on the own and ghost planes, so a restore refreshes the
  // ghost copies too.
  const Box local = d_->to_local(box);
  std::unique_ptr<BoundaryStore> here;
  if (ring_box_fits(local, local_.layout())) here = local_.make_boundary_store(local, steps, precision);
  return std::make_unique<DecomposedBoundaryStore>(*this, box, steps, std::move(here));
}

void DecomposedWavefield::do_copy_current(const Box& box, std::vector<float>& dense) const {
  std::vector<float> own;
  const Box part = d_->own_part(box);
  if (!part.empty()) local_.copy_current(part, own);
  dense = d_->gather_box(box, own);
}

void DecomposedWavefield::do_set_current(const Box& box, const std::vector<float>& dense) {
  const Box part = d_->local_part(box); // ghosts too: they stay copies of the owners' cells
  if (part.empty()) return;
  local_.set_current(part, d_->planes_of(box, part, dense));
}

std::vector<float> DecomposedWavefield::keep_snapshot(const Box& box) const {
  std::vector<float> part_values;
  const Box part = d_->local_part(box);
  if (!part.empty()) local_.copy_current(part, part_values);
  return part_values;
}

void DecomposedWavefield::restore_snapshot(const Box& box, const std::vector<float>& snapshot) {
  const Box part = d_->local_part(box);
  if (!part.empty()) local_.set_current(part, snapshot);
}

// ---- shot fields -----------------------------------------------------------------------------

DecomposedShotFields::DecomposedShotFields(std::shared_ptr<const SlabDecomposition> decomposition,
                                           SlabShotFields local)
    : d_(std::move(decomposition)), local_(std::move(local.fields)),
      source_(d_, local_->source(), std::move(local.source_exchange)),
      receiver_(d_, local_->receiver(), std::move(local.receiver_exchange)) {
  bind(source_, receiver_);
}

void DecomposedShotFields::do_allocate_image(const Box& box) {
  const Box part = d_->own_part(box);
  image_here_ = !part.empty();
  if (image_here_) local_->allocate_image(part);
}

void DecomposedShotFields::do_accumulate_image(float weight) {
  if (image_here_) local_->accumulate_image(weight);
}

std::vector<float> DecomposedShotFields::do_download_image(bool illumination) const {
  std::vector<float> own;
  if (image_here_) own = illumination ? local_->download_illumination() : local_->download_image();
  return d_->gather_box(image_box(), own);
}

std::vector<float> DecomposedShotFields::do_download_own_image(bool illumination) const {
  if (!image_here_) return {};
  return illumination ? local_->download_illumination() : local_->download_image();
}

void DecomposedShotFields::do_set_own_image(const std::vector<float>& image,
                                            const std::vector<float>& illumination) {
  if (!image_here_) {
    if (!image.empty() || !illumination.empty())
      throw std::invalid_argument("DecomposedShotFields::set_own_image: the image box misses this "
                                  "slab's own planes, yet sums were given");
    return;
  }
  local_->set_image(image, illumination); // checks the sizes against the own part
}

void DecomposedShotFields::do_set_image(const std::vector<float>& image,
                                        const std::vector<float>& illumination) {
  if (!image_here_) return;
  const Box part = d_->own_part(image_box());
  local_->set_image(d_->planes_of(image_box(), part, image),
                    d_->planes_of(image_box(), part, illumination));
}

void DecomposedShotFields::do_set_born_perturbation(const Box& box, const std::vector<float>& m) {
  const Box part = d_->local_part(box);
  born_here_ = !part.empty();
  if (born_here_) local_->set_born_perturbation(part, d_->planes_of(box, part, m));
}

void DecomposedShotFields::do_inject_born_source() {
  if (born_here_) local_->inject_born_source();
}

} // namespace rtm
