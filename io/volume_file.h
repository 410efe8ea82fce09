// Image volumes (/image, /illumination, ...) written with the model's grid attributes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct NamedVolume {
  std::string name;          // dataset name, e.g. "image"
  const std::vector<float>* data; // [nz][ny][nx] of the grid below
};

// Writes each volume as float32 [nz][ny][nx] with spacing/origin/axes attributes from `grid`
// (its vp is not written), under a temporary name, renamed when complete. `attributes`: string
// attributes (name, value) of the file's root group, e.g. how the volumes were made.
void write_volumes(const std::string& path, const VelocityModel& grid,
                   const std::vector<NamedVolume>& volumes,
                   const std::vector<std::pair<std::string, std::string>>& attributes = {});
// Reads one volume written by write_volumes (shape and grid attributes into `grid`).
std::vector<float> read_volume(const std::string& path, const std::string& name,
                               VelocityModel& grid);

} // namespace rtm
