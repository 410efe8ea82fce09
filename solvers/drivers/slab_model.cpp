#include "solvers/drivers/slab_model.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "io/anisotropy_file.h"
#include "io/checkpoint_file.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/contracts/anisotropy.h"
#include "solvers/drivers/smoothing.h"
#include "solvers/drivers/tti_setup.h"

namespace rtm {
namespace {

int group_rank(MPI_Comm group, int* size = nullptr) {
  int rank = 0, n = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &n);
  if (size) *size = n;
  return rank;
}

// The part's share of the extremes reduced over the group: the whole model's (model_extremes).
ModelExtremes reduce_extremes(const ModelExtremes& mine, MPI_Comm group) {
  ModelExtremes all;
  double low = mine.vmin, high[7] = {mine.vmax};
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) high[1 + 2 * axis + side] = mine.face_vmax[axis][side];
  double highs[7];
  check_mpi(MPI_Allreduce(&low, &all.vmin, 1, MPI_DOUBLE, MPI_MIN, group), "MPI_Allreduce (vmin)");
  check_mpi(MPI_Allreduce(high, highs, 7, MPI_DOUBLE, MPI_MAX, group), "MPI_Allreduce (vmax)");
  all.vmax = highs[0];
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) all.face_vmax[axis][side] = highs[1 + 2 * axis + side];
  return all;
}

// The planes [keep.first, keep.last] of a part holding planes from `first` on.
VelocityModel cut_planes(const VelocityModel& part, int first, const PlaneRange& keep) {
  VelocityModel out = part;
  const size_t plane = size_t(part.nx) * size_t(part.ny);
  out.nz = keep.count();
  out.oz = part.oz + (keep.first - first) * part.dz;
  auto cut = [&](const std::vector<float>& values) {
    return std::vector<float>(values.begin() + ptrdiff_t(size_t(keep.first - first) * plane),
                              values.begin() + ptrdiff_t(size_t(keep.last + 1 - first) * plane));
  };
  out.vp = cut(part.vp);
  if (!part.anisotropy.empty()) {
    Anisotropy& a = out.anisotropy;
    a.epsilon = cut(part.anisotropy.epsilon);
    a.delta = cut(part.anisotropy.delta);
    a.theta = cut(part.anisotropy.theta);
    a.phi = cut(part.anisotropy.phi);
  }
  return out;
}

// The part smoothed and cut to `keep`, with its extremes and the slabs.
SlabModel finish_part(const VelocityModel& shape, VelocityModel read, int read_first,
                      const PlaneRange& keep, double smooth, std::vector<Slab> slabs, int rank,
                      const BoundaryConfig& boundary, MPI_Comm group) {
  SlabModel part;
  const int pad_lo = boundary.free_surface ? 0 : boundary.width;
  const Slab& s = slabs[size_t(rank)];
  part.own_first = std::clamp(s.z_begin - pad_lo, 0, shape.nz);
  part.own_end = std::clamp(s.z_end - pad_lo, 0, shape.nz);
  if (s.z_end == slabs.back().z_end) part.own_end = shape.nz;
  part.shape = shape;
  part.shape.vp.clear();
  part.slabs = std::move(slabs);
  part.rank = rank;
  if (smooth > 0) read = smooth_model(read, smooth);
  part.planes = cut_planes(read, read_first, keep);
  part.z_first = keep.first;
  part.extremes = reduce_extremes(model_extremes(part.planes, part.z_first, shape.nz), group);
  part.fastest = part.extremes.vmax;
  return part;
}

// TTI: the part's fastest phase velocity reduced over the group (the parts' kept planes cover the
// model, so this is fastest_velocity of the whole smoothed model).
void finish_tti_part(SlabModel& part, MPI_Comm group) {
  part.physics = Physics::tti;
  const double mine = fastest_velocity(part.planes);
  check_mpi(MPI_Allreduce(&mine, &part.fastest, 1, MPI_DOUBLE, MPI_MAX, group),
            "MPI_Allreduce (fastest velocity)");
}

} // namespace

