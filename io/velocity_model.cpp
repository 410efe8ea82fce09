#include "io/velocity_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/contracts/physics.h"
#include "io/anisotropy_file.h"
#include "io/hdf5_util.h"
#include "io/survey_frame.h"
#include "io/xdmf_sidecar.h"

namespace rtm {

namespace {

// The units of a velocity dataset: the factor to m/s and whether the file said.
struct VelocityUnits {
  double to_metres_per_second = 1.0;
  bool declared = false;
};

VelocityUnits read_velocity_units(const h5::File& file, const std::string& path,
                                  const std::string& dataset) {
  VelocityUnits u;
  const h5::Dataset vp = h5::open_dataset(file, path, dataset);
  if (h5::has_attribute(vp, "units")) {
    u.declared = true;
    const std::string subject = h5::attribute_subject(path, dataset, "units");
    const std::string units = h5::read_string_attribute(vp, "units", subject);
    if (units == "km/s")
      u.to_metres_per_second = 1000.0;
    else if (units != "m/s")
      throw InputError(subject + " is \"" + units + "\"; expected \"m/s\" or \"km/s\"");
  }
  return u;
}

// Every value positive (planes from model plane z_first on), then converted to m/s.
void check_positive_and_convert(std::vector<float>& vp, int nx, int ny, int z_first,
                                const std::string& path, const std::string& dataset,
                                const VelocityUnits& units) {
  // Counted on every core first (a 512^3 model: 0.1 s on one); the first bad value is then found
  // in order, for the message.
  int64_t bad = 0;
  const auto n = int64_t(vp.size());
#pragma omp parallel for reduction(+ : bad) schedule(static)
  for (int64_t c = 0; c < n; ++c) bad += vp[size_t(c)] > 0 ? 0 : 1;
  for (size_t index = 0; bad > 0 && index < vp.size(); ++index)
    if (!(vp[index] > 0)) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", double(vp[index]));
      throw InputError(path + ": dataset " + h5::absolute_name(dataset) + " has value " + value +
                       " at (z,y,x) = (" +
                       std::to_string(index / (size_t(nx) * size_t(ny)) + size_t(z_first)) + "," +
                       std::to_string((index / size_t(nx)) % size_t(ny)) + "," +
                       std::to_string(index % size_t(nx)) + "); expected every velocity > 0");
    }
  if (units.to_metres_per_second != 1.0) {
    const double to_m_per_s = units.to_metres_per_second;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < n; ++c) vp[size_t(c)] = static_cast<float>(vp[size_t(c)] * to_m_per_s);
  }
}

} // namespace

VelocityModel read_velocity_model(const std::string& path, const std::string& dataset,
                                  VelocityCheck check) {
  VelocityPlanes read = read_velocity_planes(path, dataset, 0, -1);
  if (check == VelocityCheck::plausible) check_velocity_planes_plausible(read, read.model.vmin(), read.model.vmax());
  return std::move(read.model);
}

VelocityPlanes read_velocity_planes(const std::string& path, const std::string& dataset, int z_begin,
                                    int z_end) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  VelocityPlanes read;
  read.path = path;
  read.dataset = dataset;
  // A file without the model's own /vp is most often another kind of rtm file given in its place
  // (any other missing dataset gets the names at the root, from open_dataset).
  if (h5::absolute_name(dataset) == "/vp" && !h5::link_exists(file, dataset))
    throw InputError(path + ": dataset /vp not found" + h5::contents_hint(file, "a velocity model") +
                     " (a model file holds a float dataset /vp [nz][ny][nx]; docs/io.md)");
  read.model.vp = h5::read_grid_planes(file, path, dataset, read.model, z_begin, z_end);
  read.nz_whole = read.model.nz;
  read.z_first = z_end < 0 ? 0 : z_begin;
  read.model.nz = int(read.model.vp.size() / (size_t(read.model.nx) * size_t(read.model.ny)));
  read.model.oz += read.z_first * read.model.dz;
  const VelocityUnits units = read_velocity_units(file, path, dataset);
  read.units_declared = units.declared;
  read.to_metres_per_second = units.to_metres_per_second;
  check_positive_and_convert(read.model.vp, read.model.nx, read.model.ny, read.z_first, path,
                             dataset, units);
  return read;
}

