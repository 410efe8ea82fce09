#include "io/hdf5_util.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

#include <hdf5_hl.h>

#include "io/atomic_file.h"
#include "io/provenance.h"
#include "solvers/contracts/errors.h"
#include "io/host_memory.h"

namespace rtm::h5 {
namespace {

// More cells than this (64 GiB of float32) is taken as a corrupt or mistaken file, not a model.
constexpr long long kMaxGridCells = 1LL << 34;

[[noreturn]] void fail_reading(const std::string& file, const std::string& what) {
  const std::string detail = last_hdf5_error();
  throw InputError(file + ": " + what + (detail.empty() ? "" : " (HDF5: " + detail + ")"));
}

[[noreturn]] void fail_writing(const std::string& file, const std::string& what) {
  const std::string detail = last_hdf5_error();
  throw std::runtime_error(file + ": " + what + " failed" +
                           (detail.empty() ? "" : " (HDF5: " + detail + ")"));
}

std::string relative_name(const std::string& name) {
  size_t start = 0;
  while (start < name.size() && name[start] == '/') ++start;
  return name.substr(start);
}

std::string format_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

herr_t record_innermost(unsigned depth, const H5E_error2_t* error, void* message) {
  if (depth == 0 && error->desc) *static_cast<std::string*>(message) = error->desc;
  return 0;
}

} // namespace

ErrorStackSilencer::ErrorStackSilencer() {
  H5Eget_auto2(H5E_DEFAULT, &saved_function_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

ErrorStackSilencer::~ErrorStackSilencer() { H5Eset_auto2(H5E_DEFAULT, saved_function_, saved_data_); }

std::string last_hdf5_error() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, record_innermost, &message);
  return message;
}

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string text;
  for (hsize_t d : dims) text += "[" + std::to_string(static_cast<unsigned long long>(d)) + "]";
  return text.empty() ? "[] (a scalar)" : text;
}

std::string values_string(const std::vector<double>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + format_value(values[i]);
  return text + "]";
}

std::string absolute_name(const std::string& name) { return "/" + relative_name(name); }

// ---- Reading -------------------------------------------------------------------------------------

namespace {

// What a file that is not HDF5 looks like, and the command that converts it ("" when it looks
// like nothing rtm imports): NumPy's magic bytes, or a SEG-Y file by its name or by the 'C' in
// EBCDIC (0xC3) that opens nearly every SEG-Y textual header.
std::string not_hdf5_hint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[6] = {};
  in.read(head, sizeof head);
  const std::string magic(head, size_t(in.gcount()));
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (magic == std::string("\x93NUMPY", 6) || extension == ".npy")
    return "; it is a NumPy array: convert it with `rtm import model " + path +
           " --spacing D -o model.h5` (D: the cell size in metres)";
  if (extension == ".sgy" || extension == ".segy" ||
      (!magic.empty() && static_cast<unsigned char>(magic[0]) == 0xC3))
    return "; it looks like SEG-Y: convert it with `rtm import model " + path +
           " -o model.h5` (a velocity model) or `rtm import shots " + path +
           " --f0 F -o shots.h5` (shot gathers; F: the wavelet's peak frequency in Hz)";
  if (extension == ".bin" || extension == ".raw")
    return "; for raw float32 velocities: convert them with `rtm import model " + path +
           " --shape NX,NY,NZ --spacing D -o model.h5`";
  return "";
}

} // namespace

File open_file_for_reading(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path + ": no such file");
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a directory; expected an HDF5 file");
  if (!std::ifstream(path)) throw InputError(path + ": cannot be opened for reading");
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) fail_reading(path, "cannot be read as an HDF5 file");
  if (is_hdf5 == 0) throw InputError(path + ": not an HDF5 file" + not_hdf5_hint(path));
  File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) fail_reading(path, "cannot open the HDF5 file");
  return file;
}

