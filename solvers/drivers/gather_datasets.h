// The gathers of `rtm migrate --offset-lags` as datasets of its output file (docs/rtm.md, section
// 5d): /offset_gathers_x, and /offset_gathers_y where the lags run along y too, each
// [gather y][gather x][z][lag]; /angle_gathers_x (_y) [gather y][gather x][z][angle]. Their
// attributes name the axes ("y,x,z,h" or "y,x,z,angle"), each one's spacing, origin and unit
// (metres; the angles in degrees), so a reader places every value without the run's options.
#pragma once

#include <string>
#include <vector>

#include "io/volume_file.h"
#include "solvers/contracts/offset_gathers.h"
#include "solvers/drivers/angle_gathers.h"

namespace rtm {

inline const char* const kOffsetGatherUnits =
    "arbitrary (sum over time steps of source x receiver field, shifted by -h and +h)";
inline const char* const kAngleGatherUnits =
    "arbitrary (the offset gathers' slant stack over the lags)";

// The gathers of one lag axis (0: x, 1: y) of `values` (dense [axis][gy][gx][z][lag or angle]
// as `layout` says), copied out, and the NamedArray naming them (its data points at `store`).
struct GatherArrays {
  std::vector<std::vector<float>> store; // one per array, owned here
  std::vector<NamedArray> arrays;
};

// The arrays of the offset gathers (and, where `angles` is not empty, the angle gathers of
// `angle_spec`) on the model `grid` whose image box the layout covers.
GatherArrays gather_arrays(const VelocityModel& grid, const OffsetGatherLayout& layout,
                           const std::vector<float>& offsets, const std::vector<float>& angles,
                           const AngleGatherSpec& angle_spec, bool write_offsets);

// The bytes those arrays take on disk (float32), for the disk-space check before the run: from the
// model's shape and the options alone.
unsigned long long gather_bytes(const VelocityModel& shape, const OffsetGatherSpec& spec,
                                bool offsets, bool angles, const AngleGatherSpec& angle_spec);

} // namespace rtm
