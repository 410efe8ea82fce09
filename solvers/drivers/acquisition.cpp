#include "solvers/drivers/acquisition.h"

#include <algorithm>
#include <cmath>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm {

std::vector<Position> line_along_x(double z, double y, double x0, double x1, double dx) {
  if (!(dx > 0)) throw InputError("receiver/shot spacing must be positive");
  std::vector<Position> pts;
  const int n = std::max(1, int(std::floor((x1 - x0) / dx + 1e-9)) + 1);
  for (int i = 0; i < n; ++i) pts.push_back({z, y, x0 + i * dx});
  return pts;
}

std::vector<Position> grid_at_depth(double z, double x0, double x1, double dx, double y0, double y1,
                                    double dy) {
  if (!(dy > 0)) throw InputError("receiver/shot spacing must be positive");
  std::vector<Position> pts;
  const int ny = std::max(1, int(std::floor((y1 - y0) / dy + 1e-9)) + 1);
  for (int j = 0; j < ny; ++j)
    for (const Position& p : line_along_x(z, y0 + j * dy, x0, x1, dx)) pts.push_back(p);
  return pts;
}

Acquisition default_line_survey(const VelocityModel& m, int nshots, double depth, int receiver_step) {
  if (nshots < 1) throw InputError("--shots must be at least 1, got " + std::to_string(nshots));
  if (receiver_step < 1) throw InputError("receiver step must be at least 1 cell");
  const double y = m.oy + 0.5 * (m.ny - 1) * m.dy;
  const double x0 = m.ox, x1 = m.ox + (m.nx - 1) * m.dx;
  const double z = m.oz + depth;
  Acquisition a;
  a.receivers = line_along_x(z, y, x0, x1, receiver_step * m.dx);
  for (int s = 0; s < nshots; ++s) {
    const double frac = nshots == 1 ? 0.5 : (s + 0.5) / nshots;
    a.sources.push_back({z, y, x0 + frac * (x1 - x0)});
  }
  return a;
}

Acquisition make_survey(const VelocityModel& m, const SurveyLayout& l) {
  if (l.shots_x < 1 || l.shots_y < 1)
    throw InputError("shot grid must have at least 1 x 1 shots, got " + std::to_string(l.shots_x) +
                     " x " + std::to_string(l.shots_y));
  if (l.receiver_step < 1) throw InputError("receiver step must be at least 1 cell");
  const double x0 = m.ox, x1 = m.ox + (m.nx - 1) * m.dx;
  const double y0 = m.oy, y1 = m.oy + (m.ny - 1) * m.dy, yc = m.oy + 0.5 * (m.ny - 1) * m.dy;
  Acquisition a;
  const double zr = m.oz + l.receiver_depth, zs = m.oz + l.source_depth;
  a.receivers = l.receiver_grid
                    ? grid_at_depth(zr, x0, x1, l.receiver_step * m.dx, y0, y1, l.receiver_step * m.dy)
                    : line_along_x(zr, yc, x0, x1, l.receiver_step * m.dx);
  // Shots at the centres of equal cells of the surveyed extent (the centre for one shot).
  auto spread = [](int n, int s, double lo, double hi) {
    return n == 1 ? 0.5 * (lo + hi) : lo + (s + 0.5) / n * (hi - lo);
  };
  for (int sy = 0; sy < l.shots_y; ++sy)
    for (int sx = 0; sx < l.shots_x; ++sx)
      a.sources.push_back({zs, l.shots_y == 1 ? yc : spread(l.shots_y, sy, y0, y1),
                           spread(l.shots_x, sx, x0, x1)});
  return a;
}

size_t attach_moving_spread(Acquisition& acq, const VelocityModel& m, const MovingSpread& spread) {
  if (!(spread.dx > 0) || !(spread.dy > 0)) throw InputError("receiver spacing must be positive");
  if (!(spread.x_min <= spread.x_max) || !(spread.y_min <= spread.y_max))
    throw InputError("--receiver-offsets: the first offset must not exceed the last");
  const std::vector<Position> offsets =
      grid_at_depth(m.oz + spread.depth, spread.x_min, spread.x_max, spread.dx, spread.y_min,
                    spread.y_max, spread.dy);
  // Inside the model's horizontal extent, to rounding of the offsets' sums.
  auto inside = [](double v, double origin, double d, int n) {
    const double slack = 1e-9 * d;
    return v >= origin - slack && v <= origin + (n - 1) * d + slack;
  };
  size_t left_out = 0;
  acq.shot_receivers.clear();
  for (size_t s = 0; s < acq.sources.size(); ++s) {
    const Position& source = acq.sources[s];
    std::vector<Position> receivers;
    for (const Position& o : offsets) {
      const Position r{o[0], source[1] + o[1], source[2] + o[2]};
      if (inside(r[1], m.oy, m.dy, m.ny) && inside(r[2], m.ox, m.dx, m.nx))
        receivers.push_back(r);
      else
        ++left_out;
    }
    if (receivers.empty())
      throw InputError("--receiver-offsets: shot " + std::to_string(s) + " (source at x = " +
                       format_number(source[2]) + ", y = " + format_number(source[1]) +
                       " m) has no receiver inside the model: every offset puts its receiver "
                       "beyond the model's edge");
    acq.shot_receivers.push_back(std::move(receivers));
  }
  acq.receivers.clear();
  return left_out;
}

} // namespace rtm
