// Source and receiver layouts, generated or read from a model file.
#pragma once

#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct Acquisition {
  std::vector<Position> sources;   // one shot per source
  std::vector<Position> receivers; // shared by all shots (unless shot_receivers is set)
  // Each shot's own receivers (a spread moving with the source, a geometry file's): when not
  // empty, one list per source, used instead of `receivers`.
  std::vector<std::vector<Position>> shot_receivers;

  const std::vector<Position>& receivers_of(size_t shot) const {
    return shot_receivers.empty() ? receivers : shot_receivers[shot];
  }
};

// Points along x at (y, z), from x0 to x1 inclusive every dx metres (at least one point).
std::vector<Position> line_along_x(double z, double y, double x0, double x1, double dx);
// A grid of points at depth z covering [x0, x1] x [y0, y1] every (dx, dy) metres.
std::vector<Position> grid_at_depth(double z, double x0, double x1, double dx, double y0, double y1,
                                    double dy);

// The default survey over a model: receivers on every `receiver_step`-th cell of the inline
// (x) line through the centre at `depth`, and `nshots` shots evenly along the same line.
Acquisition default_line_survey(const VelocityModel& model, int nshots, double depth,
                                int receiver_step = 1);

// A survey laid out over a model (`rtm model`): shots on an shots_x x shots_y grid, evenly spread
// over the model (a line along the centre inline when shots_y == 1), and receivers on every
// receiver_step-th cell of the centre inline or, with receiver_grid, of the whole x-y plane.
// Depths are metres below the model origin.
struct SurveyLayout {
  int shots_x = 1, shots_y = 1;
  double source_depth = 20, receiver_depth = 20;
  int receiver_step = 1;
  bool receiver_grid = false;
};
Acquisition make_survey(const VelocityModel& model, const SurveyLayout& layout);

// A receiver spread that moves with the source (`rtm model --receiver-offsets`): each shot gets
// receivers at its source's (x, y) plus the offsets x_min, x_min + dx, ... <= x_max (inline) and
// y_min, y_min + dy, ... <= y_max (crossline), at `depth` metres below the model origin. A
// receiver beyond the model's horizontal extent is left out (the spread is cut at the model's
// edge, as an edge shot's spread is cut in a survey); a shot left with none is refused. Replaces
// acq.receivers by acq.shot_receivers; returns how many receivers were left out.
struct MovingSpread {
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0; // offsets from the source (m)
  double dx = 0, dy = 0;                               // receiver spacing (m), > 0
  double depth = 20;                                   // m below the model origin
};
size_t attach_moving_spread(Acquisition& acq, const VelocityModel& model, const MovingSpread& spread);

} // namespace rtm
