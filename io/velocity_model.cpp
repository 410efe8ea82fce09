#include "io/velocity_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/anisotropy_file.h"
#include "io/hdf5_util.h"
#include "io/xdmf_sidecar.h"

namespace rtm {

VelocityModel read_velocity_model(const std::string& path, const std::string& dataset,
                                  VelocityCheck check) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);

  VelocityModel model;
  model.vp = h5::read_grid_dataset(file, path, dataset, model);

  double to_metres_per_second = 1.0;
  bool has_units = false;
  {
    const h5::Dataset vp = h5::open_dataset(file, path, dataset);
    if (h5::has_attribute(vp, "units")) {
      has_units = true;
      const std::string subject = h5::attribute_subject(path, dataset, "units");
      const std::string units = h5::read_string_attribute(vp, "units", subject);
      if (units == "km/s")
        to_metres_per_second = 1000.0;
      else if (units != "m/s")
        throw InputError(subject + " is \"" + units + "\"; expected \"m/s\" or \"km/s\"");
    }
  }

  for (size_t index = 0; index < model.vp.size(); ++index)
    if (!(model.vp[index] > 0)) {
      const size_t nx = size_t(model.nx), ny = size_t(model.ny);
      char value[32];
      std::snprintf(value, sizeof value, "%g", double(model.vp[index]));
      throw InputError(path + ": dataset " + h5::absolute_name(dataset) + " has value " + value +
                       " at (z,y,x) = (" + std::to_string(index / (nx * ny)) + "," +
                       std::to_string((index / nx) % ny) + "," + std::to_string(index % nx) +
                       "); expected every velocity > 0");
    }
  if (to_metres_per_second != 1.0)
    for (float& v : model.vp) v = static_cast<float>(v * to_metres_per_second);
  if (check == VelocityCheck::plausible) {
    const std::string name = h5::absolute_name(dataset);
    const std::string declared = !has_units ? "no units attribute, so m/s"
                                 : to_metres_per_second == 1.0 ? "units \"m/s\""
                                                               : "units \"km/s\", converted";
    check_plausible_velocities(
        model, path + ": dataset " + name + " (" + declared + ")",
        !has_units ? "add the attribute units = \"km/s\" to " + name
        : to_metres_per_second == 1.0 ? "set the attribute units of " + name + " to \"km/s\""
                                      : "",
        to_metres_per_second == 1.0 ? "" : "if they are m/s, set the attribute units of " + name +
                                               " to \"m/s\"");
  }
  return model;
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
    write_anisotropy_datasets(file, model, path); // TTI models only (io/anisotropy_file.h)
    if (!geometry.sources.empty()) h5::write_positions(file, "sources", geometry.sources, path);
    if (!geometry.receivers.empty())
      h5::write_positions(file, "receivers", geometry.receivers, path);
  });
  write_xdmf_sidecar(path, model,
                     model.anisotropy.empty() ? std::vector<std::string>{"vp"}
                                              : std::vector<std::string>{"vp", "epsilon", "delta", "theta", "phi"});
}

} // namespace rtm
