// Shot gathers in HDF5:
//   /receivers           float64 [nrec][3] (z,y,x, metres), shared by all shots
//   /wavelet             float32 [nt]; attributes dt (s), f0 (Hz), t0 (s)
//   /shots/NNNN/data     float32 [nrec][nt]; attribute source [z,y,x] (m)
//   root attributes      nt, dt, and the model's shape [nz,ny,nx], spacing and origin (optional);
//                        time_dispersion_removed (0/1, optional, 0 when absent): the traces had
//                        the time-stepping dispersion removed (solvers/drivers/time_dispersion.h)
#pragma once

#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct ShotGather {
  int id = 0;
  Position source{};
  std::vector<float> data; // [nrec][nt]
};

struct ShotFile {
  int nt = 0;
  double dt = 0, f0 = 0, t0 = 0;
  std::vector<float> wavelet; // [nt]
  std::vector<Position> receivers;
  // The traces are time-continuous ones (the inverse time-dispersion transform was applied): a
  // migration stepping in time must give them, and the wavelet, the forward transform.
  bool time_dispersion_removed = false;
  // Grid the shots were modelled on (informational; migration may use another model).
  int nx = 0, ny = 0, nz = 0;
  double dx = 0, dy = 0, dz = 0, ox = 0, oy = 0, oz = 0;
  std::vector<ShotGather> shots;
};

// Written under a temporary name and renamed when complete.
void write_shot_file(const std::string& path, const ShotFile& file);
// Checks shapes (every gather [nrec][nt]), finiteness and attributes; InputError on failure.
ShotFile read_shot_file(const std::string& path);

// Throws InputError when `model` (read from `model_path`) is not on the grid `shots` (read from
// `shots_path`) were modelled on, saying exactly what differs: the shape, the spacing, the origin,
// or x and y swapped. A shot file without the grid attributes (written by older versions, or not
// by `rtm model`) passes: then only the positions (inside the model) and dt (stable in it) are
// checked, later, by the migration itself.
void check_modeling_grid(const ShotFile& shots, const std::string& shots_path,
                         const VelocityModel& model, const std::string& model_path);

} // namespace rtm
