#include "solvers/drivers/point_interpolation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "solvers/contracts/errors.h"

namespace rtm {

PointInterpolation parse_point_interpolation(const std::string& name) {
  if (name == "sinc") return PointInterpolation::sinc;
  if (name == "trilinear") return PointInterpolation::trilinear;
  throw InputError("--point-interpolation: expected sinc or trilinear, got '" + name + "'");
}

const char* point_interpolation_name(PointInterpolation kind) {
  return kind == PointInterpolation::sinc ? "sinc" : "trilinear";
}

namespace {

// Modified Bessel function of the first kind, order 0: sum_k ((x/2)^k / k!)^2, to double precision
// for the arguments here (|x| <= kKaiserB).
double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100 && term > 1e-17 * sum; ++k) {
    term *= q / (double(k) * k);
    sum += term;
  }
  return sum;
}

// Adds weight w at node `node` to `out`, reflected at the walls -1 and `cells` (Hicks' rule for a
// pressure-release surface): the wall node itself takes nothing, a node beyond a wall gives -w to
// its mirror node. Repeated for grids so thin that a mirror node lies beyond the other wall.
void add_with_walls(double (&acc)[3 * kMaxPointTaps], int acc_first, int node, double w,
                    int cells) {
  for (int bounce = 0; bounce < 8; ++bounce) {
    if (node == -1 || node == cells) return;
    if (node < -1) {
      node = -2 - node;
      w = -w;
    } else if (node > cells) {
      node = 2 * cells - node;
      w = -w;
    } else {
      if (node - acc_first < 0 || node - acc_first >= 3 * kMaxPointTaps)
        throw std::logic_error("axis_weights: a reflected weight lands outside the accumulator");
      acc[node - acc_first] += w;
      return;
    }
  }
  throw std::logic_error("axis_weights: a point's weights bounce between walls too often");
}

} // namespace

double hicks_weight(double x) {
  const double r = kSincRadius;
  if (std::abs(x) >= r) return 0.0;
  const double sinc = x == 0.0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x);
  const double s = x / r;
  return sinc * bessel_i0(kKaiserB * std::sqrt(1.0 - s * s)) / bessel_i0(kKaiserB);
}

AxisWeights axis_weights(PointInterpolation kind, double position, int cells) {
  if (!(position >= 0.0 && position <= cells - 1.0))
    throw std::invalid_argument("axis_weights: position outside the axis");
  AxisWeights out;
  const double nearest = std::round(position);
  if (std::abs(position - nearest) <= kOnNodeTolerance) {
    out.first = int(nearest);
    out.count = 1;
    out.w[0] = 1.0;
    return out;
  }
  const int below = int(std::floor(position));
  if (kind == PointInterpolation::trilinear) {
    // Off a node, so below + 1 <= cells - 1.
    out.first = below;
    out.count = 2;
    out.w[0] = 1.0 - (position - below);
    out.w[1] = position - below;
    return out;
  }
  // Nodes below - 3 .. below + 4; reflected ones land within 2 nodes of a wall, i.e. inside the
  // same range, so an accumulator over [below - 3 - 8, below + 4 + 8] is ample.
  double acc[3 * kMaxPointTaps] = {};
  const int acc_first = below - (kSincRadius - 1) - kMaxPointTaps;
  for (int t = 0; t < kMaxPointTaps; ++t) {
    const int node = below - (kSincRadius - 1) + t;
    add_with_walls(acc, acc_first, node, hicks_weight(node - position), cells);
  }
  int lo = 3 * kMaxPointTaps, hi = -1;
  for (int a = 0; a < 3 * kMaxPointTaps; ++a)
    if (acc[a] != 0.0) {
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
  if (hi < lo) throw std::logic_error("axis_weights: no weight left inside the grid");
  if (hi - lo + 1 > kMaxPointTaps)
    throw std::logic_error("axis_weights: a point's weights span more than kMaxPointTaps nodes");
  out.first = acc_first + lo;
  out.count = hi - lo + 1;
  for (int a = 0; a < out.count; ++a) out.w[a] = acc[lo + a];
  return out;
}

} // namespace rtm