bool link_exists(hid_t location, const std::string& path) {
  const std::string relative = relative_name(path);
  if (relative.empty()) return false;
  // H5Lexists fails (rather than answering false) when an intermediate group is missing, so each
  // prefix is checked in turn.
  size_t end = 0;
  while (end != std::string::npos) {
    end = relative.find('/', end + 1);
    const std::string prefix = relative.substr(0, end);
    if (H5Lexists(location, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

std::optional<std::string> link_name_at(hid_t group, hsize_t index, size_t longest) {
  // By index rather than H5Literate, whose callback's signature differs between HDF5 1.10 and 1.12.
  const ssize_t length =
      H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, nullptr, 0, H5P_DEFAULT);
  if (length < 0 || size_t(length) > longest) return std::nullopt;
  std::string name(size_t(length) + 1, '\0');
  if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, name.data(), name.size(),
                         H5P_DEFAULT) != length)
    return std::nullopt;
  name.resize(size_t(length));
  return name;
}

std::string contents_hint(hid_t file_id, const std::string& expected_kind) {
  // The object each kind of rtm file is known by (docs/io.md). rtm writes each into one kind of
  // file only; the order decides for a file someone made with several.
  static const std::pair<const char*, const char*> kinds[] = {
      {"shots", "a shot file"}, {"image", "an image"}, {"vp", "a velocity model"}};
  for (const auto& [name, kind] : kinds)
    if (kind != expected_kind && link_exists(file_id, name))
      return std::string("; the file is ") + kind + " (it holds /" + name + "), not " + expected_kind;
  return root_names_hint(file_id);
}

std::string root_names_hint(hid_t file_id) {
  H5G_info_t root{};
  if (H5Gget_info(file_id, &root) < 0) return "";
  if (root.nlinks == 0) return "; the file's root is empty";
  constexpr hsize_t kShown = 6;
  std::string list;
  for (hsize_t n = 0; n < std::min<hsize_t>(root.nlinks, kShown); ++n) {
    const std::optional<std::string> name = link_name_at(file_id, n, 1024);
    if (!name) return "";
    list += (n ? ", /" : " /") + *name;
  }
  if (root.nlinks > kShown) list += " and " + std::to_string(root.nlinks - kShown) + " more";
  return "; the file's root holds" + list;
}

namespace {

// Opens `name` as any object and returns its kind, after checking it exists.
H5I_type_t object_kind(hid_t file_id, const std::string& file, const std::string& name,
                       const std::string& expected_kind) {
  if (!link_exists(file_id, name))
    throw InputError(file + ": " + expected_kind + " " + absolute_name(name) + " not found" +
                     (relative_name(name).find('/') == std::string::npos ? root_names_hint(file_id)
                                                                         : ""));
  Object object(H5Oopen(file_id, relative_name(name).c_str(), H5P_DEFAULT));
  if (!object.valid()) fail_reading(file, "cannot open " + absolute_name(name));
  return H5Iget_type(object);
}

} // namespace

Dataset open_dataset(hid_t file_id, const std::string& file, const std::string& name) {
  const H5I_type_t kind = object_kind(file_id, file, name, "dataset");
  if (kind != H5I_DATASET)
    throw InputError(file + ": " + absolute_name(name) + " is " +
                     (kind == H5I_GROUP ? "a group" : "not a dataset") + "; expected a dataset");
  Dataset dataset(H5Dopen2(file_id, relative_name(name).c_str(), H5P_DEFAULT));
  if (!dataset.valid()) fail_reading(file, "cannot open dataset " + absolute_name(name));
  return dataset;
}

Group open_group(hid_t file_id, const std::string& file, const std::string& name) {
  const H5I_type_t kind = object_kind(file_id, file, name, "group");
  if (kind != H5I_GROUP)
    throw InputError(file + ": " + absolute_name(name) + " is " +
                     (kind == H5I_DATASET ? "a dataset" : "not a group") + "; expected a group");
  Group group(H5Gopen2(file_id, relative_name(name).c_str(), H5P_DEFAULT));
  if (!group.valid()) fail_reading(file, "cannot open group " + absolute_name(name));
  return group;
}

std::vector<hsize_t> dataset_shape(hid_t dataset, const std::string& file, const std::string& name) {
  Dataspace space(H5Dget_space(dataset));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank < 0) fail_reading(file, "cannot read the shape of dataset " + absolute_name(name));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

std::string type_description(hid_t type) {
  const size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
  case H5T_FLOAT: return "float" + std::to_string(bits);
  case H5T_INTEGER:
    return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
  case H5T_STRING: return "string";
  case H5T_COMPOUND: return "compound";
  case H5T_ENUM: return "enum";
  case H5T_ARRAY: return "array";
  case H5T_VLEN: return "variable-length";
  case H5T_OPAQUE: return "opaque";
  case H5T_BITFIELD: return "bitfield";
  case H5T_REFERENCE: return "reference";
  default: return "unknown";
  }
}