void check_velocity_planes_plausible(const VelocityPlanes& read, double vmin, double vmax) {
  const std::string name = h5::absolute_name(read.dataset);
  const bool km = read.to_metres_per_second != 1.0;
  const std::string declared = !read.units_declared ? "no units attribute, so m/s"
                               : !km               ? "units \"m/s\""
                                                   : "units \"km/s\", converted";
  VelocityModel extremes; // the range of every plane of the file, as the message gives it
  extremes.nx = 2, extremes.ny = 1, extremes.nz = 1;
  extremes.vp = {float(vmin), float(vmax)};
  check_plausible_velocities(
      extremes, read.path + ": dataset " + name + " (" + declared + ")",
      !read.units_declared ? "add the attribute units = \"km/s\" to " + name
      : !km                ? "set the attribute units of " + name + " to \"km/s\""
                           : "",
      !km ? "" : "if they are m/s, set the attribute units of " + name + " to \"m/s\"");
}

VelocityModel read_model_shape(const std::string& path, const std::string& dataset) {
  // Plane 0 alone: the shape, spacing and origin are the dataset's; the values are dropped.
  const VelocityPlanes plane = read_velocity_planes(path, dataset, 0, 1);
  VelocityModel shape = plane.model;
  shape.nz = plane.nz_whole;
  shape.vp.clear();
  return shape;
}

ModelGeometry read_model_geometry(const std::string& path) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  ModelGeometry geometry;
  if (h5::link_exists(file, "sources")) geometry.sources = h5::read_positions(file, path, "sources");
  if (h5::link_exists(file, "receivers"))
    geometry.receivers = h5::read_positions(file, path, "receivers");
  return geometry;
}

void write_velocity_model(const std::string& path, const VelocityModel& model,
                          const ModelGeometry& geometry) {
  write_velocity_model(path, model, geometry, SurveyFrame{});
}

void write_velocity_model(const std::string& path, const VelocityModel& model,
                          const ModelGeometry& geometry, const SurveyFrame& frame) {
  // A model the reader would refuse is a bug in the caller: say so before creating anything.
  if (model.nx < 1 || model.ny < 1 || model.nz < 1 ||
      model.vp.size() != static_cast<size_t>(model.cells()))
    throw std::invalid_argument("write_velocity_model: model shape " + std::to_string(model.nz) +
                                "x" + std::to_string(model.ny) + "x" + std::to_string(model.nx) +
                                " does not match its " + std::to_string(model.vp.size()) +
                                " values");
  if (!(model.dx > 0 && model.dy > 0 && model.dz > 0))
    throw std::invalid_argument("write_velocity_model: spacing must be positive");
  for (float v : model.vp)
    if (!(v > 0 && std::isfinite(v)))
      throw std::invalid_argument("write_velocity_model: velocity " + std::to_string(v) +
                                  " is not finite and positive");

  h5::write_hdf5_atomically(path, [&](hid_t file) {
    const h5::Dataset vp = h5::write_grid_dataset(file, "vp", model, model.vp, path);
    h5::write_string_attribute(vp, "units", "m/s", path);
    write_survey_frame(vp, frame, path);
    write_anisotropy_datasets(file, model, path); // TTI models only (io/anisotropy_file.h)
    if (!geometry.sources.empty()) h5::write_positions(file, "sources", geometry.sources, path);
    if (!geometry.receivers.empty())
      h5::write_positions(file, "receivers", geometry.receivers, path);
  });
  std::vector<std::string> datasets = {"vp"}; // and the physics' others, named without their '/'
  for (const char* name : physics_info(physics_of(model)).model_datasets) datasets.push_back(name + 1);
  write_xdmf_sidecar(path, model, datasets);
}

} // namespace rtm
