// Small helpers over the HDF5 C API, shared by the io/ readers and writers (not part of the
// interface other layers use): owning handles, silencing HDF5's own error printing, checked reads
// of datasets and attributes with messages that name the file and object, and atomic file writing.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <hdf5.h>

#include "io/velocity_model.h"

namespace rtm::h5 {

// Move-only owner of an HDF5 identifier; `Close` runs when it goes out of scope, so every early
// return and exception releases what was opened.
template <herr_t (*Close)(hid_t)>
class Handle {
public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& other) noexcept : id_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.release();
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  operator hid_t() const { return id_; } // NOLINT: stands in for the hid_t it owns
  bool valid() const { return id_ >= 0; }
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  void reset() {
    if (id_ >= 0) Close(id_);
    id_ = -1;
  }
  // Closes now and returns HDF5's status: closing a file flushes it, so a failure there means
  // the file on disk is incomplete and the caller must know.
  herr_t close() {
    const herr_t status = id_ >= 0 ? Close(id_) : 0;
    id_ = -1;
    return status;
  }

private:
  hid_t id_ = -1;
};

using File = Handle<H5Fclose>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Attribute = Handle<H5Aclose>;
using Datatype = Handle<H5Tclose>;
using PropertyList = Handle<H5Pclose>;
using Object = Handle<H5Oclose>;

// While alive, HDF5 prints nothing on failures (we turn failures into our own messages); the
// previous setting is restored afterwards.
class ErrorStackSilencer {
public:
  ErrorStackSilencer();
  ~ErrorStackSilencer();
  ErrorStackSilencer(const ErrorStackSilencer&) = delete;
  ErrorStackSilencer& operator=(const ErrorStackSilencer&) = delete;

private:
  H5E_auto2_t saved_function_ = nullptr;
  void* saved_data_ = nullptr;
};

// The innermost message on HDF5's error stack (where the failure was detected), or "" if none.
std::string last_hdf5_error();

// "[3][4][5]"
std::string shape_string(const std::vector<hsize_t>& dims);

// --- Reading: every failure is an InputError whose message starts with the file name. ----------

// Opens an existing file read-only: "<path>: no such file" / "<path>: not an HDF5 file".
File open_file_for_reading(const std::string& path);

// True if every component of `path` ("shots/0001/data") exists under `location`.
bool link_exists(hid_t location, const std::string& path);

// The canonical display name of an object: "vp" -> "/vp".
std::string absolute_name(const std::string& name);

// The name of link `index` of `group` in name order, or nothing where HDF5 cannot give it or it is
// longer than `longest` characters (a corrupt file's length is not allocated).
std::optional<std::string> link_name_at(hid_t group, hsize_t index,
                                        size_t longest = std::numeric_limits<size_t>::max());

// What a file holds instead of what a reader expected, as the tail of its "not found" message:
// "; the file is a shot file (it holds /shots), not a velocity model" when it is another kind of
// rtm file (a shot file, an image, a velocity model), else "; the file's root holds /a, /b" (the
// first few names), or "; the file's root is empty". `expected_kind` names the reader's kind
// ("a velocity model", "a shot file"); a file of that same kind gets the list of names.
std::string contents_hint(hid_t file_id, const std::string& expected_kind);
// Only the names: "; the file's root holds /a, /b" or "; the file's root is empty".
std::string root_names_hint(hid_t file_id);

// Opens dataset `name`: "<file>: dataset /vp not found" or "... is a group, not a dataset".
Dataset open_dataset(hid_t file_id, const std::string& file, const std::string& name);
// Opens group `name`, with the same kind of messages.
Group open_group(hid_t file_id, const std::string& file, const std::string& name);

std::vector<hsize_t> dataset_shape(hid_t dataset, const std::string& file, const std::string& name);
// "float32", "float64", "int16", "uint8", "string", "compound", ...
std::string type_description(hid_t type);
// Accepts float32 and float64 (converted on reading); otherwise "<file>: dataset /vp has type
// int32; expected float32 or float64".
void require_float_dataset(hid_t dataset, const std::string& file, const std::string& name);
// "<file>: dataset /vp has rank 2; expected 3 ([nz][ny][nx])"
void require_rank(const std::vector<hsize_t>& dims, size_t rank, const std::string& file,
                  const std::string& name, const std::string& layout);

// Reads a whole dataset, converted to float or double.
std::vector<float> read_floats(hid_t dataset, const std::string& file, const std::string& name);
std::vector<double> read_doubles(hid_t dataset, const std::string& file, const std::string& name);