void require_float_dataset(hid_t dataset, const std::string& file, const std::string& name) {
  Datatype type(H5Dget_type(dataset));
  if (!type.valid()) fail_reading(file, "cannot read the type of dataset " + absolute_name(name));
  const size_t bytes = H5Tget_size(type);
  if (H5Tget_class(type) != H5T_FLOAT || (bytes != 4 && bytes != 8))
    throw InputError(file + ": dataset " + absolute_name(name) + " has type " +
                     type_description(type) + "; expected float32 or float64");
}

void require_rank(const std::vector<hsize_t>& dims, size_t rank, const std::string& file,
                  const std::string& name, const std::string& layout) {
  if (dims.size() != rank)
    throw InputError(file + ": dataset " + absolute_name(name) + " has rank " +
                     std::to_string(dims.size()) + "; expected " + std::to_string(rank) + " (" +
                     layout + ")");
}

namespace {

// Deflate, the strongest filter HDF5 ships, cannot expand data more than 1032:1.
constexpr double kMaxExpansion = 1100.0;

// Refuses, before anything is allocated, a dataset whose declared size cannot be real: a corrupt or
// truncated file may declare any shape, and allocating it would end in std::bad_alloc or the
// out-of-memory killer instead of a message. Returns the number of values.
// `whole_in_memory` false: only part of it is read (a hyperslab of planes); the file's size is
// still checked (a truncated file reads as zeros otherwise), the memory is the caller's to check.
hsize_t checked_value_count(hid_t dataset, size_t memory_element_bytes, const std::string& file,
                            const std::string& name, bool whole_in_memory = true) {
  const std::string shown = absolute_name(name);
  const std::vector<hsize_t> dims = dataset_shape(dataset, file, name);
  hsize_t count = 1;
  for (hsize_t d : dims) {
    if (d != 0 && count > std::numeric_limits<hsize_t>::max() / d)
      throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) +
                       ", more values than can be counted (a corrupt file?)");
    count *= d;
  }
  if (count == 0) return 0;

  Datatype type(H5Dget_type(dataset));
  PropertyList creation(H5Dget_create_plist(dataset));
  if (!type.valid() || !creation.valid())
    fail_reading(file, "cannot read the type and layout of dataset " + shown);
  const H5D_layout_t layout = H5Pget_layout(creation);
  if (layout == H5D_VIRTUAL || H5Pget_external_count(creation) > 0)
    throw InputError(file + ": dataset " + shown +
                     " keeps its data in other files (a virtual or external dataset); expected "
                     "the data in this file");
  const int filters = H5Pget_nfilters(creation);
  const File owner(H5Iget_file_id(dataset));
  hsize_t file_bytes = 0;
  if (!owner.valid() || H5Fget_filesize(owner, &file_bytes) < 0)
    fail_reading(file, "cannot read the size of the file");
  const double stored_bytes = double(count) * double(H5Tget_size(type));
  const double most = double(file_bytes) * (filters > 0 ? kMaxExpansion : 1.0);
  if (stored_bytes > most)
    throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) + " (" +
                     format_value(stored_bytes) + " bytes), more than a " +
                     std::to_string(static_cast<unsigned long long>(file_bytes)) + "-byte file " +
                     (filters > 0 ? "can hold even compressed" : "holds") +
                     " (a truncated or corrupt file?)");
  if (!whole_in_memory) return count;
  const double memory_bytes = double(count) * double(memory_element_bytes);
  const uint64_t available = host_available_bytes();
  if (available > 0 && memory_bytes > double(available))
    throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) +
                     "; reading it needs " + format_value(memory_bytes / double(1ull << 30)) +
                     " GiB of memory, and only " + format_value(double(available) / double(1ull << 30)) +
                     " GiB are available (" + host_available_source() +
                     "): use a machine with more memory (rtm model and rtm migrate can also read a "
                     "model in slabs over several ranks: mpirun ... --ranks-per-shot N)");
  return count;
}

