// `--physics iso|tti` of rtm model and rtm migrate (docs/physics.md, TTI): which wave equation
// the run steps. tti reads /epsilon, /delta, /theta, /phi beside /vp (io/anisotropy_file.h), uses
// the sponge (the C-PML is refused for TTI), and refuses what the TTI step does not support yet.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "solvers/contracts/physics.h"
#include "solvers/contracts/velocity_model.h"
#include "solvers/drivers/shear_taper.h"
#include "solvers/drivers/simulation.h"

namespace rtm::app {

void add_physics_option(CLI::App* cmd, std::string& physics);
// The physics --physics names (CLI11 admitted only the table's names): what a command decides
// once and passes on.
inline Physics physics_option(const std::string& physics) { return physics_named(physics).id; }
// --shear-taper on|off and --shear-taper-radius M of a TTI run (solvers/drivers/shear_taper.h;
// docs/physics.md, TTI, "The shear artefact"). apply_physics_options checks them.
void add_shear_taper_options(CLI::App* cmd, ShearTaperOptions& options);

// For `physics` tti: reads the model file's anisotropy into `model`, makes the sponge the
// absorber when --absorber was not given, and refuses (InputError) --absorber cpml, when
// `snapshots` --reconstruction snapshots, and --shear-taper-radius with --shear-taper off. Several ranks per shot split the grid into z-slabs with
// the TTI step's 8-plane halos (docs/decomposition.md, TTI). For iso: says on `info` when the file
// has anisotropy that the run ignores, or when a --shear-taper option was given (TTI only).
void apply_physics(Physics physics, const CLI::App* cmd, const std::string& model_path,
                   VelocityModel& model, BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                   std::ostream& info);
// The same checks and absorber choice without reading the anisotropy, for a run whose ranks read
// only their slabs' planes of it (rtm migrate --ranks-per-shot N).
void apply_physics_options(Physics physics, const CLI::App* cmd,
                           const std::string& model_path, BoundaryConfig& boundary, int ranks_per_shot,
                           bool snapshots, std::ostream& info);

} // namespace rtm::app
