// Anisotropic synthetic models for `rtm generate-model` (docs/models.md): Thomsen epsilon and delta
// per layer of a layered model (VTI, or a common tilted axis), and tilted layers whose symmetry axis
// is normal to the bedding, the TTI case that isotropic migration misplaces.
#pragma once

#include <vector>

#include "solvers/contracts/velocity_model.h"
#include "solvers/drivers/model_builder.h"

namespace rtm {

// One value per layer, or one for every layer: the per-layer list (InputError naming `option`
// otherwise).
std::vector<double> per_layer(const std::vector<double>& values, size_t layers, const char* option);

// Sets model.anisotropy: the layer of each cell is given by its depth z against
// `interface_depths` (as layered_model draws vp), epsilon and delta from the per-layer lists, one
// axis (theta, phi degrees) everywhere. Then check_anisotropy.
void set_layered_anisotropy(VelocityModel& model, const std::vector<double>& interface_depths,
                            const std::vector<double>& epsilon, const std::vector<double>& delta,
                            double theta, double phi);

// Layers dipping by `dip` degrees along x (deeper towards +x), interfaces at the given depths where
// they cross the model's centre column; vp, epsilon, delta per layer; the symmetry axis normal to
// the layers (theta = -dip, phi = 0: n = (-sin dip, 0, cos dip)).
VelocityModel tilted_layer_model(const ModelShape& shape, double dip,
                                 const std::vector<double>& interface_depths,
                                 const std::vector<double>& velocities,
                                 const std::vector<double>& epsilon, const std::vector<double>& delta);

} // namespace rtm