template <typename T>
std::vector<T> read_all(hid_t dataset, hid_t memory_type, const std::string& file,
                        const std::string& name) {
  const hsize_t count = checked_value_count(dataset, sizeof(T), file, name);
  std::vector<T> values(static_cast<size_t>(count));
  if (count > 0 &&
      H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    fail_reading(file, "cannot read dataset " + absolute_name(name));
  return values;
}

} // namespace

std::vector<float> read_floats(hid_t dataset, const std::string& file, const std::string& name) {
  return read_all<float>(dataset, H5T_NATIVE_FLOAT, file, name);
}

std::vector<double> read_doubles(hid_t dataset, const std::string& file, const std::string& name) {
  return read_all<double>(dataset, H5T_NATIVE_DOUBLE, file, name);
}

bool has_attribute(hid_t object, const std::string& name) {
  return H5Aexists(object, name.c_str()) > 0;
}

std::string attribute_subject(const std::string& file, const std::string& object,
                              const std::string& attribute) {
  return file + ": attribute " + attribute + " of " + absolute_name(object);
}

std::vector<double> read_double_attribute(hid_t object, const std::string& name, size_t count,
                                          const std::string& subject, const std::string& meaning) {
  const std::string expected = "expected " + std::to_string(count) +
                               (count == 1 ? " number" : " numbers") + " (" + meaning + ")";
  if (!has_attribute(object, name)) throw InputError(subject + " is missing; " + expected);
  Attribute attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  Datatype type(attribute.valid() ? H5Aget_type(attribute) : -1);
  Dataspace space(attribute.valid() ? H5Aget_space(attribute) : -1);
  if (!type.valid() || !space.valid())
    throw InputError(subject + " cannot be read (HDF5: " + last_hdf5_error() + ")");
  const H5T_class_t type_class = H5Tget_class(type);
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    throw InputError(subject + " has type " + type_description(type) + "; " + expected);
  const hssize_t found = H5Sget_simple_extent_npoints(space);
  if (found != static_cast<hssize_t>(count))
    throw InputError(subject + " has " + std::to_string(found) + " values; " + expected);
  std::vector<double> values(count);
  if (H5Aread(attribute, H5T_NATIVE_DOUBLE, values.data()) < 0)
    throw InputError(subject + " cannot be read (HDF5: " + last_hdf5_error() + ")");
  return values;
}

std::string read_string_attribute(hid_t object, const std::string& name, const std::string& subject) {
  if (!has_attribute(object, name)) throw InputError(subject + " is missing; expected a string");
  Attribute attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  Datatype file_type(attribute.valid() ? H5Aget_type(attribute) : -1);
  Dataspace space(attribute.valid() ? H5Aget_space(attribute) : -1);
  if (!file_type.valid() || !space.valid())
    throw InputError(subject + " cannot be read (HDF5: " + last_hdf5_error() + ")");
  if (H5Tget_class(file_type) != H5T_STRING)
    throw InputError(subject + " has type " + type_description(file_type) + "; expected a string");
  if (H5Sget_simple_extent_npoints(space) != 1)
    throw InputError(subject + " has " + std::to_string(H5Sget_simple_extent_npoints(space)) +
                     " values; expected one string");
  // A copy of the file's own string type (same character set and padding) is a valid memory type,
  // so HDF5 needs no conversion between ASCII and UTF-8 (which it refuses).
  Datatype memory_type(H5Tcopy(file_type));
  std::string value;
  if (H5Tis_variable_str(file_type) > 0) {
    char* text = nullptr;
    if (H5Aread(attribute, memory_type, &text) < 0)
      throw InputError(subject + " cannot be read (HDF5: " + last_hdf5_error() + ")");
    value = text ? text : "";
    H5free_memory(text);
  } else {
    std::vector<char> text(H5Tget_size(file_type) + 1, '\0');
    if (H5Aread(attribute, memory_type, text.data()) < 0)
      throw InputError(subject + " cannot be read (HDF5: " + last_hdf5_error() + ")");
    value = text.data(); // stops at the first NUL
  }
  while (!value.empty() && value.back() == ' ') value.pop_back(); // space-padded strings
  return value;
}

