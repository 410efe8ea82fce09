// The compute grid of a simulation: the velocity model extended by absorbing layers, the time step,
// and where sources and receivers sit on it.
//
//   model cell (i, j, k)  ->  compute cell (i + pad_x_lo, j + pad_y_lo, k + pad_z_lo)
//
// Velocities in the absorbing layers repeat the model's edge values. With a free surface there is no
// layer at the top (pad_z_lo = 0) and the surface is the halo plane one cell above the first row
// (z = -dz), made by the image method (solvers/contracts/free_surface.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/velocity_model.h"
#include "solvers/contracts/cpml.h"
#include "solvers/contracts/physics.h"
#include "solvers/contracts/propagator.h"
#include "solvers/drivers/point_interpolation.h"
#include "solvers/drivers/shear_taper.h"

namespace rtm {

// Absorbing layers (docs/rtm.md, "Absorbing boundaries").
//   cpml:   a convolutional PML (solvers/contracts/cpml.h) whose strength on each face comes from the fastest
//           velocity in that face's layer; 20 cells reflect < 1e-3 at normal incidence and < 5e-3
//           to 60 degrees at 5-10 points per shortest wavelength (tests/test_boundaries.cpp).
//   sponge: the older damping term eta p_t with a quadratic profile; its step is its own adjoint
//           (the dot-product tests use it), but 40 cells still return ~0.6% at 5 points per
//           wavelength and more at finer sampling.
enum class Absorber { cpml, sponge };

struct BoundaryConfig {
  int width = 20;            // absorbing-layer cells on each face
  bool free_surface = false; // no absorbing layer at the top; the surface at z = -dz
  // Sponge only: amplitude left after a normally incident wave crosses the layer twice (in and
  // back out after the outer wall) in the continuous limit; it sets the damping strength eta0.
  // Stronger damping (smaller values) reflects more from the damping ramp itself: 3e-3 balanced
  // the two in the reflection measurements of docs/rtm.md.
  double reflection = 3e-3;
  Absorber absorber = Absorber::cpml;
  // C-PML only: the theoretical normal-incidence reflection of the continuous layer, which sets
  // d0 (docs/physics.md); and the wavelet's peak frequency (Hz), which sets the frequency shift
  // alpha = pi f at the layer's inner edge (0: no shift).
  double cpml_reflection = 1e-4;
  double frequency = 0;
};

struct SimulationGrid {
  VelocityModel model; // the model as given (physical domain)
  // The wave equation the run steps, decided once: physics_of(model) by make_simulation_grid, the
  // slab model's by slab_simulation_grid (sim.model is then the shape alone), or as given to
  // simulation_grid_of_shape. What a run may do is asked of its row (physics_info).
  Physics physics = Physics::acoustic;
  BoundaryConfig boundary;
  int pad_x_lo = 0, pad_x_hi = 0, pad_y_lo = 0, pad_y_hi = 0, pad_z_lo = 0, pad_z_hi = 0;
  GridLayout layout; // the compute grid, layers included
  double dt = 0;
  // TTI: delta blended towards epsilon around the run's sources and receivers when the TTI
  // coefficients are made (solvers/drivers/shear_taper.h); none (null) unless a run sets it.
  std::shared_ptr<const ShearTaper> shear_taper;

  double hx() const { return model.dx; }
  double hy() const { return model.dy; }
  double hz() const { return model.dz; }
  // 1 / (hx hy hz): turns a point source into a cell-average density (docs/physics.md).
  float injection_scale() const { return float(1.0 / (model.dx * model.dy * model.dz)); }
  int64_t compute_cells() const { return layout.interior_cells(); }
};

// Builds the compute grid; dt is chosen from CFL (requested_dt <= 0) or checked (InputError).
// The physics is the model's (physics_of).
SimulationGrid make_simulation_grid(const VelocityModel& model, const BoundaryConfig& boundary,
                                    double requested_dt);

// The same from the model's shape (nx, ny, nz, spacing, origin; its values may be absent, as on a
// rank that holds a slab of them) and its fastest velocity.
SimulationGrid make_simulation_grid(const VelocityModel& model, double vmax,
                                    const BoundaryConfig& boundary, double requested_dt);

// The compute grid of a model's shape alone (nx, ny, nz, spacing, origin: read_model_shape reads
// them from the file's header; values are not copied) with `dt` taken as it is, unchecked, for a
// run of `physics`: what a run's memory is sized from before its velocities are read
// (solvers/drivers/memory_budget.h).
SimulationGrid simulation_grid_of_shape(const VelocityModel& shape, const BoundaryConfig& boundary,
                                        double dt, Physics physics);

// What the time step and the absorbing layers read of a model's values: its slowest and fastest
// velocity, and the fastest on each face ([axis x,y,z][low, high]). model_extremes(planes, z_first,
// nz_whole) gives a part's share (planes z_first.. of a model of nz_whole planes; the z faces only
// where the part holds them, else 0): the shares of parts covering the model, reduced by min (vmin)
// and max (the rest), are the whole model's.
struct ModelExtremes {
  double vmin = 0, vmax = 0;
  double face_vmax[3][2] = {{0, 0}, {0, 0}, {0, 0}};
};
ModelExtremes model_extremes(const VelocityModel& model);
ModelExtremes model_extremes(const VelocityModel& planes, int z_first, int nz_whole);

// v^2 dt^2 on the compute grid (dense), and the absorbing layers' coefficients: the sponge's
// damping profiles (empty with the C-PML) or the C-PML's profiles (empty with the sponge).
std::vector<float> compute_v2dt2(const SimulationGrid& sim);
DampingProfiles damping_profiles(const SimulationGrid& sim);
CpmlProfiles cpml_profiles(const SimulationGrid& sim);
// The same from the whole model's extremes, where sim.model holds only its shape or a part.
DampingProfiles damping_profiles(const SimulationGrid& sim, double vmax);
CpmlProfiles cpml_profiles(const SimulationGrid& sim, const ModelExtremes& extremes);
// compute_v2dt2's values on compute planes k_begin <= k < k_end alone, from the model planes
// z_first.. in `planes` (sim.model giving the whole model's shape): bit for bit its planes.
std::vector<float> compute_v2dt2_planes(const SimulationGrid& sim, const VelocityModel& planes,
                                        int z_first, int k_begin, int k_end);
// "cpml" or "sponge"; and back (InputError naming --absorber for anything else).
const char* absorber_name(Absorber a);
Absorber parse_absorber(const std::string& name);
PropagatorSetup make_propagator_setup(const SimulationGrid& sim);

// The model region on the compute grid: the grid less its absorbing layers. RTM images there and
// saves the wavefield's boundary ring around it.
Box model_box(const SimulationGrid& sim);

// The stencil of a position (z, y, x in metres, model coordinates) on the compute grid: Hicks'
// windowed sinc (default) or trilinear weights per axis, reflected at the grid's pressure-release
// walls (solvers/drivers/point_interpolation.h). Throws InputError naming `what` (e.g. "source 3") when
// the position lies outside the model.
PointStencil locate_point(const SimulationGrid& sim, const Position& zyx, const std::string& what,
                          PointInterpolation kind = PointInterpolation::sinc);
// locate_point of each position in turn, named `what` and its index ("receiver 3").
std::vector<PointStencil> locate_points(const SimulationGrid& sim,
                                        const std::vector<Position>& positions,
                                        const std::string& what,
                                        PointInterpolation kind = PointInterpolation::sinc);

} // namespace rtm