std::vector<Slab> model_slabs(const VelocityModel& shape, const BoundaryConfig& boundary, int ranks,
                              Physics physics) {
  // make_simulation_grid's z padding, and the C-PML's z layers as cpml_profiles makes them.
  const int pad_lo = boundary.free_surface ? 0 : boundary.width, pad_hi = boundary.width;
  const bool cpml = boundary.absorber == Absorber::cpml && boundary.width > 0;
  return split_into_slabs(shape.nz + pad_lo + pad_hi, ranks, cpml ? pad_lo : 0, cpml ? pad_hi : 0,
                          slab_ghost_planes(physics));
}

PlaneRange model_planes_for(const VelocityModel& shape, const BoundaryConfig& boundary, int k_begin,
                            int k_end, int margin) {
  const int pad_lo = boundary.free_surface ? 0 : boundary.width;
  PlaneRange r;
  r.first = std::clamp(k_begin - pad_lo, 0, shape.nz - 1);
  r.last = std::clamp(k_end - 1 - pad_lo, 0, shape.nz - 1);
  r.first = std::max(0, r.first - margin);
  r.last = std::min(shape.nz - 1, r.last + margin);
  return r;
}

SlabModel read_slab_model(const std::string& path, const std::string& dataset, VelocityCheck check,
                          double smooth, const BoundaryConfig& boundary, MPI_Comm group,
                          Physics physics) {
  int size = 1;
  const int rank = group_rank(group, &size);
  const VelocityModel shape = read_model_shape(path, dataset);
  std::vector<Slab> slabs = model_slabs(shape, boundary, size, physics);
  const Slab& s = slabs[size_t(rank)];
  const int k0 = s.first_local(), k1 = k0 + s.local_planes();
  const PlaneRange keep = model_planes_for(shape, boundary, k0, k1, 0);
  const PlaneRange read = model_planes_for(shape, boundary, k0, k1,
                                           smoothing_reach_cells(smooth, shape.dz));
  VelocityPlanes planes = read_velocity_planes(path, dataset, read.first, read.last + 1);
  // The raw values' extremes over every plane of the file (the parts read cover it).
  double low = planes.model.vmin(), high = planes.model.vmax(), all_low = 0, all_high = 0;
  check_mpi(MPI_Allreduce(&low, &all_low, 1, MPI_DOUBLE, MPI_MIN, group), "MPI_Allreduce (vmin)");
  check_mpi(MPI_Allreduce(&high, &all_high, 1, MPI_DOUBLE, MPI_MAX, group), "MPI_Allreduce (vmax)");
  if (check == VelocityCheck::plausible) check_velocity_planes_plausible(planes, all_low, all_high);
  VelocityModel whole_shape = planes.model;
  whole_shape.nz = planes.nz_whole;
  whole_shape.oz = planes.model.oz - planes.z_first * planes.model.dz;
  whole_shape.vp.clear();
  SlabModel part = finish_part(whole_shape, std::move(planes.model), read.first, keep, smooth,
                               std::move(slabs), rank, boundary, group);
  if (smooth > 0) part.smoothing_reach = smoothing_reach_cells(smooth, shape.dz);
  if (physics == Physics::tti) {
    read_anisotropy_planes(path, part.planes, part.z_first, part.shape.nz);
    finish_tti_part(part, group);
  }
  return part;
}