// ---- Writing -------------------------------------------------------------------------------------

void write_hdf5_atomically(const std::string& path, const std::function<void(hid_t file)>& fill) {
  write_hdf5_atomically(path, fill, nullptr);
}

void write_hdf5_atomically(const std::string& path, const std::function<void(hid_t file)>& fill,
                           const std::function<void(const std::string& temporary)>& then) {
  ErrorStackSilencer silence;
  write_file_atomically(path, [&](const std::string& temporary) {
    // Strong close: closing the file closes anything still open in it, so the file is complete
    // and released before it is renamed.
    PropertyList access(H5Pcreate(H5P_FILE_ACCESS));
    if (!access.valid() || H5Pset_fclose_degree(access, H5F_CLOSE_STRONG) < 0)
      fail_writing(path, "setting up file access");
    File file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
    if (!file.valid())
      throw InputError(path + ": cannot create the file (HDF5: " + last_hdf5_error() + ")");
    fill(file);
    write_provenance(file, path);
    if (file.close() < 0) fail_writing(path, "closing (flushing) the file");
    if (then) then(temporary);
  });
}

Group create_group(hid_t location, const std::string& name, const std::string& file) {
  Group group(H5Gcreate2(location, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!group.valid()) fail_writing(file, "creating group " + name);
  return group;
}

namespace {

Dataset write_dataset_as(hid_t location, const std::string& name, const std::vector<hsize_t>& dims,
                         hid_t file_type, hid_t memory_type, const void* values,
                         const std::string& file) {
  Dataspace space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  if (!space.valid()) fail_writing(file, "creating the dataspace of " + name);
  Dataset dataset(
      H5Dcreate2(location, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!dataset.valid()) fail_writing(file, "creating dataset " + name);
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  if (count > 0 && H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
    fail_writing(file, "writing dataset " + name);
  return dataset;
}

void write_numeric_attribute(hid_t object, const std::string& name, hid_t file_type,
                             hid_t memory_type, const void* values, hsize_t count, bool scalar,
                             const std::string& file) {
  Dataspace space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr));
  if (!space.valid()) fail_writing(file, "creating the dataspace of attribute " + name);
  Attribute attribute(H5Acreate2(object, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid()) fail_writing(file, "creating attribute " + name);
  if (H5Awrite(attribute, memory_type, values) < 0) fail_writing(file, "writing attribute " + name);
}

} // namespace

Dataset write_dataset(hid_t location, const std::string& name, const std::vector<hsize_t>& dims,
                      const float* values, const std::string& file) {
  return write_dataset_as(location, name, dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, values, file);
}

Dataset write_dataset(hid_t location, const std::string& name, const std::vector<hsize_t>& dims,
                      const double* values, const std::string& file) {
  return write_dataset_as(location, name, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values, file);
}

void write_doubles_attribute(hid_t object, const std::string& name,
                             const std::vector<double>& values, const std::string& file) {
  write_numeric_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(),
                          values.size(), false, file);
}

void write_double_attribute(hid_t object, const std::string& name, double value,
                            const std::string& file) {
  write_numeric_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1, true, file);
}

void write_integer_attribute(hid_t object, const std::string& name, long long value,
                             const std::string& file) {
  write_numeric_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value, 1, true, file);
}

void write_integers_attribute(hid_t object, const std::string& name,
                              const std::vector<long long>& values, const std::string& file) {
  write_numeric_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, values.data(),
                          values.size(), false, file);
}

void write_string_attribute(hid_t object, const std::string& name, const std::string& value,
                            const std::string& file) {
  // Variable-length UTF-8: what h5py and netCDF tools return as a Python str (fixed-length ASCII
  // comes back as bytes). The readers accept both.
  Datatype type(H5Tcopy(H5T_C_S1));
  if (!type.valid() || H5Tset_size(type, H5T_VARIABLE) < 0 ||
      H5Tset_cset(type, H5T_CSET_UTF8) < 0)
    fail_writing(file, "creating the string type of attribute " + name);
  Dataspace space(H5Screate(H5S_SCALAR));
  Attribute attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid()) fail_writing(file, "creating attribute " + name);
  const char* text = value.c_str();
  if (H5Awrite(attribute, type, &text) < 0) fail_writing(file, "writing attribute " + name);
}

