#include "io/anisotropy_file.h"

#include <cmath>

#include "solvers/contracts/anisotropy.h"
#include "solvers/contracts/errors.h"

namespace rtm {

namespace {

struct DatasetSpec {
  const char* name;
  const char* units; // nullptr: dimensionless
  bool required;
};
constexpr DatasetSpec kDatasets[4] = {
    {"epsilon", nullptr, true}, {"delta", nullptr, true}, {"theta", "degrees", false}, {"phi", "degrees", false}};

std::vector<float>* array_of(Anisotropy& a, int d) {
  std::vector<float>* arrays[4] = {&a.epsilon, &a.delta, &a.theta, &a.phi};
  return arrays[d];
}

} // namespace

bool has_anisotropy(const std::string& path) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  return h5::link_exists(file, "epsilon");
}

void read_anisotropy(const std::string& path, VelocityModel& model) {
  read_anisotropy_planes(path, model, 0, model.nz);
}

void read_anisotropy_planes(const std::string& path, VelocityModel& model, int z_first, int nz_whole) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  Anisotropy a;
  for (int d = 0; d < 4; ++d) {
    const DatasetSpec& spec = kDatasets[d];
    std::vector<float>& values = *array_of(a, d);
    if (!h5::link_exists(file, spec.name)) {
      if (spec.required)
        throw InputError(path + ": dataset /" + std::string(spec.name) +
                         " not found; a TTI model (--physics tti) needs /epsilon and /delta beside "
                         "/vp (and /theta, /phi in degrees for a tilted axis; docs/io.md)");
      values.assign(size_t(model.cells()), 0.0f); // no tilt: VTI
      continue;
    }
    VelocityModel grid;
    // Whole: one read; planes: the shape from the first plane, checked before the hyperslab.
    const bool whole = z_first == 0 && model.nz == nz_whole;
    values = h5::read_grid_planes(file, path, spec.name, grid, 0, whole ? -1 : 1);
    if (grid.nx != model.nx || grid.ny != model.ny || grid.nz != nz_whole)
      throw InputError(path + ": dataset /" + std::string(spec.name) + " has shape (z,y,x) = (" +
                       std::to_string(grid.nz) + "," + std::to_string(grid.ny) + "," +
                       std::to_string(grid.nx) + "); expected /vp's (" + std::to_string(nz_whole) + "," +
                       std::to_string(model.ny) + "," + std::to_string(model.nx) + ")");
    auto close = [](double a1, double b1) { return std::abs(a1 - b1) <= 1e-9 * std::max(1.0, std::abs(b1)); };
    if (!close(grid.dx, model.dx) || !close(grid.dy, model.dy) || !close(grid.dz, model.dz) ||
        !close(grid.ox, model.ox) || !close(grid.oy, model.oy) ||
        !close(grid.oz, model.oz - z_first * model.dz))
      throw InputError(path + ": dataset /" + std::string(spec.name) +
                       " has a spacing or origin other than /vp's; expected the same grid");
    if (!whole) values = h5::read_grid_planes(file, path, spec.name, grid, z_first, z_first + model.nz);
    const h5::Dataset dataset = h5::open_dataset(file, path, spec.name);
    if (h5::has_attribute(dataset, "units")) {
      const std::string subject = h5::attribute_subject(path, spec.name, "units");
      const std::string units = h5::read_string_attribute(dataset, "units", subject);
      const std::string expected = spec.units ? spec.units : "1";
      if (units != expected && !(spec.units == nullptr && units.empty()))
        throw InputError(subject + " is \"" + units + "\"; expected \"" + expected + "\"");
    }
  }
  model.anisotropy = std::move(a);
  // A slab's cells are named by their place in `model`: the message says where that starts.
  check_anisotropy(model, z_first == 0 && model.nz == nz_whole
                              ? path
                              : path + " (model planes " + std::to_string(z_first) + " to " +
                                    std::to_string(z_first + model.nz - 1) + "; the z below counts from plane " +
                                    std::to_string(z_first) + ")");
}

void write_anisotropy_datasets(hid_t file, const VelocityModel& model, const std::string& path) {
  if (model.anisotropy.empty()) return;
  Anisotropy copy = model.anisotropy;
  for (int d = 0; d < 4; ++d) {
    const h5::Dataset dataset = h5::write_grid_dataset(file, kDatasets[d].name, model, *array_of(copy, d), path);
    h5::write_string_attribute(dataset, "units", kDatasets[d].units ? kDatasets[d].units : "1", path);
  }
}

} // namespace rtm
