#include "io/volume_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/hdf5_util.h"
#include "io/provenance.h"
#include "solvers/contracts/errors.h"
#include "io/xdmf_sidecar.h"

namespace rtm {

namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ",") + part;
  return text;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// Whether every value is finite: blocks of values over the threads, each block's test free of
// branches so that it vectorises (value by value on one core, a 512^3 image's check took 0.11 s
// of the build machine's time before its write).
bool all_finite(const std::vector<float>& values) {
  constexpr int64_t kBlock = 4096;
  const auto n = int64_t(values.size());
  const float* v = values.data();
  bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite)
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t last = std::min(n, first + kBlock);
    unsigned bad = 0;
    for (int64_t c = first; c < last; ++c) bad |= !(std::fabs(v[c]) <= 3.40282347e38f);
    finite = finite && bad == 0;
  }
  return finite;
}

} // namespace

void write_volumes(const std::string& path, const VelocityModel& grid,
                   const std::vector<NamedVolume>& volumes,
                   const std::vector<std::pair<std::string, std::string>>& attributes,
                   const std::vector<NamedArray>& arrays) {
  // Anything the reader would refuse is the caller's bug: say so before creating the file.
  auto refuse = [](const std::string& why) { throw std::invalid_argument("write_volumes: " + why); };
  if (grid.nx < 1 || grid.ny < 1 || grid.nz < 1) refuse("grid dimensions must be >= 1");
  if (!(grid.dx > 0 && grid.dy > 0 && grid.dz > 0)) refuse("grid spacing must be positive");
  if (volumes.empty() && arrays.empty()) refuse("no volumes to write");
  std::set<std::string> names;
  for (const NamedVolume& volume : volumes) {
    if (volume.name.empty() || volume.name.find('/') != std::string::npos)
      refuse("volume name '" + volume.name + "' must be non-empty and contain no '/'");
    if (!names.insert(volume.name).second) refuse("volume name '" + volume.name + "' repeats");
    if (!volume.data || volume.data->size() != size_t(grid.cells()))
      refuse("volume '" + volume.name + "' does not have nz*ny*nx = " +
             std::to_string(grid.cells()) + " values");
    if (!all_finite(*volume.data)) refuse("volume '" + volume.name + "' has non-finite values");
  }
  for (const NamedArray& array : arrays) {
    if (array.name.empty() || array.name.find('/') != std::string::npos)
      refuse("array name '" + array.name + "' must be non-empty and contain no '/'");
    if (!names.insert(array.name).second) refuse("array name '" + array.name + "' repeats");
    const size_t rank = array.dims.size();
    long long values = rank ? 1 : 0;
    for (long long d : array.dims) values *= d;
    if (rank == 0 || array.axes.size() != rank || array.axis_units.size() != rank ||
        array.spacing.size() != rank || array.origin.size() != rank)
      refuse("array '" + array.name + "' needs a name, unit, spacing and origin per dimension");
    if (!array.data || array.data->size() != size_t(values))
      refuse("array '" + array.name + "' does not have the product of its dimensions' values");
    if (!all_finite(*array.data)) refuse("array '" + array.name + "' has non-finite values");
  }

  h5::write_hdf5_atomically(path, [&](hid_t file) {
    for (const NamedVolume& volume : volumes) {
      const h5::Dataset dataset = h5::write_grid_dataset(file, volume.name, grid, *volume.data, path);
      if (!volume.units.empty()) h5::write_string_attribute(dataset, "units", volume.units, path);
    }
    for (const NamedArray& array : arrays) {
      const std::vector<hsize_t> dims(array.dims.begin(), array.dims.end());
      const h5::Dataset dataset =
          h5::write_dataset(file, array.name, dims, array.data->data(), path);
      h5::write_string_attribute(dataset, "axes", joined(array.axes), path);
      h5::write_string_attribute(dataset, "axis_units", joined(array.axis_units), path);
      h5::write_doubles_attribute(dataset, "spacing", array.spacing, path);
      h5::write_doubles_attribute(dataset, "origin", array.origin, path);
      if (!array.units.empty()) h5::write_string_attribute(dataset, "units", array.units, path);
    }
    for (const auto& [name, value] : attributes) h5::write_string_attribute(file, name, value, path);
  });
  std::vector<std::string> datasets;
  for (const NamedVolume& volume : volumes) datasets.push_back(volume.name);
  if (!datasets.empty()) write_xdmf_sidecar(path, grid, datasets);
}

