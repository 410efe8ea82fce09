#include "app/physics_option.h"

#include "io/anisotropy_file.h"
#include "solvers/contracts/errors.h"

namespace rtm::app {

void add_physics_option(CLI::App* cmd, std::string& physics) {
  cmd->add_option("--physics", physics,
                  "Wave equation: iso (acoustic, isotropic) or tti (pseudo-acoustic tilted transverse "
                  "isotropy: /epsilon, /delta, /theta, /phi beside /vp; sponge absorber)")
      ->check(CLI::IsMember({"iso", "tti"}))
      ->capture_default_str();
}

void apply_physics(const std::string& physics, const CLI::App* cmd, const std::string& model_path,
                   VelocityModel& model, BoundaryConfig& boundary, int ranks_per_shot, bool snapshots,
                   std::ostream& info) {
  if (physics != "tti") {
    if (has_anisotropy(model_path))
      info << "rtm: note: " << model_path
           << " holds TTI datasets (/epsilon, ...); this run is isotropic (--physics iso) and uses /vp only\n";
    return;
  }
  const bool absorber_given = cmd->get_option("--absorber")->count() > 0;
  if (absorber_given && boundary.absorber == Absorber::cpml && boundary.width > 0)
    throw InputError("--absorber cpml is not available with --physics tti: the C-PML corrects the "
                     "isotropic Laplacian axis by axis and has no form for the coupled TTI system "
                     "here; use --absorber sponge (the default with --physics tti)");
  boundary.absorber = Absorber::sponge;
  if (ranks_per_shot > 1)
    throw InputError("--ranks-per-shot " + std::to_string(ranks_per_shot) +
                     " with --physics tti: the TTI step's two passes reach 8 planes, the z-slab halo "
                     "holds 4; run TTI with one rank per shot (shots still spread over ranks)");
  if (snapshots)
    throw InputError("--reconstruction snapshots with --physics tti: a snapshot holds p only, the TTI "
                     "state is (p, q); use --reconstruction boundary");
  read_anisotropy(model_path, model);
  info << "rtm: TTI (pseudo-acoustic), sponge absorber; CFL from vp sqrt(1 + 2 epsilon) = "
       << fastest_velocity(model) << " m/s at most\n";
}

} // namespace rtm::app
