#include "app/physics_option.h"

#include <string>
#include <vector>

#include "app/options.h"
#include "io/anisotropy_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/contracts/physics.h"

namespace rtm::app {

void add_physics_option(CLI::App* cmd, std::string& physics) {
  // Names and help from the physics table (solvers/contracts/physics.h).
  std::vector<std::string> names;
  std::string help = "Wave equation:";
  for (const PhysicsInfo& p : physics_table()) {
    names.push_back(p.name);
    help += std::string(names.size() > 1 ? ";" : "") + " " + p.name + " (" + p.description + ")";
  }
  cmd->add_option("--physics", physics, help)->check(CLI::IsMember(names))->capture_default_str();
}

void add_shear_taper_options(CLI::App* cmd, ShearTaperOptions& options) {
  cmd->add_option("--shear-taper", options.enabled,
                  "--physics tti: on (default): blend delta towards epsilon within "
                  "--shear-taper-radius of every source and receiver, so that no point excites the "
                  "pseudo-acoustic shear artefact (docs/physics.md, TTI); off: the model's delta as given")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--shear-taper-radius", options.radius,
                  "--physics tti: the taper's radius in metres, elliptic within half of it (default: " +
                      format_number(kShearTaperCells) + " cells of the model's largest spacing)")
      ->check(positive_finite());
}

namespace {

// The --shear-taper options of a run of `physics` (the table's row): ignored for a physics without
// anisotropy (said), a radius refused with the taper off.
void check_shear_taper_options(const PhysicsInfo& row, const CLI::App* cmd, std::ostream& info) {
  const CLI::Option* taper = cmd->get_option_no_throw("--shear-taper");
  const CLI::Option* radius = cmd->get_option_no_throw("--shear-taper-radius");
  const bool taper_given = taper && taper->count() > 0, radius_given = radius && radius->count() > 0;
  if (!taper_given && !radius_given) return;
  if (!row.shear_taper) {
    info << "rtm: --shear-taper and --shear-taper-radius apply to --physics tti only; ignored\n";
    return;
  }
  if (radius_given && taper_given && !taper->as<bool>())
    throw InputError("--shear-taper-radius " + radius->as<std::string>() +
                     " with --shear-taper off: the radius is the taper's; give one of the two");
}

} // namespace

void apply_physics_options(Physics physics, const CLI::App* cmd, const std::string& model_path,
                           BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                           std::ostream& info) {
  const PhysicsInfo& row = physics_info(physics);
  check_shear_taper_options(row, cmd, info);
  if (row.id == Physics::acoustic) {
    if (has_anisotropy(model_path))
      info << "rtm: note: " << model_path
           << " holds TTI datasets (/epsilon, ...); this run is isotropic (--physics iso) and uses /vp only\n";
    return;
  }
  // What the row does not support is refused; the absorber it lacks is replaced when not asked for.
  if (!row.supports_cpml) {
    const bool absorber_given = cmd->get_option("--absorber")->count() > 0;
    if (absorber_given && boundary.absorber == Absorber::cpml && boundary.width > 0)
      throw InputError(std::string("--absorber cpml is not available with --physics ") + row.name +
                       ": " + row.why_no_cpml + "; use --absorber sponge (the default with --physics " +
                       row.name + ")");
    boundary.absorber = Absorber::sponge;
  }
  if (snapshots && !row.supports_snapshots)
    throw InputError(std::string("--reconstruction snapshots with --physics ") + row.name + ": " +
                     row.why_no_snapshots + "; use --reconstruction boundary");
  if (ranks_per_shot > 1)
    info << "rtm: --physics " << row.name << " on z-slabs of " << ranks_per_shot
         << " ranks per shot: halos of " << row.slab_halo_planes << " planes of each of its "
         << row.components << " fields (the step's passes reach that far)\n";
}

void apply_physics(Physics physics, const CLI::App* cmd, const std::string& model_path,
                   VelocityModel& model, BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                   std::ostream& info) {
  apply_physics_options(physics, cmd, model_path, boundary, ranks_per_shot, snapshots, info);
  if (physics != Physics::tti) return;
  read_anisotropy(model_path, model);
  info << "rtm: TTI (pseudo-acoustic), sponge absorber; CFL from vp sqrt(1 + 2 epsilon) = "
       << fastest_velocity(model) << " m/s at most\n";
}

} // namespace rtm::app
