// Synthetic velocity models for `rtm generate-model`, the demo and the tests (docs/models.md).
#pragma once

#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct ModelShape {
  int nx = 0, ny = 0, nz = 0;
  double dx = 10, dy = 10, dz = 10; // metres
};

// Throws InputError when a dimension or spacing is not positive.
void check_model_shape(const ModelShape& shape);

VelocityModel constant_model(const ModelShape& shape, double v);

// Flat interfaces at the given depths (metres, increasing); velocities has one more entry than
// depths: velocities[0] above the first interface, and so on.
VelocityModel layered_model(const ModelShape& shape, const std::vector<double>& interface_depths,
                            const std::vector<double>& velocities);

// v(z) = v_top + gradient * z, clipped to [v_top, v_max].
VelocityModel gradient_model(const ModelShape& shape, double v_top, double gradient, double v_max);

// A salt-like body of v_salt (default 4500 m/s) with an undulating top, in a linear-gradient
// background from v_top at the surface to v_bottom at the base (defaults 1500 to 3500 m/s).
VelocityModel salt_model(const ModelShape& shape, double v_top = 1500, double v_bottom = 3500,
                         double v_salt = 4500);

// Constant background with a small ball of another velocity centred at (x, y, z) metres (a point
// scatterer when the radius is about one cell). Negative coordinates mean the centre of the model.
// The ball holds the cells within max(radius, half the smallest spacing) of the centre, and
// always at least the cell nearest the centre (which with an even dimension lies between cells).
VelocityModel scatterer_model(const ModelShape& shape, double v_background, double v_scatterer,
                              double x = -1, double y = -1, double z = -1, double radius = 0);

// The cells of a model whose velocity is `v` (as float): how many, and their bounding box
// (inclusive cell indices; empty when cells == 0). What `rtm generate-model` reports it drew.
struct CellRegion {
  long long cells = 0;
  int i0 = 0, i1 = -1, j0 = 0, j1 = -1, k0 = 0, k1 = -1;
};
CellRegion cells_with_velocity(const VelocityModel& m, double v);

} // namespace rtm
