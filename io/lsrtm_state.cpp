#include "io/lsrtm_state.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "io/checkpoint_file.h"
#include "io/hdf5_util.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

constexpr const char* kFormat = "rtm-lsrtm-state 1";
constexpr const char* kVolumes[] = {"model", "gradient", "direction", "illumination"};

std::vector<float>& volume(LsrtmState& s, int k) {
  return k == 0 ? s.model : k == 1 ? s.gradient : k == 2 ? s.direction : s.illumination;
}

} // namespace

std::string lsrtm_state_path(const std::string& output) { return output + ".lsrtm-state.h5"; }

void write_lsrtm_state(const std::string& path, const LsrtmState& s) {
  const size_t cells = size_t(s.nx) * size_t(s.ny) * size_t(s.nz);
  if (s.nx < 1 || s.ny < 1 || s.nz < 1 || s.model.size() != cells || s.gradient.size() != cells ||
      s.direction.size() != cells || s.illumination.size() != cells)
    throw std::invalid_argument("write_lsrtm_state: every volume must hold nz*ny*nx values");
  if (s.iteration < 0 || s.residual_norm.size() != size_t(s.iteration) + 1)
    throw std::invalid_argument("write_lsrtm_state: one residual per iteration and the start");
  const std::vector<hsize_t> dims = {hsize_t(s.nz), hsize_t(s.ny), hsize_t(s.nx)};
  const std::vector<float>* volumes[] = {&s.model, &s.gradient, &s.direction, &s.illumination};
  h5::write_hdf5_atomically(path, [&](hid_t file) {
    for (int k = 0; k < 4; ++k) h5::write_dataset(file, kVolumes[k], dims, volumes[k]->data(), path);
    h5::Dataset residual = h5::write_dataset(file, "residual_norm", {hsize_t(s.residual_norm.size())},
                                             s.residual_norm.data(), path);
    h5::write_string_attribute(residual, "units", "same as the traces (root of the sum of squares)", path);
    h5::write_string_attribute(file, "format", kFormat, path);
    h5::write_integer_attribute(file, "iteration", s.iteration, path);
    h5::write_double_attribute(file, "gamma", s.gamma, path);
    const CheckpointIdentity& i = s.identity;
    h5::write_string_attribute(file, "shot_file", i.shot_file, path);
    h5::write_integer_attribute(file, "shot_file_bytes", i.shot_file_bytes, path);
    h5::write_integer_attribute(file, "shot_count", i.shot_count, path);
    h5::write_string_attribute(file, "shots_fingerprint", fingerprint_hex(i.shots_fingerprint), path);
    h5::write_string_attribute(file, "model_fingerprint", fingerprint_hex(i.model_fingerprint), path);
    h5::write_string_attribute(file, "parameters", i.parameters, path);
  });
}

LsrtmState read_lsrtm_state(const std::string& path) {
  h5::ErrorStackSilencer silence;
  const h5::File file = h5::open_file_for_reading(path);
  auto text = [&](const char* name) {
    return h5::read_string_attribute(file, name, h5::attribute_subject(path, "/", name));
  };
  auto number = [&](const char* name) {
    return h5::read_double_attribute(file, name, 1, h5::attribute_subject(path, "/", name),
                                     "a number")[0];
  };
  auto whole = [&](const char* name) {
    const double value = number(name);
    if (!(value >= 0) || value != std::floor(value) || value > 1e15)
      throw InputError(h5::attribute_subject(path, "/", name) + " is " + std::to_string(value) +
                       "; expected a whole number >= 0");
    return static_cast<long long>(value);
  };
  const std::string format = h5::has_attribute(file, "format") ? text("format") : "";
  if (format != kFormat)
    throw InputError(path + ": not an rtm least-squares RTM state (root attribute format is '" +
                     format + "'; expected '" + kFormat + "')");
  LsrtmState s;
  s.iteration = int(whole("iteration"));
  s.gamma = number("gamma");
  if (!std::isfinite(s.gamma) || s.gamma < 0)
    throw InputError(h5::attribute_subject(path, "/", "gamma") + " is " + std::to_string(s.gamma) +
                     "; expected a finite number >= 0");
  CheckpointIdentity& i = s.identity;
  i.shot_file = text("shot_file");
  i.shot_file_bytes = whole("shot_file_bytes");
  i.shot_count = whole("shot_count");
  i.shots_fingerprint =
      parse_fingerprint_hex(text("shots_fingerprint"), h5::attribute_subject(path, "/", "shots_fingerprint"));
  i.model_fingerprint =
      parse_fingerprint_hex(text("model_fingerprint"), h5::attribute_subject(path, "/", "model_fingerprint"));
  i.parameters = text("parameters");
  std::vector<hsize_t> dims;
  for (int k = 0; k < 4; ++k) {
    const h5::Dataset dataset = h5::open_dataset(file, path, kVolumes[k]);
    const std::vector<hsize_t> shape = h5::dataset_shape(dataset, path, kVolumes[k]);
    h5::require_rank(shape, 3, path, kVolumes[k], "[nz][ny][nx]");
    if (!dims.empty() && shape != dims)
      throw InputError(path + ": /" + kVolumes[k] + " has shape " + h5::shape_string(shape) +
                       " but /model has " + h5::shape_string(dims));
    dims = shape;
    volume(s, k) = h5::read_floats(dataset, path, kVolumes[k]);
    for (float v : volume(s, k))
      if (!std::isfinite(v))
        throw InputError(path + ": /" + kVolumes[k] + " holds a value that is not finite");
  }
  s.nz = int(dims[0]);
  s.ny = int(dims[1]);
  s.nx = int(dims[2]);
  const h5::Dataset residual = h5::open_dataset(file, path, "residual_norm");
  s.residual_norm = h5::read_doubles(residual, path, "residual_norm");
  if (s.residual_norm.size() != size_t(s.iteration) + 1)
    throw InputError(path + ": /residual_norm holds " + std::to_string(s.residual_norm.size()) +
                     " values; expected " + std::to_string(s.iteration + 1) +
                     " (the start and each of the " + std::to_string(s.iteration) + " iterations)");
  return s;
}

} // namespace rtm
