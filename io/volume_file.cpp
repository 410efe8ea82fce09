#include "io/volume_file.h"

#include <cmath>
#include <set>
#include <stdexcept>

#include "io/hdf5_util.h"
#include "io/xdmf_sidecar.h"

namespace rtm {

void write_volumes(const std::string& path, const VelocityModel& grid,
                   const std::vector<NamedVolume>& volumes,
                   const std::vector<std::pair<std::string, std::string>>& attributes) {
  // Anything the reader would refuse is the caller's bug: say so before creating the file.
  auto refuse = [](const std::string& why) { throw std::invalid_argument("write_volumes: " + why); };
  if (grid.nx < 1 || grid.ny < 1 || grid.nz < 1) refuse("grid dimensions must be >= 1");
  if (!(grid.dx > 0 && grid.dy > 0 && grid.dz > 0)) refuse("grid spacing must be positive");
  if (volumes.empty()) refuse("no volumes to write");
  std::set<std::string> names;
  for (const NamedVolume& volume : volumes) {
    if (volume.name.empty() || volume.name.find('/') != std::string::npos)
      refuse("volume name '" + volume.name + "' must be non-empty and contain no '/'");
    if (!names.insert(volume.name).second) refuse("volume name '" + volume.name + "' repeats");
    if (!volume.data || volume.data->size() != size_t(grid.cells()))
      refuse("volume '" + volume.name + "' does not have nz*ny*nx = " +
             std::to_string(grid.cells()) + " values");
    for (float value : *volume.data)
      if (!std::isfinite(value)) refuse("volume '" + volume.name + "' has non-finite values");
  }

  h5::write_hdf5_atomically(path, [&](hid_t file) {
    for (const NamedVolume& volume : volumes) {
      const h5::Dataset dataset = h5::write_grid_dataset(file, volume.name, grid, *volume.data, path);
      if (!volume.units.empty()) h5::write_string_attribute(dataset, "units", volume.units, path);
    }
    for (const auto& [name, value] : attributes) h5::write_string_attribute(file, name, value, path);
  });
  std::vector<std::string> datasets;
  for (const NamedVolume& volume : volumes) datasets.push_back(volume.name);
  write_xdmf_sidecar(path, grid, datasets);
}

bool hdf5_has_member(const std::string& path, const std::string& name) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  return h5::link_exists(file, name);
}

std::vector<float> read_volume(const std::string& path, const std::string& name,
                               VelocityModel& grid) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  return h5::read_grid_dataset(file, path, name, grid);
}

} // namespace rtm
