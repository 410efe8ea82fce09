#include "kernels/mpi/decomposed_propagator.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "solvers/contracts/errors.h"
#include "kernels/mpi/mpi_context.h"

namespace rtm {
namespace {

// Dense [z][y][x] planes k_begin <= k < k_end of an array over a box of nx x ny cells per plane.
std::vector<float> dense_planes(const std::vector<float>& dense, int64_t plane_cells, int k_begin,
                                int k_end) {
  return std::vector<float>(dense.begin() + k_begin * plane_cells, dense.begin() + k_end * plane_cells);
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

std::vector<Slab> split_into_slabs(int nz, int parts, int first_min, int last_min) {
  if (parts < 1) throw InputError("split_into_slabs: need at least one part");
  const int thinnest = nz / parts;
  if (thinnest < 2 * kHalo)
    throw InputError("cannot split " + std::to_string(nz) + " planes (z, absorbing layers included) "
                     "over " + std::to_string(parts) + " ranks: slabs would be " +
                     std::to_string(thinnest) + " planes thin, and each needs at least " +
                     std::to_string(2 * kHalo) + " (two halo widths); use at most " +
                     std::to_string(std::max(1, nz / (2 * kHalo))) + " ranks per shot for this grid");
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
  if (free_parts == 0 ? free_planes != 0 : free_planes < free_parts * 2 * kHalo)
    throw InputError("cannot split " + std::to_string(nz) + " planes (z, absorbing layers included) "
                     "over " + std::to_string(parts) + " ranks: the first and last slabs must own "
                     "the C-PML's top and bottom layers (" + std::to_string(first_min) + " and " +
                     std::to_string(last_min) + " planes), which leaves " +
                     std::to_string(free_planes) + " planes for the other " +
                     std::to_string(free_parts) + ", each needing at least " +
                     std::to_string(2 * kHalo) + "; use fewer ranks per shot, a thinner layer "
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
    s.ghost_lo = r > 0 ? kHalo : 0;
    s.ghost_hi = r + 1 < parts ? kHalo : 0;
    k = s.z_end;
  }
  return slabs;
}

DecomposedPropagator::DecomposedPropagator(const PropagatorSetup& global, MPI_Comm group,
                                           const LocalFactory& make_local,
                                           const ExchangeFactory& make_exchange)
    : global_(global.layout) {
  check_mpi(MPI_Comm_dup(group, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // C-PML: psi_z is read across planes and lives in the top and bottom layers only, so the end
  // slabs own those layers whole (docs/decomposition.md); every other slab has no z layer.
  slabs_ = split_into_slabs(global_.nz, size_, global.cpml.z.lo, global.cpml.z.hi);
  slab_ = slabs_[size_t(rank_)];

  // The local grid: same x and y, own planes plus ghosts; v2dt2 and the z damping profile sliced.
  PropagatorSetup local;
  local.layout = make_layout(global_.nx, global_.ny, slab_.local_planes());
  local.weights = global.weights;
  const int64_t plane_cells = int64_t(global_.nx) * global_.ny;
  const int k0 = slab_.first_local(), k1 = k0 + slab_.local_planes();
  local.v2dt2 = dense_planes(global.v2dt2, plane_cells, k0, k1);
  if (!global.damping.empty()) {
    local.damping.x = global.damping.x;
    local.damping.y = global.damping.y;
    local.damping.z.assign(global.damping.z.begin() + k0, global.damping.z.begin() + k1);
  }
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
  local_ = make_local(local);

  HaloPlan plan;
  plan.comm = comm_;
  const int own_end = slab_.ghost_lo + slab_.own_planes(); // local planes
  if (slab_.ghost_lo > 0) {
    plan.rank_below = rank_ - 1;
    plan.send_below = slab_.ghost_lo;
    plan.recv_below = 0;
  }
  if (slab_.ghost_hi > 0) {
    plan.rank_above = rank_ + 1;
    plan.send_above = own_end - kHalo;
    plan.recv_above = own_end;
  }
  exchange_ = make_exchange(*local_, plan);
}

DecomposedPropagator::~DecomposedPropagator() {
  exchange_.reset(); // before the communicator and the fields it refers to
  local_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::string DecomposedPropagator::name() const {
  return local_->name() + " (z-slabs over " + std::to_string(size_) + " ranks, " +
         transport_name() + ")";
}

// ---- state ---------------------------------------------------------------------------------

void DecomposedPropagator::set_state(const std::vector<float>& p_prev,
                                     const std::vector<float>& p_cur) {
  if (int64_t(p_prev.size()) != global_.size || int64_t(p_cur.size()) != global_.size)
    throw std::invalid_argument("DecomposedPropagator::set_state: arrays must have layout().size floats");
  // Local and global padded planes are the same (same nx, ny): copy whole planes, local plane kl
  // from global plane first_local() + kl, for kl from -kHalo (the local halo) on.
  const GridLayout& g = local_->layout();
  auto slice = [&](const std::vector<float>& whole) {
    std::vector<float> part(size_t(g.size), 0.0f);
    for (int kl = -kHalo; kl < g.nz + kHalo; ++kl) {
      const int kg = slab_.first_local() + kl;
      if (kg < -kHalo || kg >= global_.nz + kHalo) continue;
      std::copy_n(whole.begin() + global_.index(-kHalo, -kHalo, kg), global_.plane,
                  part.begin() + g.index(-kHalo, -kHalo, kl));
    }
    return part;
  };
  local_->set_state(slice(p_prev), slice(p_cur));
}

void DecomposedPropagator::get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  std::vector<float> local_prev, local_cur;
  local_->get_state(local_prev, local_cur);
  const GridLayout& g = local_->layout();
  // Own planes of every rank, in rank order = z order, as whole padded planes.
  std::vector<int> counts, firsts;
  for (const Slab& s : slabs_) {
    counts.push_back(s.own_planes());
    firsts.push_back(s.z_begin);
  }
  auto gather = [&](const std::vector<float>& part, std::vector<float>& whole) {
    whole.assign(size_t(global_.size), 0.0f);
    allgather_planes(comm_, global_.plane, part.data() + g.index(-kHalo, -kHalo, slab_.ghost_lo),
                     slab_.own_planes(), counts, firsts, whole.data() + global_.index(-kHalo, -kHalo, 0),
                     "MPI_Allgatherv (state)");
  };
  gather(local_prev, p_prev);
  gather(local_cur, p_cur);
}

// ---- the step --------------------------------------------------------------------------------

void DecomposedPropagator::step() { run_step(true, true, true); }

void DecomposedPropagator::run_step(bool compute_edges, bool compute_interior, bool exchange) {
  const int own_begin = slab_.ghost_lo, own_end = slab_.ghost_lo + slab_.own_planes();
  const int interior_begin = own_begin + (slab_.ghost_lo > 0 ? kHalo : 0);
  const int interior_end = own_end - (slab_.ghost_hi > 0 ? kHalo : 0);
  if (compute_edges) {
    if (slab_.ghost_lo > 0) local_->step_planes(own_begin, own_begin + kHalo);
    if (slab_.ghost_hi > 0) local_->step_planes(own_end - kHalo, own_end);
  }
  // The exchange of the edge planes runs while the interior is computed.
  if (exchange) exchange_->start();
  if (compute_interior) local_->step_planes(interior_begin, interior_end);
  if (exchange) exchange_->finish();
  local_->finish_step();
}

void DecomposedPropagator::step_planes(int, int) {
  throw std::logic_error("DecomposedPropagator::step_planes: a decomposed grid steps whole "
                         "(step()); decomposed propagators do not nest");
}
void DecomposedPropagator::finish_step() {
  throw std::logic_error("DecomposedPropagator::finish_step: see step_planes");
}
Propagator::PlaneSpan DecomposedPropagator::next_field_planes(int, int) {
  throw std::logic_error("DecomposedPropagator::next_field_planes: see step_planes");
}


// ---- points ------------------------------------------------------------------------------------

// A point's stencil spans planes k0 .. k0 + nz - 1, at most kMaxPointTaps = 2 kHalo of them. The
// rank owning its middle plane m = k0 + (nz - 1) / 2 holds them all among its own and ghost planes
// (m - k0 <= kHalo and k0 + nz - 1 - m <= kHalo, and ghost planes reach kHalo beyond the own ones
// wherever a neighbour is), so its record() sums every cell in the single-rank order: that rank
// owns the point's series. Every rank injects into the cells it holds, ghost copies included, with
// the same arithmetic, so ghost copies stay equal to their owners' cells.
int DecomposedPropagator::add_point_set(const std::vector<PointStencil>& points, int nt) {
  const int first = slab_.first_local(), local_nz = slab_.local_planes();
  std::vector<PointStencil> local_points(points.size());
  PointSetInfo info;
  info.nt = nt;
  info.owner.assign(points.size(), 0);
  for (size_t p = 0; p < points.size(); ++p) {
    const PointStencil& in = points[p];
    if (!in.fits(global_))
      throw std::out_of_range("DecomposedPropagator::add_point_set: a point's cells leave the grid");
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
    for (int r = 0; r < size_; ++r) {
      const Slab& s = slabs_[size_t(r)];
      if (middle < s.z_begin || middle >= s.z_end) continue;
      if (in.k0 < s.first_local() || in.k0 + in.nz > s.first_local() + s.local_planes())
        throw std::logic_error("DecomposedPropagator::add_point_set: a point's planes do not fit "
                               "within one rank's own and ghost planes");
      info.owner[p] = r;
    }
  }
  const int set = local_->add_point_set(local_points, nt);
  if (set != int(sets_.size()))
    throw std::logic_error("DecomposedPropagator: point sets out of step with the local propagator");
  sets_.push_back(std::move(info));
  return set;
}

void DecomposedPropagator::upload_series(int set, const std::vector<float>& series) {
  local_->upload_series(set, series);
}

std::vector<float> DecomposedPropagator::download_series(int set) const {
  if (set < 0 || set >= int(sets_.size()))
    throw std::out_of_range("DecomposedPropagator::download_series: no such point set");
  const std::vector<float> mine = local_->download_series(set);
  // Every rank's whole series, then each point's column from its owner: the owner's sum saw all
  // of the point's cells, in the single-rank order.
  std::vector<float> all(mine.size() * size_t(size_));
  check_mpi(MPI_Allgather(mine.data(), int(mine.size()), MPI_FLOAT, all.data(), int(mine.size()),
                          MPI_FLOAT, comm_),
            "MPI_Allgather (series)");
  const std::vector<int>& owner = sets_[size_t(set)].owner;
  const size_t npoints = owner.size();
  std::vector<float> series(mine.size());
  for (size_t t = 0; t < size_t(sets_[size_t(set)].nt); ++t)
    for (size_t p = 0; p < npoints; ++p)
      series[t * npoints + p] = all[size_t(owner[p]) * mine.size() + t * npoints + p];
  return series;
}

FieldHealth DecomposedPropagator::check_health() const {
  FieldHealth mine = local_->check_health();
  mine.k += slab_.first_local();
  // The worst cell of the whole grid by the same rule as one rank's (solvers/contracts/field_health.h).
  std::vector<FieldHealth> all(static_cast<size_t>(size_));
  check_mpi(MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE,
                          comm_),
            "MPI_Allgather (health)");
  auto cell_of = [this](const FieldHealth& h) {
    WorstCell c;
    c.badness = health_badness(h.worst_value);
    c.cell = (int64_t(h.k) * global_.ny + h.j) * global_.nx + h.i;
    return c;
  };
  WorstCell worst;
  for (const FieldHealth& h : all) worst.merge(cell_of(h));
  for (const FieldHealth& h : all)
    if (cell_of(h).cell == worst.cell) return h; // (ghost copies may name it twice: equal values)
  return all.front();
}

// ---- boxes -----------------------------------------------------------------------------------

Box DecomposedPropagator::to_local(const Box& b) const {
  Box local = b;
  local.z0 = b.z0 - slab_.first_local();
  local.z1 = b.z1 - slab_.first_local();
  return local;
}
Box DecomposedPropagator::clipped(const Box& b, int k_lo, int k_hi) const {
  Box local = to_local(b);
  local.z0 = std::max(local.z0, k_lo);
  local.z1 = std::min(local.z1, k_hi);
  return local;
}
Box DecomposedPropagator::own_part(const Box& b) const {
  return clipped(b, slab_.ghost_lo, slab_.ghost_lo + slab_.own_planes());
}
Box DecomposedPropagator::local_part(const Box& b) const { return clipped(b, 0, slab_.local_planes()); }

std::vector<float> DecomposedPropagator::planes_of(const Box& box, const Box& part,
                                                   const std::vector<float>& dense) const {
  const int first = part.z0 + slab_.first_local() - box.z0; // part's first plane within the box
  return dense_planes(dense, int64_t(box.nx()) * box.ny(), first, first + part.nz());
}

void DecomposedPropagator::allocate_boundary_store(const Box& box, int steps) {
  if (!box.inside(global_))
    throw std::invalid_argument("DecomposedPropagator::allocate_boundary_store: the box is empty or leaves the grid");
  // The whole box in local coordinates (its z faces may lie beyond this slab): the local store
  // then holds the global ring's cells on the own and ghost planes, so a restore refreshes the
  // ghost copies too.
  const Box local = to_local(box);
  ring_here_ = ring_box_fits(local, local_->layout()); // false: the box misses this slab
  if (ring_here_) local_->allocate_boundary_store(local, steps);
}

std::vector<float> DecomposedPropagator::gather_box(const Box& b, const std::vector<float>& own) const {
  const int64_t plane_cells = int64_t(b.nx()) * b.ny();
  std::vector<int> counts, firsts;
  for (const Slab& s : slabs_) {
    const int z0 = std::max(b.z0, s.z_begin), z1 = std::min(b.z1, s.z_end);
    counts.push_back(std::max(0, z1 - z0));
    firsts.push_back(std::max(0, z0 - b.z0));
  }
  const int mine = counts[size_t(rank_)];
  if (int64_t(own.size()) != int64_t(mine) * plane_cells)
    throw std::logic_error("DecomposedPropagator::gather_box: own part has the wrong size");
  std::vector<float> whole(size_t(b.cells()));
  allgather_planes(comm_, plane_cells, own.data(), mine, counts, firsts, whole.data(),
                   "MPI_Allgatherv (box)");
  return whole;
}

void DecomposedPropagator::copy_current(const Box& box, std::vector<float>& dense) const {
  if (!box.inside(global_))
    throw std::invalid_argument("DecomposedPropagator::copy_current: the box is empty or leaves the grid");
  std::vector<float> own;
  const Box part = own_part(box);
  if (!part.empty()) local_->copy_current(part, own);
  dense = gather_box(box, own);
}

void DecomposedPropagator::set_current(const Box& box, const std::vector<float>& dense) {
  if (!box.inside(global_) || int64_t(dense.size()) != box.cells())
    throw std::invalid_argument("DecomposedPropagator::set_current: box outside the grid or wrong size");
  const Box part = local_part(box); // ghosts too: they stay copies of the owners' cells
  if (part.empty()) return;
  local_->set_current(part, planes_of(box, part, dense));
}

void DecomposedPropagator::allocate_image(const Box& box) {
  if (!box.inside(global_))
    throw std::invalid_argument("DecomposedPropagator::allocate_image: the box is empty or leaves the grid");
  image_box_ = box;
  const Box part = own_part(box);
  image_here_ = !part.empty();
  if (image_here_) local_->allocate_image(part);
}

const DecomposedPropagator& DecomposedPropagator::same_kind(const Propagator& other,
                                                            const char* what) const {
  const auto* o = dynamic_cast<const DecomposedPropagator*>(&other);
  if (!o || !(o->slab_.z_begin == slab_.z_begin && o->slab_.z_end == slab_.z_end) ||
      !o->global_.same_shape(global_))
    throw std::invalid_argument(std::string("DecomposedPropagator::") + what +
                                ": the other field must be decomposed the same way");
  return *o;
}

void DecomposedPropagator::accumulate_image(const Propagator& source_field, float weight) {
  const DecomposedPropagator& source = same_kind(source_field, "accumulate_image");
  if (image_here_) local_->accumulate_image(*source.local_, weight);
}

void DecomposedPropagator::set_image(const std::vector<float>& image,
                                     const std::vector<float>& illumination) {
  if (int64_t(image.size()) != image_box_.cells() || int64_t(illumination.size()) != image_box_.cells())
    throw std::invalid_argument("DecomposedPropagator::set_image: arrays must cover the image box");
  if (!image_here_) return;
  const Box part = own_part(image_box_);
  local_->set_image(planes_of(image_box_, part, image), planes_of(image_box_, part, illumination));
}

std::vector<float> DecomposedPropagator::gather_image(bool illumination) const {
  std::vector<float> own;
  if (image_here_) own = illumination ? local_->download_illumination() : local_->download_image();
  return gather_box(image_box_, own);
}

void DecomposedPropagator::set_born_perturbation(const Box& box, const std::vector<float>& m) {
  if (!box.inside(global_) || int64_t(m.size()) != box.cells())
    throw std::invalid_argument("DecomposedPropagator::set_born_perturbation: box outside the grid or wrong size");
  born_box_ = box;
  const Box part = local_part(box);
  born_here_ = !part.empty();
  if (!born_here_) return;
  local_->set_born_perturbation(part, planes_of(box, part, m));
}

void DecomposedPropagator::inject_born_source(const Propagator& background) {
  const DecomposedPropagator& bg = same_kind(background, "inject_born_source");
  if (born_here_) local_->inject_born_source(*bg.local_);
}

} // namespace rtm
