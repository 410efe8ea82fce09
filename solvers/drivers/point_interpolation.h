// How a source or receiver between grid nodes is spread over the nodes around it, one axis at a
// time (the 3-D weights are the product: solvers/contracts/propagator.h, PointStencil).
//
// sinc (the default): Hicks (2002, Geophysics 67(1), 156-166), a sinc function times a Kaiser
// window of half-width r = 4 cells,
//   w(x) = sinc(x) I0(b sqrt(1 - (x/r)^2)) / I0(b),   |x| < r,   sinc(x) = sin(pi x) / (pi x),
// at the 8 nodes nearest the point (x: node minus point, in cells). b = 6.31 is Hicks' value for
// r = 4 and a highest wavenumber of pi/2 per cell, i.e. 4 points per wavelength, the grid the
// dispersion rule asks for (docs/physics.md): over 0 <= k <= pi/2 and every offset, the spectrum of
// the 8 weights differs from that of a point at the offset by at most 0.13% (re-derived, see
// docs/physics.md), where trilinear weights lose up to 29% at k = pi/2.
// A point on a node gets that node alone with weight 1 (the sinc is 0 at the other nodes), so
// results for points on nodes do not depend on the choice.
//
// Walls: the pressure-release planes one cell outside the grid on each face: the free surface at
// z = -dz on top (solvers/contracts/free_surface.h), the zero halo elsewhere. Hicks' rule for such
// a surface keeps the point's image honoured: a weight that falls on the wall node itself is
// dropped (the field is 0 there) and one beyond it is reflected onto the mirror node inside with
// its sign reversed, as if the point's negative image (a node m cells beyond the wall) also
// injected its weight. With the free surface's antisymmetric halo this is exact: the folded
// weights inject into, and sample, the interior exactly what the unfolded ones would into the
// whole-space field of the point and its image, and injection and sampling keep one set of
// weights (adjoint). The rule is applied at every face: away from the free surface it is reached
// only by absorbing layers thinner than 3 cells (points lie inside the model).
//
// trilinear: the 2 nodes around the point per axis with weights 1 - f and f (the original scheme;
// kept as an option). It never reaches a wall (points lie inside the model).
#pragma once

#include <string>

#include "solvers/contracts/propagator.h"

namespace rtm {

enum class PointInterpolation { sinc, trilinear };

// "sinc" | "trilinear"; InputError naming --point-interpolation otherwise.
PointInterpolation parse_point_interpolation(const std::string& name);
const char* point_interpolation_name(PointInterpolation kind);

constexpr int kSincRadius = 4;          // cells on each side: kMaxPointTaps = 2 kSincRadius
constexpr double kKaiserB = 6.31;       // Hicks (2002), Table 1: r = 4, k_max = pi/2
// Positions this close to a node (in cells) are on it: one node, weight 1.
constexpr double kOnNodeTolerance = 1e-9;

// Weights along one axis: nodes first .. first + count - 1 (compute-grid interior coordinates).
struct AxisWeights {
  int first = 0;
  int count = 0;
  double w[kMaxPointTaps] = {};
};

// The Kaiser-windowed sinc (without walls), x in cells from the point.
double hicks_weight(double x);

// Weights for a point at `position` cells (0 <= position <= cells - 1) on an axis of `cells`
// nodes, with the walls at -1 and `cells` as described above.
AxisWeights axis_weights(PointInterpolation kind, double position, int cells);

} // namespace rtm
