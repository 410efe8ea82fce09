// `--physics iso|tti` of rtm model and rtm migrate (docs/physics.md, TTI): which wave equation
// the run steps. tti reads /epsilon, /delta, /theta, /phi beside /vp (io/anisotropy_file.h), uses
// the sponge (the C-PML is refused for TTI), and refuses what the TTI step does not support yet.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "solvers/contracts/velocity_model.h"
#include "solvers/drivers/simulation.h"

namespace rtm::app {

void add_physics_option(CLI::App* cmd, std::string& physics);

// For --physics tti: reads the model file's anisotropy into `model`, makes the sponge the
// absorber when --absorber was not given, and refuses (InputError) --absorber cpml, several ranks
// per shot and, when `snapshots`, --reconstruction snapshots. For iso: says on `info` when the
// file has anisotropy that the run ignores.
void apply_physics(const std::string& physics, const CLI::App* cmd, const std::string& model_path,
                   VelocityModel& model, BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                   std::ostream& info);

} // namespace rtm::app
