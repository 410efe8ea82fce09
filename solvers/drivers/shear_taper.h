// The elliptic taper that keeps the pseudo-acoustic TTI system's shear artefact out of a run
// (docs/physics.md, TTI, "The shear artefact"): within a radius of every source and receiver,
// delta is blended towards epsilon, so that the medium is elliptic (epsilon = delta, where the
// artefact does not exist) where points inject, and untouched beyond the radius.
//
//   delta'(x) = delta(x) + w(d(x)) (epsilon(x) - delta(x))   where epsilon > delta (else delta)
//   w(d) = 1 for d <= R/2,  (1 + cos(pi (2d/R - 1))) / 2 for R/2 < d < R,  0 for d >= R
//
// d(x) the distance (m) of a model cell's centre from the nearest source or receiver. A pure
// function of the model's shape, its epsilon and delta and the positions: every rank of a z-slab
// run computes the weights of its own planes and gets the one-rank run's coefficients bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "solvers/contracts/velocity_model.h"

namespace rtm {

// The default radius in cells of the model's largest spacing (docs/physics.md says why this many).
constexpr double kShearTaperCells = 10;

// What a TTI run asks for (`--shear-taper on|off`, `--shear-taper-radius`): on by default.
struct ShearTaperOptions {
  bool enabled = true;
  double radius = 0; // metres; 0: kShearTaperCells x the model's largest spacing
};

// The radius a run of a model of `shape` tapers with: 0 when disabled.
double shear_taper_radius(const ShearTaperOptions& options, const VelocityModel& shape);

// The taper's line of a TTI run's checkpoint identity ("shear_taper = off" or the radius in metres),
// so that a checkpoint resumes only a run that tapers the same.
std::string shear_taper_identity(const ShearTaperOptions& options, const VelocityModel& shape);

// One run's taper: the radius and the distinct positions of its sources and receivers (every
// shot's: one medium for the whole run, so that modeling and migration of the same survey step
// in the same medium).
struct ShearTaper {
  double radius = 0;            // metres; 0: no taper (the points are still named by the note)
  std::vector<Position> points; // distinct, in lexicographic (z, y, x) order
  bool tapers() const { return radius > 0 && !points.empty(); }
};
ShearTaper make_shear_taper(const ShearTaperOptions& options, const VelocityModel& shape,
                            std::vector<Position> points);

// w(d) above, for a distance d (m) from the nearest point.
double shear_taper_weight(double distance, double radius);

// The weights of the model planes [z_begin, z_end) of a model of `shape` that a point of the taper
// reaches (w of each cell from its centre's distance to the nearest point), held for those planes
// only: a surface acquisition reaches some 2 R / dz planes, whatever the model's depth. Cost: for
// each such plane, the cells within the radius of each point that reaches it.
class ShearTaperPlanes {
public:
  ShearTaperPlanes(const VelocityModel& shape, const ShearTaper& taper, int z_begin, int z_end);
  // Plane k's nx x ny weights (x fastest), or null where no point reaches it (w = 0 there).
  const float* plane(int k) const;
  // How many planes a point reaches.
  int reached() const { return reached_; }

private:
  int z_begin_ = 0;
  size_t plane_cells_ = 0;
  std::vector<int> slot_;     // per plane of [z_begin, z_end): its index in weights_, -1 if none
  std::vector<float> weights_; // the reached planes', in order
  int reached_ = 0;
};

// The same as one array over planes [z_begin, z_end), zeros included (tests).
std::vector<float> shear_taper_weights(const VelocityModel& shape, const ShearTaper& taper, int z_begin,
                                       int z_end);

// delta' above for one cell.
inline double tapered_delta(double epsilon, double delta, double weight) {
  return epsilon > delta ? delta + weight * (epsilon - delta) : delta;
}

// The model cells of planes [z_begin, z_end) whose delta the taper changes (w > 0 and epsilon >
// delta), `a` holding the planes from `a_first` on (shape's nx x ny cells each).
uint64_t shear_tapered_cells(const VelocityModel& shape, const Anisotropy& a, int a_first, int z_begin,
                             int z_end, const ShearTaper& taper);

} // namespace rtm
