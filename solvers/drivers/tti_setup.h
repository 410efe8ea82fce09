// The TTI coefficients of a compute grid (solvers/contracts/tti.h) from the model's anisotropy, and
// the wavefields of a TTI run. Values in the absorbing layers repeat the model's edge, like vp.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/tti.h"
#include "solvers/contracts/wavefield.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/simulation.h"

namespace rtm {

// E = 1 + 2 epsilon, S = sqrt(1 + 2 delta), n = (sin theta cos phi, sin theta sin phi, cos theta)
// per compute cell (computed in double, stored as float); empty for an isotropic model.
TtiCoefficients compute_tti_coefficients(const SimulationGrid& sim);
// The same for compute planes k_begin <= k < k_end (one z-slab) from the model planes z_first..
// held in `planes` (with their anisotropy; sim.model: the whole model's shape), as
// compute_v2dt2_planes does for vp: bit for bit those planes of compute_tti_coefficients.
TtiCoefficients compute_tti_coefficient_planes(const SimulationGrid& sim, const VelocityModel& planes,
                                               int z_first, int k_begin, int k_end);

// The pseudo-acoustic system's shear artefact (docs/physics.md, TTI, "The shear artefact"): a point
// injected where epsilon > delta excites a slow wave whose wavelength along the axis has no lower
// bound, so it leaves grid-scale noise in traces and images. Says on `info` how many of `points`
// (sources and receivers of the run: migration injects both) sit where epsilon - delta exceeds
// 1e-3 (nearest model cell), the largest difference there and the remedy (delta = epsilon around
// the acquisition). Nothing for an isotropic model or one whose anisotropy this rank does not hold
// (a z-slab run's ranks read their planes only: slab_model.h has the group's count). Returns the
// number of such points.
size_t note_shear_artefact_at_points(const VelocityModel& model, const std::vector<Position>& points,
                                     std::ostream& info);

// The pieces of the note, for a model held in z-slabs: the points whose nearest cell of `shape`
// lies in planes [z_begin, z_end) and where epsilon - delta exceeds 1e-3, `a` holding the planes
// from `a_first` on (shape's nx x ny cells each); and the note for such a count out of `points`.
struct ShearArtefactPoints {
  size_t count = 0;
  double worst = 0; // the largest epsilon - delta among them
};
ShearArtefactPoints shear_artefact_points(const VelocityModel& shape, const Anisotropy& a, int a_first,
                                          int z_begin, int z_end, const std::vector<Position>& points);
void note_shear_artefact(const ShearArtefactPoints& found, size_t points, std::ostream& info);

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