bool has_attribute(hid_t object, const std::string& name);
// "<file>: attribute spacing of /vp", the subject of messages about that attribute.
std::string attribute_subject(const std::string& file, const std::string& object,
                              const std::string& attribute);
// A numeric attribute (any integer or float type) with exactly `count` values, as doubles;
// `meaning` says what the values are ("[dz,dy,dx] in metres") for the message when it is wrong.
std::vector<double> read_double_attribute(hid_t object, const std::string& name, size_t count,
                                          const std::string& subject, const std::string& meaning);
// A string attribute (fixed or variable length, one value), trailing NULs and spaces removed.
std::string read_string_attribute(hid_t object, const std::string& name, const std::string& subject);

// --- Writing: failures throw std::runtime_error naming the file and what was being written. -----

// Creates `path` through a temporary file: fill(file) writes the content, the file is closed
// (flushed) and renamed onto `path`. On any failure nothing is left behind, neither `path` nor the
// temporary; a directory that does not exist or cannot be written to is an InputError.
void write_hdf5_atomically(const std::string& path, const std::function<void(hid_t file)>& fill);
// The same, and then(temporary) after the file is closed, before it is renamed: more written into
// it by hyperslab, by this process or by others in turn (a file written in parts by several ranks).
void write_hdf5_atomically(const std::string& path, const std::function<void(hid_t file)>& fill,
                           const std::function<void(const std::string& temporary)>& then);

Group create_group(hid_t location, const std::string& name, const std::string& file);
// Writes float32 (from float) or float64 (from double) data; returns the dataset for attributes.
Dataset write_dataset(hid_t location, const std::string& name, const std::vector<hsize_t>& dims,
                      const float* values, const std::string& file);
Dataset write_dataset(hid_t location, const std::string& name, const std::vector<hsize_t>& dims,
                      const double* values, const std::string& file);
// Distinct names rather than overloads: an int argument would be ambiguous between double and int64.
void write_doubles_attribute(hid_t object, const std::string& name,
                             const std::vector<double>& values, const std::string& file); // f64 [n]
void write_double_attribute(hid_t object, const std::string& name, double value,
                            const std::string& file); // float64 scalar
void write_integer_attribute(hid_t object, const std::string& name, long long value,
                             const std::string& file); // int64 scalar
void write_integers_attribute(hid_t object, const std::string& name,
                              const std::vector<long long>& values, const std::string& file); // i64 [n]
void write_string_attribute(hid_t object, const std::string& name, const std::string& value,
                            const std::string& file); // variable-length UTF-8 string

// --- Pieces of the layout shared by several files (docs/io.md) ----------------------------------

// Reads a float [nz][ny][nx] dataset and its grid attributes (spacing required and positive,
// origin optional, axes optional but "z,y,x" if present) into `grid`'s shape, spacing and origin
// (grid.vp is not touched). Checks the shape is sane and every value finite.
std::vector<float> read_grid_dataset(hid_t file_id, const std::string& file, const std::string& name,
                                     VelocityModel& grid);
// The same checks, but only planes z_begin <= z < z_end are read (an HDF5 hyperslab) and checked
// finite: what one rank of a z-slab decomposition holds. `grid` gets the whole dataset's shape.
// z_end < 0 reads every plane. Any per-cell float dataset of a model file can be read this way.
std::vector<float> read_grid_planes(hid_t file_id, const std::string& file, const std::string& name,
                                    VelocityModel& grid, int z_begin, int z_end);
// Writes `values` ([nz][ny][nx] of `grid`) as float32 with spacing, origin and axes attributes.
Dataset write_grid_dataset(hid_t location, const std::string& name, const VelocityModel& grid,
                           const std::vector<float>& values, const std::string& file);

// Coordinate vectors /z, /y, /x (metres; made once per file) attached to `dataset`'s three
// dimensions as HDF5 dimension scales, so netCDF/xarray tools show depth and distance axes.
void attach_grid_scales(hid_t file_id, hid_t dataset, const VelocityModel& grid,
                        const std::string& file);

// Reads a float [n][3] dataset of (z,y,x) positions, every value finite.
std::vector<Position> read_positions(hid_t file_id, const std::string& file, const std::string& name);
// Writes positions as float64 [n][3].
void write_positions(hid_t location, const std::string& name, const std::vector<Position>& positions,
                     const std::string& file);

// "[10, 0, 10]", for messages.
std::string values_string(const std::vector<double>& values);

} // namespace rtm::h5