void write_volumes_in_parts(const std::string& path, const VelocityModel& grid,
                            const std::vector<NamedVolume>& volumes,
                            const std::vector<std::pair<std::string, std::string>>& attributes,
                            const std::function<void(const std::string& temporary)>& write_parts) {
  auto refuse = [](const std::string& why) {
    throw std::invalid_argument("write_volumes_in_parts: " + why);
  };
  if (grid.nx < 1 || grid.ny < 1 || grid.nz < 1) refuse("grid dimensions must be >= 1");
  if (!(grid.dx > 0 && grid.dy > 0 && grid.dz > 0)) refuse("grid spacing must be positive");
  if (volumes.empty()) refuse("no volumes to write");
  std::set<std::string> names;
  for (const NamedVolume& volume : volumes) {
    if (volume.name.empty() || volume.name.find('/') != std::string::npos)
      refuse("volume name '" + volume.name + "' must be non-empty and contain no '/'");
    if (!names.insert(volume.name).second) refuse("volume name '" + volume.name + "' repeats");
  }
  write_file_atomically(path, [&](const std::string& temporary) {
    {
      h5::ErrorStackSilencer silence;
      h5::PropertyList access(H5Pcreate(H5P_FILE_ACCESS));
      if (!access.valid() || H5Pset_fclose_degree(access, H5F_CLOSE_STRONG) < 0)
        throw InputError(path + ": cannot set up file access (HDF5)");
      h5::File file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
      if (!file.valid()) throw InputError(path + ": cannot create the file (HDF5)");
      const hsize_t dims[3] = {hsize_t(grid.nz), hsize_t(grid.ny), hsize_t(grid.nx)};
      for (const NamedVolume& volume : volumes) {
        // Early allocation: the planes written later find their place on disk already; no fill
        // values, since every plane is written (a whole image of zeros first would double the
        // writing).
        h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
        h5::PropertyList create(H5Pcreate(H5P_DATASET_CREATE));
        if (!space.valid() || !create.valid() ||
            H5Pset_alloc_time(create, H5D_ALLOC_TIME_EARLY) < 0 ||
            H5Pset_fill_time(create, H5D_FILL_TIME_NEVER) < 0)
          throw InputError(path + ": cannot create dataset " + volume.name + " (HDF5)");
        h5::Dataset dataset(H5Dcreate2(file, volume.name.c_str(), H5T_IEEE_F32LE, space,
                                       H5P_DEFAULT, create, H5P_DEFAULT));
        if (!dataset.valid()) throw InputError(path + ": cannot create dataset " + volume.name + " (HDF5)");
        h5::write_doubles_attribute(dataset, "spacing", {grid.dz, grid.dy, grid.dx}, path);
        h5::write_doubles_attribute(dataset, "origin", {grid.oz, grid.oy, grid.ox}, path);
        h5::write_string_attribute(dataset, "axes", "z,y,x", path);
        h5::attach_grid_scales(file, dataset, grid, path);
        if (!volume.units.empty()) h5::write_string_attribute(dataset, "units", volume.units, path);
      }
      for (const auto& [name, value] : attributes) h5::write_string_attribute(file, name, value, path);
      write_provenance(file, path);
      if (file.close() < 0) throw InputError(path + ": cannot close (flush) the file (HDF5)");
    }
    write_parts(temporary);
  });
  std::vector<std::string> datasets;
  for (const NamedVolume& volume : volumes) datasets.push_back(volume.name);
  write_xdmf_sidecar(path, grid, datasets);
}

namespace {

bool host_is_little_endian() {
  const uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// pwrite of every byte, or InputError naming the file.
void write_bytes_at(const std::string& path, const void* data, size_t bytes, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0)
    throw InputError(path + ": cannot open the file to write planes (" + std::strerror(errno) + ")");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, std::min<size_t>(bytes, size_t(1) << 30), off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      throw InputError(path + ": cannot write planes (" + why + ")");
    }
    p += n;
    bytes -= size_t(n);
    offset += uint64_t(n);
  }
  if (::close(fd) != 0)
    throw InputError(path + ": cannot close the file after writing planes (" + std::strerror(errno) + ")");
}

} // namespace

