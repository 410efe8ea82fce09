// The TTI coefficients of a compute grid (solvers/contracts/tti.h) from the model's anisotropy, delta
// blended towards epsilon around the run's sources and receivers (the shear taper,
// solvers/drivers/shear_taper.h), and the wavefields of a TTI run. Values in the absorbing layers
// repeat the model's edge, like vp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/tti.h"
#include "solvers/contracts/wavefield.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/shear_taper.h"
#include "solvers/drivers/simulation.h"

namespace rtm {

// E = 1 + 2 epsilon, S = sqrt(1 + 2 delta'), n = (sin theta cos phi, sin theta sin phi, cos theta)
// per compute cell (computed in double, stored as float), delta' the tapered delta where
// sim.shear_taper tapers (else delta); empty for an isotropic model.
TtiCoefficients compute_tti_coefficients(const SimulationGrid& sim);
// The same for compute planes k_begin <= k < k_end (one z-slab) from the model planes z_first..
// held in `planes` (with their anisotropy; sim.model: the whole model's shape), as
// compute_v2dt2_planes does for vp: bit for bit those planes of compute_tti_coefficients.
TtiCoefficients compute_tti_coefficient_planes(const SimulationGrid& sim, const VelocityModel& planes,
                                               int z_first, int k_begin, int k_end);

// The pseudo-acoustic system's shear artefact (docs/physics.md, TTI, "The shear artefact"): a point
// injected where epsilon > delta excites a slow wave whose wavelength along the axis has no lower
// bound, so it leaves grid-scale noise in traces and images; the shear taper
// (solvers/drivers/shear_taper.h) makes the medium elliptic around every source and receiver.
//
// What a run's taper does: the points (of taper.points) whose nearest model cell has epsilon -
// delta above 1e-3, the largest difference there, and the model cells whose delta it changes.
struct ShearArtefactPoints {
  size_t count = 0;
  double worst = 0; // the largest epsilon - delta among them
};
struct ShearTaperSummary {
  ShearArtefactPoints anisotropic; // the points where epsilon > delta
  uint64_t cells = 0;              // model cells whose delta the taper changes
};
// The summary of model planes [z_begin, z_end) (a z-slab rank's own; points whose nearest cell lies
// there), `a` holding the planes from `a_first` on (shape's nx x ny cells each).
ShearTaperSummary shear_taper_summary(const VelocityModel& shape, const Anisotropy& a, int a_first,
                                      int z_begin, int z_end, const ShearTaper& taper);
// Says on `info` what the taper changed (points, radius, cells), or, with the taper off
// (radius 0), how many points sit where epsilon > delta and that the taper would remove the
// artefact; nothing when the taper changes no cell, or finds no such point when off.
void note_shear_taper(const ShearTaperSummary& summary, const ShearTaper& taper, std::ostream& info);
// Both for a whole model (nothing for an isotropic one); returns the summary. A model held in
// z-slabs: slab_model.h.
ShearTaperSummary note_shear_taper(const VelocityModel& model, const ShearTaper& taper,
                                   std::ostream& info);

struct SlabModel;
// A TTI run's taper: the one `options` ask for around `points` (every source and receiver of the
// run) set on sim.shear_taper, for the coefficients made from `sim` (make_propagator_setup,
// make_slab_decomposition), and what it does said on `info`. The model's anisotropy is sim.model's,
// or with `part` the group's z-slabs of it (collective over `group` then). Nothing for an isotropic
// run. Returns the summary.
ShearTaperSummary set_shear_taper(SimulationGrid& sim, const SlabModel* part, MPI_Comm group,
                                  const ShearTaperOptions& options, std::vector<Position> points,
                                  std::ostream& info);

// A TTI wavefield / shot fields for a setup with TTI coefficients: on the GPU when options.backend
// resolves to cuda (the CUDA TTI wavefield running options.variant: tti-pipelined, the default for
// auto, or tti-naive), else the CPU reference. An acoustic variant name is refused (InputError).
std::unique_ptr<Wavefield> make_tti_wavefield(const PropagatorSetup& setup,
                                              const BackendOptions& options, std::ostream& log);
std::unique_ptr<ShotFields> make_tti_shot_fields(const PropagatorSetup& setup,
                                                 const BackendOptions& options, std::ostream& log);
// Where a TTI run's z-slabs (solvers/drivers/decomposed_backend.h) make their local fields, the
// options checked and chosen as above: backend "cpu" (variant empty), or "cuda" with the TTI
// variant (tti-pipelined for auto) when --backend resolves to cuda.
struct TtiBackend {
  std::string backend; // "cpu" or "cuda"
  std::string variant; // with cuda: a TTI variant name
};
TtiBackend tti_backend(const BackendOptions& options, std::ostream& log);

} // namespace rtm
