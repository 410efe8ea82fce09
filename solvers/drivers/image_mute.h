// The image's top mute (`rtm migrate --image-mute-depth`, docs/rtm.md section 6b): what lies next to
// the sources and receivers is no reflector but the residue of the direct wave and of each source's
// own wavefield, so the image is zeroed down to a depth and ramped up below it.
#pragma once

#include <vector>

#include "solvers/contracts/velocity_model.h"

namespace rtm {

// Multiplies each depth level of `image` ([nz][ny][nx] on `grid`) at z metres below the grid's top
// (cell k: z = k dz) by 0 for z <= depth, by the half cosine 0.5 - 0.5 cos(pi (z - depth) / taper)
// for depth < z < depth + taper, and by 1 below. depth <= 0 leaves the image as it is.
// std::invalid_argument when the image is not on the grid; InputError for a negative taper.
void mute_image_top(std::vector<float>& image, const VelocityModel& grid, double depth,
                    double taper);

// The gain mute_image_top applies at z metres below the grid's top (1 where depth <= 0): the
// offset gathers take the same mute (solvers/drivers/migration.cpp).
double image_mute_gain(double z, double depth, double taper);

} // namespace rtm
