// Smoothing a velocity model into a migration model (docs/rtm.md, "Migration velocity").
#pragma once

#include "io/velocity_model.h"

namespace rtm {

// The model smoothed over `length` metres: the slowness 1/v averaged along x, then y, then z with a
// Gaussian window whose full width at half maximum is `length` (sigma = length / 2.3548), cut at
// 3 sigma, the edge values repeated beyond the model. Slowness rather than velocity so that travel
// times through the smoothed model stay close to the true ones. length = 0 returns the model.
// Throws InputError for a negative or non-finite length.
VelocityModel smooth_model(const VelocityModel& model, double length);

// How many cells the smoothing window of `length` metres reaches on each side along an axis of
// spacing h (0: that axis is not smoothed). A part of a model smoothed on its own equals the whole
// model's smoothing on the planes at least this far from its cut edges (solvers/drivers/slab_model.h).
int smoothing_reach_cells(double length, double h);

} // namespace rtm