SlabModel slab_model_of(const VelocityModel& model, const BoundaryConfig& boundary, MPI_Comm group) {
  int size = 1;
  const int rank = group_rank(group, &size);
  const Physics physics = physics_of(model);
  std::vector<Slab> slabs = model_slabs(model, boundary, size, physics);
  const Slab& s = slabs[size_t(rank)];
  const PlaneRange keep =
      model_planes_for(model, boundary, s.first_local(), s.first_local() + s.local_planes(), 0);
  VelocityModel shape = model;
  shape.vp.clear();
  shape.anisotropy = Anisotropy{};
  SlabModel part = finish_part(shape, model, 0, keep, 0.0, std::move(slabs), rank, boundary, group);
  if (physics == Physics::tti) finish_tti_part(part, group);
  return part;
}

SimulationGrid slab_simulation_grid(const SlabModel& part, const BoundaryConfig& boundary,
                                    double requested_dt) {
  SimulationGrid sim = make_simulation_grid(part.shape, part.fastest, boundary, requested_dt);
  sim.physics = part.physics;
  return sim;
}

std::shared_ptr<SlabDecomposition> make_slab_decomposition(const SimulationGrid& sim,
                                                                 const SlabModel& part,
                                                                 MPI_Comm group) {
  PropagatorSetup profiles; // make_propagator_setup less v2dt2
  profiles.layout = sim.layout;
  profiles.weights = make_laplacian_weights(sim.hx(), sim.hy(), sim.hz());
  profiles.damping = damping_profiles(sim, part.fastest); // TTI: vp sqrt(1 + 2 epsilon), as one rank
  profiles.cpml = cpml_profiles(sim, part.extremes);
  profiles.free_surface = sim.boundary.free_surface;
  std::function<TtiCoefficients(const Slab&)> local_tti;
  if (part.physics == Physics::tti)
    local_tti = [&](const Slab& s) {
      return compute_tti_coefficient_planes(sim, part.planes, part.z_first, s.first_local(),
                                            s.first_local() + s.local_planes());
    };
  return std::make_shared<SlabDecomposition>(
      profiles, group,
      [&](const Slab& s) {
        return compute_v2dt2_planes(sim, part.planes, part.z_first, s.first_local(),
                                    s.first_local() + s.local_planes());
      },
      local_tti);
}

namespace {

// A fingerprint continued over the ranks of `group` in rank order: rank r continues rank r - 1's
// value with `add(rank, h)` (rank 0 from kFingerprintSeed), and the last rank's value is every
// rank's. `what` names it in MPI errors.
template <class Add> uint64_t fingerprint_over_ranks(MPI_Comm group, const char* what, Add add) {
  int size = 1;
  const int rank = group_rank(group, &size);
  uint64_t h = kFingerprintSeed;
  if (rank > 0)
    check_mpi(MPI_Recv(&h, 1, MPI_UINT64_T, rank - 1, 0, group, MPI_STATUS_IGNORE),
              (std::string("MPI_Recv (") + what + ")").c_str());
  h = add(rank, h);
  if (rank + 1 < size)
    check_mpi(MPI_Send(&h, 1, MPI_UINT64_T, rank + 1, 0, group), (std::string("MPI_Send (") + what + ")").c_str());
  check_mpi(MPI_Bcast(&h, 1, MPI_UINT64_T, size - 1, group), (std::string("MPI_Bcast (") + what + ")").c_str());
  return h;
}

} // namespace

uint64_t model_fingerprint(const VelocityModel& model) {
  uint64_t grid = kFingerprintSeed;
  for (int n : {model.nx, model.ny, model.nz}) grid = fingerprint(&n, sizeof n, grid);
  for (double x : {model.dx, model.dy, model.dz, model.ox, model.oy, model.oz})
    grid = fingerprint(&x, sizeof x, grid);
  const size_t plane = size_t(model.nx) * size_t(model.ny);
  return fingerprint_planes(model.vp.data(), plane * sizeof(float), model.vp.size() / plane, grid);
}