void write_volume_planes(const std::string& temporary, const std::string& name, int z_first,
                         const std::vector<float>& values) {
  if (!all_finite(values))
    throw std::invalid_argument("write_volume_planes: volume '" + name + "' has non-finite values");
  hsize_t dims[3] = {0, 0, 0};
  haddr_t offset = HADDR_UNDEF;
  bool raw = false; // the planes can go straight to their bytes in the file
  {
    // Read-only: where the dataset's values lie. Several ranks may do this at once.
    h5::ErrorStackSilencer silence;
    h5::File file(H5Fopen(temporary.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (!file.valid()) throw InputError(temporary + ": cannot open the file to write planes (HDF5)");
    h5::Dataset dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
    h5::Dataspace file_space(dataset.valid() ? H5Dget_space(dataset) : -1);
    if (!file_space.valid() || H5Sget_simple_extent_dims(file_space, dims, nullptr) != 3)
      throw InputError(temporary + ": dataset " + name + " cannot be opened for writing (HDF5)");
    h5::PropertyList create(H5Dget_create_plist(dataset));
    h5::Datatype type(H5Dget_type(dataset));
    offset = H5Dget_offset(dataset);
    raw = create.valid() && H5Pget_layout(create) == H5D_CONTIGUOUS && offset != HADDR_UNDEF &&
          type.valid() && H5Tequal(type, H5T_IEEE_F32LE) > 0 && host_is_little_endian();
  }
  const hsize_t plane = dims[1] * dims[2];
  if (plane == 0 || values.size() % plane != 0 || z_first < 0 ||
      hsize_t(z_first) + values.size() / plane > dims[0])
    throw std::invalid_argument("write_volume_planes: " + std::to_string(values.size()) +
                                " values from plane " + std::to_string(z_first) +
                                " do not fit dataset " + name);
  if (values.empty()) return;
  if (raw) {
    // A contiguous little-endian float32 dataset allocated when the file was made
    // (write_volumes_in_parts): its values are plain bytes at a fixed place, and writing them
    // touches no HDF5 metadata, so every rank writes its planes at once (docs/io.md).
    write_bytes_at(temporary, values.data(), values.size() * sizeof(float),
                   uint64_t(offset) + uint64_t(z_first) * plane * sizeof(float));
    return;
  }
  h5::ErrorStackSilencer silence;
  h5::File file(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  if (!file.valid()) throw InputError(temporary + ": cannot open the file to write planes (HDF5)");
  h5::Dataset dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  h5::Dataspace file_space(dataset.valid() ? H5Dget_space(dataset) : -1);
  if (!file_space.valid())
    throw InputError(temporary + ": dataset " + name + " cannot be opened for writing (HDF5)");
  const hsize_t start[3] = {hsize_t(z_first), 0, 0};
  const hsize_t count[3] = {values.size() / plane, dims[1], dims[2]};
  h5::Dataspace memory_space(H5Screate_simple(3, count, nullptr));
  if (!memory_space.valid() ||
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, values.data()) < 0)
    throw InputError(temporary + ": cannot write planes of dataset " + name + " (HDF5)");
  if (file.close() < 0) throw InputError(temporary + ": cannot close (flush) the file (HDF5)");
}

void write_series_dataset(const std::string& temporary, const std::string& name,
                          const std::vector<double>& values, const std::string& units,
                          const std::vector<std::pair<std::string, std::string>>& attributes) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("write_series_dataset: name '" + name + "' must be non-empty and contain no '/'");
  for (double value : values)
    if (!std::isfinite(value))
      throw std::invalid_argument("write_series_dataset: series '" + name + "' has non-finite values");
  h5::ErrorStackSilencer silence;
  h5::File file(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  if (!file.valid()) throw InputError(temporary + ": cannot open the file to write " + name + " (HDF5)");
  {
    h5::Dataset dataset =
        h5::write_dataset(file, name, {hsize_t(values.size())}, values.data(), temporary);
    if (!units.empty()) h5::write_string_attribute(dataset, "units", units, temporary);
    for (const auto& [key, value] : attributes)
      h5::write_string_attribute(dataset, key, value, temporary);
  }
  if (file.close() < 0) throw InputError(temporary + ": cannot close (flush) the file (HDF5)");
}

bool hdf5_has_member(const std::string& path, const std::string& name) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  return h5::link_exists(file, name);
}

std::vector<float> read_array(const std::string& path, const std::string& name, ArrayInfo& info) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  const h5::Dataset dataset = h5::open_dataset(file, path, name);
  h5::require_float_dataset(dataset, path, name);
  const std::vector<hsize_t> dims = h5::dataset_shape(dataset, path, name);
  const std::string object = h5::absolute_name(name);
  info = ArrayInfo();
  for (hsize_t d : dims) info.dims.push_back((long long)d);
  const size_t rank = dims.size();
  auto subject = [&](const char* attribute) { return h5::attribute_subject(path, object, attribute); };
  info.axes = split_commas(h5::read_string_attribute(dataset, "axes", subject("axes")));
  info.axis_units =
      split_commas(h5::read_string_attribute(dataset, "axis_units", subject("axis_units")));
  if (info.axes.size() != rank || info.axis_units.size() != rank)
    throw InputError(path + ": dataset " + object + " has rank " + std::to_string(rank) +
                     " but its axes attribute names " + std::to_string(info.axes.size()) +
                     " axes and axis_units " + std::to_string(info.axis_units.size()));
  info.spacing = h5::read_double_attribute(dataset, "spacing", rank, subject("spacing"),
                                           "one spacing per dimension");
  info.origin = h5::read_double_attribute(dataset, "origin", rank, subject("origin"),
                                          "one origin per dimension");
  if (h5::has_attribute(dataset, "units"))
    info.units = h5::read_string_attribute(dataset, "units", subject("units"));
  return h5::read_floats(dataset, path, name);
}

std::vector<float> read_volume(const std::string& path, const std::string& name,
                               VelocityModel& grid) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  return h5::read_grid_dataset(file, path, name, grid);
}

} // namespace rtm
