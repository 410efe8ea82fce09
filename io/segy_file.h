// SEG-Y in and out, through libsegyio (docs/io.md, "SEG-Y").
//
// Volumes (velocity models, images) use the 3-D post-stack layout: one trace per (inline,
// crossline) pair, numbers in trace-header bytes 189 and 193, the trace's position in CDP_X / CDP_Y
// (bytes 181 / 185) scaled by byte 71, one sample per depth cell. rtm's axes map onto them as
//   x  <->  crossline (trace position along an inline),  y  <->  inline,  z  <->  sample.
// Depth SEG-Y has no depth-step field: by the common convention the sample-interval field
// (binary header bytes 3217, trace header 117, "microseconds") holds the depth step in
// millimetres; an importer may override it. Files rtm writes also carry the exact grid (spacing,
// origin, dt) in a text-header line, so a round trip through rtm loses nothing.
//
// Shot gathers use the pre-stack layout: one trace per (shot, receiver), the shot number in byte 9
// (field record), source x/y in 73/77 and depth in 49, receiver x/y in 81/85 and elevation in 41
// (elevation = -depth), coordinates scaled by byte 71 and depths by byte 69.
#pragma once

#include <string>
#include <vector>

#include "io/shot_file.h"
#include "io/velocity_model.h"

namespace rtm {

// Whether a file name says SEG-Y (.sgy or .segy, either case): how import and export pick a format.
inline bool has_segy_extension(const std::string& path) {
  for (const char* tail : {".sgy", ".segy", ".SGY", ".SEGY"}) {
    const std::string t = tail;
    if (path.size() >= t.size() && path.compare(path.size() - t.size(), t.size(), t) == 0) return true;
  }
  return false;
}

// False when this build has no libsegyio: every function below then throws InputError saying so.
bool segy_supported();

struct SegyVolumeReadOptions {
  double dz = 0;         // depth step (m); 0: the sample-interval field read as millimetres
  double dx = 0, dy = 0; // spacing (m) for files whose traces carry no coordinates; 0: from them
};

// A regular grid read from a 3-D post-stack SEG-Y file: shape, spacing, origin and the samples
// (values as stored, e.g. velocities in the file's units) in rtm's [nz][ny][nx] order. InputError
// naming the file and what is wrong: not SEG-Y, truncated, a sample format other than 4-byte IBM or
// IEEE float, inline/crossline pairs missing or repeated, irregular line numbers, coordinates that
// do not form a regular grid, or none at all without dx/dy given, non-finite samples.
VelocityModel read_segy_volume(const std::string& path, const SegyVolumeReadOptions& options = {});

// Writes `values` ([nz][ny][nx] on `grid`'s shape, spacing and origin; grid.vp is not used) as a
// 3-D post-stack SEG-Y file of IEEE floats, inline = j + 1, crossline = i + 1. `description` goes
// into the text header (e.g. "velocity (m/s)"). Atomic: written under a temporary name.
void write_segy_volume(const std::string& path, const VelocityModel& grid,
                       const std::vector<float>& values, const std::string& description);

// Reads pre-stack shot gathers: traces grouped into shots by field record number (byte 9), the
// source and receiver positions from the trace headers. Each shot keeps its own receivers (any
// number, in trace order); when every shot has the same ones they become the shared spread
// (ShotFile::receivers) instead. SEG-Y carries no source wavelet: the result's wavelet is empty
// and f0 = t0 = 0, for the caller to fill in. InputError as for volumes, plus missing coordinates
// and traces of one shot with different source positions.
ShotFile read_segy_shots(const std::string& path);

// Writes every gather of `shots` (one trace per receiver of that shot, its own or the shared
// spread's) as pre-stack SEG-Y. The sample interval
// field holds dt in whole microseconds; the exact dt is kept in the text header.
void write_segy_shots(const std::string& path, const ShotFile& shots);

} // namespace rtm