// ---- Shared layout pieces ------------------------------------------------------------------------

std::vector<float> read_grid_dataset(hid_t file_id, const std::string& file, const std::string& name,
                                     VelocityModel& grid) {
  return read_grid_planes(file_id, file, name, grid, 0, -1);
}

std::vector<float> read_grid_planes(hid_t file_id, const std::string& file, const std::string& name,
                                    VelocityModel& grid, int z_begin, int z_end) {
  const std::string shown = absolute_name(name);
  Dataset dataset = open_dataset(file_id, file, name);
  const std::vector<hsize_t> dims = dataset_shape(dataset, file, name);
  require_rank(dims, 3, file, name, "[nz][ny][nx]");
  long long cells = 1;
  for (hsize_t d : dims) {
    if (d < 1 || d > static_cast<hsize_t>(INT_MAX))
      throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) +
                       "; expected every dimension between 1 and " + std::to_string(INT_MAX));
    cells *= static_cast<long long>(d);
    if (cells > kMaxGridCells)
      throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) +
                       "; more than 2^34 cells is refused as absurd");
  }
  require_float_dataset(dataset, file, name);

  const std::vector<double> spacing =
      read_double_attribute(dataset, "spacing", 3, attribute_subject(file, name, "spacing"),
                            "[dz,dy,dx] in metres");
  for (double h : spacing)
    if (!std::isfinite(h) || h <= 0)
      throw InputError(attribute_subject(file, name, "spacing") + " is " + values_string(spacing) +
                       "; expected 3 positive finite values [dz,dy,dx] in metres");
  std::vector<double> origin(3, 0.0);
  if (has_attribute(dataset, "origin")) {
    origin = read_double_attribute(dataset, "origin", 3, attribute_subject(file, name, "origin"),
                                   "[z0,y0,x0] in metres");
    for (double o : origin)
      if (!std::isfinite(o))
        throw InputError(attribute_subject(file, name, "origin") + " is " + values_string(origin) +
                         "; expected 3 finite values [z0,y0,x0] in metres");
  }
  if (has_attribute(dataset, "axes")) {
    const std::string subject = attribute_subject(file, name, "axes");
    std::string axes = read_string_attribute(dataset, "axes", subject);
    std::string compact;
    for (char c : axes)
      if (c != ' ') compact += c;
    if (compact != "z,y,x")
      throw InputError(subject + " is \"" + axes +
                       "\"; expected \"z,y,x\" (the data stored [nz][ny][nx], x fastest)");
  }

  const int nz = static_cast<int>(dims[0]), ny = static_cast<int>(dims[1]),
            nx = static_cast<int>(dims[2]);
  std::vector<float> values;
  if (z_end < 0) {
    values = read_floats(dataset, file, name);
    z_begin = 0;
  } else {
    // One rank's planes of a z-slab decomposition: a hyperslab, so only they are read and held.
    if (z_begin < 0 || z_end > nz || z_begin >= z_end)
      throw std::invalid_argument("read_grid_planes: planes " + std::to_string(z_begin) + " to " +
                                  std::to_string(z_end) + " of " + file + ":" + shown + " (" +
                                  std::to_string(nz) + " planes)");
    checked_value_count(dataset, sizeof(float), file, name, false); // a truncated file, as above
    const hsize_t start[3] = {hsize_t(z_begin), 0, 0};
    const hsize_t count[3] = {hsize_t(z_end - z_begin), dims[1], dims[2]};
    values.resize(size_t(count[0] * count[1] * count[2]));
    Dataspace file_space(H5Dget_space(dataset));
    Dataspace memory_space(H5Screate_simple(3, count, nullptr));
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, values.data()) < 0)
      fail_reading(file, "cannot read planes " + std::to_string(z_begin) + " to " +
                             std::to_string(z_end - 1) + " of dataset " + shown);
  }
  for (size_t index = 0; index < values.size(); ++index)
    if (!std::isfinite(values[index])) {
      const long long x = index % nx, y = (index / nx) % ny,
                      z = index / (size_t(nx) * ny) + size_t(z_begin);
      throw InputError(file + ": dataset " + shown + " has value " + format_value(values[index]) +
                       " at (z,y,x) = (" + std::to_string(z) + "," + std::to_string(y) + "," +
                       std::to_string(x) + "); expected every value finite");
    }

  grid.nz = nz;
  grid.ny = ny;
  grid.nx = nx;
  grid.dz = spacing[0];
  grid.dy = spacing[1];
  grid.dx = spacing[2];
  grid.oz = origin[0];
  grid.oy = origin[1];
  grid.ox = origin[2];
  return values;
}

