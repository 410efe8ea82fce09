// Shot gathers in HDF5 (docs/io.md):
//   /receivers           float64 [nrec][3] (z,y,x, metres): the shared spread, used by every shot
//                        without receivers of its own; absent when every shot has its own
//   /wavelet             float32 [nt]; attributes dt (s), f0 (Hz), t0 (s)
//   /shots/NNNN/data     float32 [nrec][nt]; attribute source [z,y,x] (m); nrec is the shot's
//                        receiver count
//   /shots/NNNN/receivers float64 [nrec][3] (z,y,x, metres), optional: this shot's own receivers
//                        (a moving spread, a streamer, a land patch)
//   root attributes      nt, dt, and the model's shape [nz,ny,nx], spacing and origin (optional);
//                        time_dispersion_removed (0/1, optional, 0 when absent): the traces had
//                        the time-stepping dispersion removed (solvers/drivers/time_dispersion.h)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct ShotGather {
  int id = 0;
  Position source{};
  std::vector<float> data; // [nrec][nt], nrec = ShotFile::receivers_of(*this).size()
  // This shot's own receivers (moving spreads); empty: the file's shared `receivers`.
  std::vector<Position> receivers;
  // The field record number (SEG-Y byte 9) the shot had in the file it was imported from, written
  // back by `rtm export`; none for a modelled shot (exported as id + 1).
  std::optional<long long> field_record;
};

struct ShotFile {
  int nt = 0;
  double dt = 0, f0 = 0, t0 = 0;
  std::vector<float> wavelet; // [nt]
  // The shared spread: the receivers of every shot that has none of its own (ShotGather::receivers).
  // May be empty when every shot has its own.
  std::vector<Position> receivers;
  // The traces are time-continuous ones (the inverse time-dispersion transform was applied): a
  // migration stepping in time must give them, and the wavelet, the forward transform.
  bool time_dispersion_removed = false;
  // The positions are in a survey frame turned by this angle from the world's (io/survey_frame.h):
  // shots imported into a rotated model's frame (`rtm import shots --frame`); 0: world coordinates.
  double survey_rotation = 0;
  // Grid the shots were modelled on (informational; migration may use another model).
  int nx = 0, ny = 0, nz = 0;
  double dx = 0, dy = 0, dz = 0, ox = 0, oy = 0, oz = 0;
  std::vector<ShotGather> shots;

  // The receivers of `shot`: its own, else the shared spread.
  const std::vector<Position>& receivers_of(const ShotGather& shot) const {
    return shot.receivers.empty() ? receivers : shot.receivers;
  }
  // Whether any shot has receivers of its own (a per-shot layout).
  bool has_per_shot_receivers() const;
  // Whether some shot uses the shared spread.
  bool uses_shared_receivers() const;
  // The most receivers of any shot (sizes buffers); the fewest (for messages).
  size_t max_receivers() const;
  size_t min_receivers() const;
};

// "24 receivers" for a shared spread, "per-shot spreads of 12 to 24 receivers" otherwise.
std::string describe_receiver_counts(const ShotFile& file);

// Written under a temporary name and renamed when complete.
void write_shot_file(const std::string& path, const ShotFile& file);
// Checks shapes (every gather [nrec][nt], nrec its shot's receivers), finiteness and attributes;
// InputError on failure. Files of the shared-spread layout (no /shots/NNNN/receivers) read as before.
ShotFile read_shot_file(const std::string& path);
// The same without the traces (every ShotGather::data empty): sources, receivers, time axis and
// wavelet, for a run that needs only the acquisition (`rtm model --geometry`).
ShotFile read_shot_geometry(const std::string& path);

// Throws InputError when `model` (read from `model_path`) is not on the grid `shots` (read from
// `shots_path`) were modelled on, saying exactly what differs: the shape, the spacing, the origin,
// or x and y swapped. A shot file without the grid attributes (written by older versions, or not
// by `rtm model`) passes: then only the positions (inside the model) and dt (stable in it) are
// checked, later, by the migration itself.
void check_modeling_grid(const ShotFile& shots, const std::string& shots_path,
                         const VelocityModel& model, const std::string& model_path);

} // namespace rtm
