// The wave equations rtm steps, one row each: what a run's plan is checked against before it
// starts (docs/physics.md). A new physics is a row here plus its folder of steps; the options
// (`--physics`), their help and the refusals of what a physics does not support read the rows.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/contracts/stencil.h"
#include "solvers/contracts/tti_ring.h"

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
  // Datasets of the model file besides /vp.
  std::vector<const char*> model_datasets;
  // What the engine offers this physics: the C-PML (the sponge always), source-wavefield
  // snapshots (boundary saving always; a snapshot keeps the one field the image reads, p).
  bool supports_cpml;
  bool supports_snapshots;
  // Why not, for the refusals; "" where supported.
  const char* why_no_cpml;
  const char* why_no_snapshots;
};

inline const std::vector<PhysicsInfo>& physics_table() {
  static const std::vector<PhysicsInfo> table = {
      {Physics::acoustic, "iso", "acoustic, isotropic: /vp", 1, kHalo, {}, true, true, "", ""},
      {Physics::tti, "tti",
       "pseudo-acoustic tilted transverse isotropy: /epsilon, /delta, /theta, /phi beside /vp; "
       "sponge absorber",
       2, kTtiRing, {"/epsilon", "/delta", "/theta", "/phi"}, false, true,
       "the C-PML corrects the isotropic Laplacian axis by axis and has no form for the coupled "
       "TTI system here",
       ""},
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

} // namespace rtm
