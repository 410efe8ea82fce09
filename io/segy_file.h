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
#include "io/survey_frame.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"

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

// Where the trace headers keep what rtm reads: 1-based byte positions of 4-byte integer fields
// (the standard's, or a non-standard layout's, as segyio.open(iline=..., xline=...) takes them).
struct SegyHeaderBytes {
  int inline_number = 189, crossline_number = 193; // volumes
  int cdp_x = 181, cdp_y = 185;                    // volumes: each trace's position
  int field_record = 9;                            // shots: the traces of one shot
  int source_x = 73, source_y = 77, group_x = 81, group_y = 85; // shots
};
// Throws InputError unless `byte` starts a 4-byte field of the standard trace header (1, 5, 9,
// ..., 181, 185, 189, 193, 197, 233, 237); `option` names it in the message ("--iline-byte").
void check_header_byte(int byte, const std::string& option);

struct SegyVolumeReadOptions {
  double dz = 0;         // depth step (m); 0: the sample-interval field read as millimetres
  double dx = 0, dy = 0; // spacing (m) for files whose traces carry no coordinates; 0: from them
  SegyHeaderBytes bytes;
};

// A regular grid read from a 3-D post-stack SEG-Y file and the survey it lies in.
struct SegyVolume {
  VelocityModel grid; // shape, spacing, origin (in the frame's coordinates) and samples
  SurveyFrame frame;  // how rtm's axes lie in the survey (io/survey_frame.h); always known
};

// Reads a 3-D post-stack SEG-Y file of any byte order and any sample format libsegyio reads
// (4-byte IBM or IEEE floats, 4-, 2- or 1-byte integers): shape, spacing, origin and the samples
// (values as stored, e.g. velocities in the file's units, integers as floats) in rtm's [nz][ny][nx]
// order. rtm's x and y are the world's X and Y when the survey's lines run along them (in any
// order and direction: the grid is re-framed and the frame says how); a survey turned by another
// angle keeps its own frame, turned from the world's by frame.rotation_deg. InputError naming the
// file, the header field and its value: not SEG-Y, truncated, a sample format libsegyio does not
// read, inline/crossline pairs missing or repeated (with what the file looks like instead: pre-
// stack offsets, shot gathers), irregular line numbers, coordinates off a regular rectangular
// grid, none at all without dx/dy given, no usable sample interval, non-finite samples.
SegyVolume read_segy_survey_volume(const std::string& path, const SegyVolumeReadOptions& options = {});
// The grid alone.
VelocityModel read_segy_volume(const std::string& path, const SegyVolumeReadOptions& options = {});

// Writes `values` ([nz][ny][nx] on `grid`'s shape, spacing and origin; grid.vp is not used) as a
// 3-D post-stack SEG-Y file of IEEE floats, traces in inline order. With a known `frame` the
// inlines, crosslines and CDP coordinates are the survey's (its numbering, its world coordinates);
// without one, inline = j + 1, crossline = i + 1 and CDP = (x, y). `description` goes into the
// text header (e.g. "velocity (m/s)"). Atomic: written under a temporary name.
void write_segy_volume(const std::string& path, const VelocityModel& grid,
                       const std::vector<float>& values, const std::string& description,
                       const SurveyFrame& frame = {});

struct SegyShotReadOptions {
  SegyHeaderBytes bytes;
  // Express the positions in this frame (a rotated model's: `rtm import shots --frame`); world
  // coordinates when unknown or not rotated.
  SurveyFrame frame;
  double dt = 0; // time step (s); 0: from the sample-interval fields
};

// Reads pre-stack shot gathers: traces grouped into shots by field record number (byte 9), the
// source and receiver positions from the trace headers. Each shot keeps its own receivers (any
// number, in trace order); when every shot has the same ones they become the shared spread
// (ShotFile::receivers) instead. Each shot keeps its field record number. SEG-Y carries no source
// wavelet: the result's wavelet is empty and f0 = t0 = 0, for the caller to fill in. InputError as
// for volumes, plus missing coordinates and traces of one record with different source positions.
ShotFile read_segy_shots(const std::string& path, const SegyShotReadOptions& options = {});

// Writes every gather of `shots` (one trace per receiver of that shot, its own or the shared
// spread's) as pre-stack SEG-Y: each shot's field record (or its number + 1), positions in world
// coordinates (turned back from shots.survey_rotation). The sample interval field holds dt in
// whole microseconds; the exact dt is kept in the text header.
void write_segy_shots(const std::string& path, const ShotFile& shots);

// Common-image gathers (`rtm migrate --offset-lags`, docs/rtm.md section 5d): `values` dense
// [gather y][gather x][z][lag or angle] as io/volume_file.h's ArrayInfo describes them (rank 4,
// axes y, x, z and the gather's own). One trace per (gather y, gather x, lag or angle), in that
// order, samples along z: inline (byte 189) = gather y + 1, crossline (193) = gather x + 1, CDP_X/
// CDP_Y (181/185) the position in metres (scalar byte 71), offset (byte 37) the lag in metres or the
// angle in degrees, rounded (the exact axes in the text header); depth step as in volumes.
void write_segy_gathers(const std::string& path, const ArrayInfo& info,
                        const std::vector<float>& values, const std::string& description);

} // namespace rtm