Dataset write_grid_dataset(hid_t location, const std::string& name, const VelocityModel& grid,
                           const std::vector<float>& values, const std::string& file) {
  const std::vector<hsize_t> dims = {hsize_t(grid.nz), hsize_t(grid.ny), hsize_t(grid.nx)};
  Dataset dataset = write_dataset(location, name, dims, values.data(), file);
  write_doubles_attribute(dataset, "spacing", {grid.dz, grid.dy, grid.dx}, file);
  write_doubles_attribute(dataset, "origin", {grid.oz, grid.oy, grid.ox}, file);
  write_string_attribute(dataset, "axes", "z,y,x", file);
  attach_grid_scales(location, dataset, grid, file);
  return dataset;
}

void attach_grid_scales(hid_t file_id, hid_t dataset, const VelocityModel& grid,
                        const std::string& file) {
  struct Axis {
    const char* name;
    int n;
    double origin, spacing;
  };
  const Axis axes[3] = {{"z", grid.nz, grid.oz, grid.dz},
                        {"y", grid.ny, grid.oy, grid.dy},
                        {"x", grid.nx, grid.ox, grid.dx}};
  for (unsigned dim = 0; dim < 3; ++dim) {
    const Axis& a = axes[dim];
    if (!link_exists(file_id, a.name)) {
      std::vector<double> coordinate(size_t(a.n));
      for (int i = 0; i < a.n; ++i) coordinate[size_t(i)] = a.origin + i * a.spacing;
      const Dataset scale = write_dataset(file_id, a.name, {hsize_t(a.n)}, coordinate.data(), file);
      write_string_attribute(scale, "units", "m", file);
      if (H5DSset_scale(scale, a.name) < 0) fail_writing(file, std::string("making /") + a.name + " a dimension scale");
    }
    Dataset scale = open_dataset(file_id, file, a.name);
    if (H5DSattach_scale(dataset, scale, dim) < 0)
      fail_writing(file, std::string("attaching the dimension scale /") + a.name);
  }
}

std::vector<Position> read_positions(hid_t file_id, const std::string& file, const std::string& name) {
  const std::string shown = absolute_name(name);
  Dataset dataset = open_dataset(file_id, file, name);
  const std::vector<hsize_t> dims = dataset_shape(dataset, file, name);
  require_rank(dims, 2, file, name, "[n][3] positions (z,y,x) in metres");
  if (dims[1] != 3)
    throw InputError(file + ": dataset " + shown + " has shape " + shape_string(dims) +
                     "; expected [n][3] positions (z,y,x) in metres");
  require_float_dataset(dataset, file, name);
  const std::vector<double> flat = read_doubles(dataset, file, name);
  std::vector<Position> positions(dims[0]);
  for (size_t i = 0; i < positions.size(); ++i)
    for (size_t c = 0; c < 3; ++c) {
      const double value = flat[3 * i + c];
      if (!std::isfinite(value))
        throw InputError(file + ": dataset " + shown + " has value " + format_value(value) +
                         " at [" + std::to_string(i) + "][" + std::to_string(c) +
                         "]; expected finite positions in metres");
      positions[i][c] = value;
    }
  return positions;
}

void write_positions(hid_t location, const std::string& name, const std::vector<Position>& positions,
                     const std::string& file) {
  std::vector<double> flat;
  flat.reserve(3 * positions.size());
  for (const Position& p : positions) flat.insert(flat.end(), p.begin(), p.end());
  write_dataset(location, name, {hsize_t(positions.size()), 3}, flat.data(), file);
}

} // namespace rtm::h5
