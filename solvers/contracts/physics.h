// The wave equations rtm steps, one row each: what a run's plan is checked against before it
// starts (docs/physics.md). A new physics is a row here plus its folder of steps; the options
// (`--physics`), their help and the refusals of what a physics does not support read the rows.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/stencil.h"
#include "solvers/contracts/tti_ring.h"
#include "solvers/contracts/velocity_model.h"

namespace rtm {

enum class Physics { acoustic, tti };

struct PhysicsInfo {
  Physics id;
  const char* name;        // as --physics spells it
  const char* description; // for --physics's help
  // The fields of the state: p alone, or p and q.
  int components;
  // Planes of each state field a z-slab needs from its neighbour per step: the stencil's radius,
  // or twice it where the step takes two passes (TTI's rotated derivatives of derivatives).
  int slab_halo_planes;
  // Cells of each field, inward from the model box's faces, that boundary saving keeps per step
  // (the ring a reconstruction restores: the step's reach, solvers/contracts/tti_ring.h).
  int ring_width;
  // Datasets of the model file besides /vp.
  std::vector<const char*> model_datasets;
  // What the engine offers this physics: the C-PML (the sponge always), source-wavefield
  // snapshots (boundary saving always; a snapshot keeps the one field the image reads, p).
  bool supports_cpml;
  bool supports_snapshots;
  // Subsurface-offset gathers (--offset-lags) of its fields; wavefields stored in half precision
  // (--variant fp16_storage and the other 16-bit kernels of the acoustic step).
  bool supports_offset_gathers;
  bool supports_half_storage;
  // The step has the pseudo-acoustic shear artefact, which --shear-taper tapers around the run's
  // sources and receivers (solvers/drivers/shear_taper.h); its options apply to it alone.
  bool shear_taper;
  // Why not, for the refusals; "" where supported.
  const char* why_no_cpml;
  const char* why_no_snapshots;
  const char* why_no_offset_gathers;
};

inline const std::vector<PhysicsInfo>& physics_table() {
  static const std::vector<PhysicsInfo> table = {
      {Physics::acoustic, "iso", "acoustic, isotropic: /vp", 1, kHalo, kHalo, {}, true, true, true,
       true, false, "", "", ""},
      {Physics::tti, "tti",
       "pseudo-acoustic tilted transverse isotropy: /epsilon, /delta, /theta, /phi beside /vp; "
       "sponge absorber",
       2, kTtiRing, kTtiRing, {"/epsilon", "/delta", "/theta", "/phi"}, false, true, false, false, true,
       "the C-PML corrects the isotropic Laplacian axis by axis and has no form for the coupled "
       "TTI system here",
       "", "the TTI fields have no offset gathers yet"},
  };
  return table;
}

// The row of `id`.
inline const PhysicsInfo& physics_info(Physics id) {
  for (const PhysicsInfo& p : physics_table())
    if (p.id == id) return p;
  throw std::logic_error("physics_info: a Physics without a row");
}

// The row --physics `name` names; std::invalid_argument for any other name.
inline const PhysicsInfo& physics_named(const std::string& name) {
  for (const PhysicsInfo& p : physics_table())
    if (name == p.name) return p;
  throw std::invalid_argument("unknown physics '" + name + "'");
}

// The cells boundary saving keeps per step in a run of `id`: the ring of `box` ring_width cells
// thick, for each of its fields (boundary_ring_cells for the acoustic step, twice tti_ring_cells
// for TTI's p and q).
inline int64_t saved_ring_cells(Physics id, const Box& box) {
  const PhysicsInfo& p = physics_info(id);
  auto inner = [&p](int n) { return n > 2 * p.ring_width ? int64_t(n - 2 * p.ring_width) : int64_t(0); };
  return p.components * (box.cells() - inner(box.nx()) * inner(box.ny()) * inner(box.nz()));
}

// The physics of a model as read: TTI where its anisotropy datasets were read (--physics tti read
// them, io/anisotropy_file.h), else acoustic. A run decides its physics once, here or from
// --physics, and carries it (SimulationGrid::physics, SlabModel::physics, RunMemoryPlan::physics).
inline Physics physics_of(const VelocityModel& model) {
  return model.anisotropy.empty() ? Physics::acoustic : Physics::tti;
}
// The physics a propagator setup steps: TTI where it carries the TTI coefficients
// (make_propagator_setup makes them for a TTI grid), else acoustic.
inline Physics physics_of(const PropagatorSetup& setup) {
  return setup.tti.empty() ? Physics::acoustic : Physics::tti;
}

} // namespace rtm
