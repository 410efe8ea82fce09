// One rank's part of a model when a group of ranks splits the compute grid into z-slabs
// (docs/decomposition.md, "What each rank reads and holds"): the rank reads only the model planes
// its slab holds or repeats (an HDF5 hyperslab), smooths them, and builds the model term and the
// absorbing layers' profiles of its slab alone. What needs the whole model's values (the time step
// from v_max, the plausibility check, the C-PML strength from each face's fastest velocity) comes
// from extremes reduced over the group.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "io/velocity_model.h"
#include "kernels/mpi/decomposed_propagator.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/tti_setup.h"

namespace rtm {

struct SlabModel {
  VelocityModel shape;   // the whole model's nx, ny, nz, spacing and origin; vp empty
  VelocityModel planes;  // model planes z_first.. (smoothed): those the rank's slab holds or repeats
                         // (TTI: with their /epsilon, /delta, /theta, /phi, as read)
  int z_first = 0;
  // The model planes own_first <= z < own_end that this rank's own compute planes hold: the
  // group's ranks partition the model's planes so, in rank order (a model-wide fingerprint goes
  // through them in turn).
  int own_first = 0, own_end = 0;
  ModelExtremes extremes; // of the whole (smoothed) model, reduced over the group
  Physics physics = Physics::acoustic; // as read: TTI planes carry anisotropy (--physics tti)
  double fastest = 0;     // TTI: fastest_velocity of the whole (smoothed) model, reduced; else vmax
  int smoothing_reach = -1; // planes read beyond the slab for the smoothing; -1: not smoothed
  std::vector<Slab> slabs; // the compute grid's slabs, as SlabDecomposition splits them
  int rank = 0;            // in the group
};

// The compute grid's z-slabs for a model of `shape` with `boundary`'s layers over `ranks` ranks: the
// split SlabDecomposition makes (the C-PML's top and bottom layers inside the end slabs).
// The slabs have the ghost width of `physics`'s step (slab_ghost_planes).
std::vector<Slab> model_slabs(const VelocityModel& shape, const BoundaryConfig& boundary, int ranks,
                              Physics physics = Physics::acoustic);

// The model planes [first, last] (inclusive) that compute planes [k_begin, k_end) hold or repeat
// (the absorbing layers repeat the edge planes), widened by `margin` planes each way, within the model.
struct PlaneRange {
  int first = 0, last = -1;
  int count() const { return last - first + 1; }
};
PlaneRange model_planes_for(const VelocityModel& shape, const BoundaryConfig& boundary, int k_begin,
                            int k_end, int margin);

// Reads this rank's part of dataset `dataset` of `path` (collective over `group`): the planes its
// slab needs, plus the smoothing window's reach when `smooth` > 0 metres, so that the smoothing
// of the part equals the whole model's bit for bit on the planes kept. Refuses implausible
// velocities (check == plausible) on the extremes of the whole file, as read_velocity_model does.
// The physics' other datasets too (TTI: the same planes of /epsilon, /delta, /theta, /phi,
// io/anisotropy_file.h), not smoothed.
SlabModel read_slab_model(const std::string& path, const std::string& dataset, VelocityCheck check,
                          double smooth, const BoundaryConfig& boundary, MPI_Comm group,
                          Physics physics = Physics::acoustic);

// The same from a model in memory (every rank holds it; tests): the part a rank would read, of
// the model's physics (physics_of).
SlabModel slab_model_of(const VelocityModel& model, const BoundaryConfig& boundary, MPI_Comm group);

// The simulation grid of the slab model: sim.model holds the whole model's shape, no values;
// sim.physics is the part's.
SimulationGrid slab_simulation_grid(const SlabModel& part, const BoundaryConfig& boundary,
                                    double requested_dt);

// The decomposition of `sim`'s grid over `group`, the rank's model term and profiles built from its
// part alone: bit for bit SlabDecomposition(make_propagator_setup(whole-model sim), group).
std::shared_ptr<SlabDecomposition> make_slab_decomposition(const SimulationGrid& sim,
                                                                 const SlabModel& part,
                                                                 MPI_Comm group);

// The whole model's fingerprint for a checkpoint's identity (io/checkpoint_file.h: FNV-1a over its
// nx, ny, nz, spacing, origin, then its values), run over the group's ranks' own planes in turn:
// FNV-1a goes byte by byte, so it equals one pass over the whole model, and a checkpoint resumes
// with any rank count. Collective over `group`.
uint64_t model_fingerprint(const SlabModel& part, MPI_Comm group);
// The same of a whole model (modeling's and migration's identities); of a slab run's shape, which
// holds no planes, the grid's part alone.
uint64_t model_fingerprint(const VelocityModel& model);

// The anisotropy's line of a checkpoint's identity (migration's parameters, modeling's identity):
// "" for an isotropic model, so isotropic identities are unchanged; else
// "anisotropy = tti (epsilon, delta, theta, phi), fingerprint <16 hex digits>\n", FNV-1a over the
// model planes in z order, each plane's /epsilon, /delta, /theta, /phi in turn (as read: only vp is
// smoothed). A TTI checkpoint then resumes neither an isotropic run of the same /vp nor a TTI run
// with other anisotropy, and the refusal names the line. The part's runs over the group's ranks'
// own planes in turn (collective over `group`), equal to the whole model's, as model_fingerprint.
std::string anisotropy_identity(const VelocityModel& model);
std::string anisotropy_identity(const SlabModel& part, MPI_Comm group);

// The velocity extremes a run checks and sizes its grid with: the part's (reduced over the group)
// when the model is split, else the whole model's slowest and fastest velocity.
ModelExtremes run_velocity_extremes(const VelocityModel& model, const SlabModel* part);

// note_shear_taper (solvers/drivers/tti_setup.h) for a model held in z-slabs: each rank sums up the
// points and the tapered cells of its own planes, the group adds them up, and every rank says the
// same note on `info` (the run's, which only world rank 0 prints). Collective over `group` when
// part.physics is TTI; nothing otherwise. Returns the group's summary.
ShearTaperSummary note_shear_taper(const SlabModel& part, const ShearTaper& taper, MPI_Comm group,
                                   std::ostream& info);

} // namespace rtm