uint64_t model_fingerprint(const SlabModel& part, MPI_Comm group) {
  const VelocityModel& model = part.shape;
  return fingerprint_over_ranks(group, "model fingerprint", [&](int rank, uint64_t h) {
    auto add = [&h](const void* data, size_t n) { h = fingerprint(data, n, h); };
    if (rank == 0) {
      for (int n : {model.nx, model.ny, model.nz}) add(&n, sizeof n);
      for (double x : {model.dx, model.dy, model.dz, model.ox, model.oy, model.oz}) add(&x, sizeof x);
    }
    const size_t plane = size_t(model.nx) * size_t(model.ny);
    return fingerprint_planes(part.planes.vp.data() + size_t(part.own_first - part.z_first) * plane,
                              plane * sizeof(float), size_t(part.own_end - part.own_first), h);
  });
}

namespace {

// FNV-1a continued over the digests (plane_digests) of `count` model planes of `a` from plane
// `first` of its arrays: each plane's epsilon, delta, theta and phi in turn.
uint64_t add_anisotropy_planes(const Anisotropy& a, size_t plane, int first, int count, uint64_t h) {
  const std::vector<float>* arrays[4] = {&a.epsilon, &a.delta, &a.theta, &a.phi};
  std::vector<uint64_t> digests[4];
  for (int m = 0; m < 4; ++m)
    digests[m] = plane_digests(arrays[m]->data() + size_t(first) * plane, plane * sizeof(float),
                               size_t(count));
  for (int k = 0; k < count; ++k)
    for (int m = 0; m < 4; ++m) h = fingerprint(&digests[m][size_t(k)], sizeof(uint64_t), h);
  return h;
}

std::string anisotropy_line(uint64_t h) {
  char text[128];
  std::snprintf(text, sizeof text, "anisotropy = tti (epsilon, delta, theta, phi), fingerprint %016llx\n",
                static_cast<unsigned long long>(h));
  return text;
}

} // namespace

std::string anisotropy_identity(const VelocityModel& model) {
  if (physics_of(model) != Physics::tti) return "";
  return anisotropy_line(add_anisotropy_planes(model.anisotropy, size_t(model.nx) * size_t(model.ny),
                                               0, model.nz, kFingerprintSeed));
}

std::string anisotropy_identity(const SlabModel& part, MPI_Comm group) {
  if (part.physics != Physics::tti) return ""; // the same on every rank of the group: nobody waits below
  return anisotropy_line(fingerprint_over_ranks(group, "anisotropy fingerprint", [&](int, uint64_t h) {
    return add_anisotropy_planes(part.planes.anisotropy, size_t(part.shape.nx) * size_t(part.shape.ny),
                                 part.own_first - part.z_first, part.own_end - part.own_first, h);
  }));
}

ShearTaperSummary note_shear_taper(const SlabModel& part, const ShearTaper& taper, MPI_Comm group,
                                   std::ostream& info) {
  if (part.physics != Physics::tti) return {}; // the same on every rank of the group: nobody waits below
  const ShearTaperSummary mine = shear_taper_summary(part.shape, part.planes.anisotropy, part.z_first,
                                                     part.own_first, part.own_end, taper);
  unsigned long long counts[2] = {mine.anisotropic.count, mine.cells}, totals[2] = {0, 0};
  ShearTaperSummary all;
  check_mpi(MPI_Allreduce(counts, totals, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, group),
            "MPI_Allreduce (shear taper)");
  check_mpi(MPI_Allreduce(&mine.anisotropic.worst, &all.anisotropic.worst, 1, MPI_DOUBLE, MPI_MAX, group),
            "MPI_Allreduce (shear taper)");
  all.anisotropic.count = size_t(totals[0]);
  all.cells = uint64_t(totals[1]);
  if (!taper.points.empty()) note_shear_taper(all, taper, info);
  return all;
}

ModelExtremes run_velocity_extremes(const VelocityModel& model, const SlabModel* part) {
  if (part) return part->extremes;
  ModelExtremes extremes;
  extremes.vmin = model.vmin();
  extremes.vmax = model.vmax();
  return extremes;
}

} // namespace rtm
