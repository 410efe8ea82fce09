#include "app/physics_option.h"

#include "io/anisotropy_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/tti_ring.h"

namespace rtm::app {

void add_physics_option(CLI::App* cmd, std::string& physics) {
  cmd->add_option("--physics", physics,
                  "Wave equation: iso (acoustic, isotropic) or tti (pseudo-acoustic tilted transverse "
                  "isotropy: /epsilon, /delta, /theta, /phi beside /vp; sponge absorber)")
      ->check(CLI::IsMember({"iso", "tti"}))
      ->capture_default_str();
}

bool apply_physics_options(const std::string& physics, const CLI::App* cmd,
                           const std::string& model_path, BoundaryConfig& boundary, int ranks_per_shot,
                           bool snapshots, std::ostream& info) {
  if (physics != "tti") {
    if (has_anisotropy(model_path))
      info << "rtm: note: " << model_path
           << " holds TTI datasets (/epsilon, ...); this run is isotropic (--physics iso) and uses /vp only\n";
    return false;
  }
  const bool absorber_given = cmd->get_option("--absorber")->count() > 0;
  if (absorber_given && boundary.absorber == Absorber::cpml && boundary.width > 0)
    throw InputError("--absorber cpml is not available with --physics tti: the C-PML corrects the "
                     "isotropic Laplacian axis by axis and has no form for the coupled TTI system "
                     "here; use --absorber sponge (the default with --physics tti)");
  boundary.absorber = Absorber::sponge;
  if (snapshots)
    throw InputError("--reconstruction snapshots with --physics tti: a snapshot holds p only, the TTI "
                     "state is (p, q); use --reconstruction boundary");
  if (ranks_per_shot > 1)
    info << "rtm: TTI on z-slabs of " << ranks_per_shot << " ranks per shot: halos of " << kTtiRing
         << " planes of p and q (the step's two passes reach that far)\n";
  return true;
}

void apply_physics(const std::string& physics, const CLI::App* cmd, const std::string& model_path,
                   VelocityModel& model, BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                   std::ostream& info) {
  if (!apply_physics_options(physics, cmd, model_path, boundary, ranks_per_shot, snapshots, info))
    return;
  read_anisotropy(model_path, model);
  info << "rtm: TTI (pseudo-acoustic), sponge absorber; CFL from vp sqrt(1 + 2 epsilon) = "
       << fastest_velocity(model) << " m/s at most\n";
}

} // namespace rtm::app
