// Image volumes (/image, /illumination, ...) written with the model's grid attributes.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

struct NamedVolume {
  std::string name;          // dataset name, e.g. "image"
  const std::vector<float>* data; // [nz][ny][nx] of the grid below
  std::string units;              // written as the dataset's "units" attribute when not empty
};

// The units attributes of a migration's volumes (docs/rtm.md, section 5). The source wavelet has no
// physical amplitude, so the sums carry its arbitrary scale; the normalised image does not.
inline const char* const kImageUnits =
    "relative amplitude (illumination-normalised, Laplacian-filtered cross-correlation)";
inline const char* const kIlluminationUnits = "arbitrary (sum over time steps of the squared source field)";
inline const char* const kRawImageUnits = "arbitrary (sum over time steps of source x receiver field)";

// A float32 array of any rank written beside the volumes (the gathers of `rtm migrate
// --offset-lags`): its dimensions, slowest first, each named (`axes`, written as "y,x,z,h"), with
// its sample spacing and first sample's coordinate (`spacing`, `origin`: doubles per dimension)
// and unit (`axis_units`, written as "m,m,m,m"); `units` as a volume's.
struct NamedArray {
  std::string name;
  const std::vector<float>* data = nullptr;
  std::vector<long long> dims;
  std::vector<std::string> axes, axis_units;
  std::vector<double> spacing, origin;
  std::string units;
};
// A NamedArray as read back (read_array).
struct ArrayInfo {
  std::vector<long long> dims;
  std::vector<std::string> axes, axis_units;
  std::vector<double> spacing, origin;
  std::string units;
};

// Writes each volume as float32 [nz][ny][nx] with spacing/origin/axes attributes from `grid`
// (its vp is not written), under a temporary name, renamed when complete; then the XDMF
// sidecar for ParaView (io/xdmf_sidecar.h). `attributes`: string attributes (name, value) of the
// file's root group, e.g. how the volumes were made.
// `arrays` are written into the same file (at least one volume or array).
void write_volumes(const std::string& path, const VelocityModel& grid,
                   const std::vector<NamedVolume>& volumes,
                   const std::vector<std::pair<std::string, std::string>>& attributes = {},
                   const std::vector<NamedArray>& arrays = {});
// write_volumes for volumes held in parts (each rank of a z-slab decomposition its own planes):
// the file is made under a temporary name with every dataset [nz][ny][nx] of `grid`, its grid and
// units attributes and `attributes`, no values yet; then write_parts(temporary) fills them (plane
// ranges by write_volume_planes, from whichever processes hold them, at once); then the file is
// renamed into place and the XDMF sidecar written. Only `volumes`' names and units are read.
void write_volumes_in_parts(const std::string& path, const VelocityModel& grid,
                            const std::vector<NamedVolume>& volumes,
                            const std::vector<std::pair<std::string, std::string>>& attributes,
                            const std::function<void(const std::string& temporary)>& write_parts);
// Writes planes z_first.. of volume `name` (values [planes][ny][nx], finite) into the file made by
// write_volumes_in_parts. Its datasets are contiguous float32, allocated when the file was made, so
// on a little-endian host the planes go straight to their bytes (pwrite at the dataset's offset,
// which HDF5 gives read-only): no HDF5 metadata changes, and processes holding other planes may
// write theirs at the same time. Any other dataset takes an HDF5 hyperslab write (one writer at a
// time).
void write_volume_planes(const std::string& temporary, const std::string& name, int z_first,
                         const std::vector<float>& values);

// Writes a float64 [n] dataset `name` (finite values) with a "units" attribute and the string
// `attributes` into an existing HDF5 file (opened, written, closed): a run's history beside its
// volumes, e.g. into the temporary file of write_volumes_in_parts before it is renamed.
void write_series_dataset(const std::string& temporary, const std::string& name,
                          const std::vector<double>& values, const std::string& units,
                          const std::vector<std::pair<std::string, std::string>>& attributes = {});

// Whether `path` (an HDF5 file; InputError otherwise) has an object named `name` at its root.
bool hdf5_has_member(const std::string& path, const std::string& name);

// Reads an array written by write_volumes' `arrays` (its dimensions and attributes into `info`):
// InputError naming the file and dataset where it is missing or its attributes do not match its
// rank.
std::vector<float> read_array(const std::string& path, const std::string& name, ArrayInfo& info);

// Reads one volume written by write_volumes (shape and grid attributes into `grid`).
std::vector<float> read_volume(const std::string& path, const std::string& name,
                               VelocityModel& grid);

} // namespace rtm
