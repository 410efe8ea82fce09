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

} // namespace rtm
