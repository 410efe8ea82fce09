#include "io/shot_file.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/hdf5_util.h"

namespace rtm {
namespace {

std::string shot_group_name(int id) {
  char name[32];
  std::snprintf(name, sizeof name, "%04d", id);
  return name;
}

void check_finite(const std::vector<float>& values, const std::string& path,
                  const std::string& dataset, int row_length) {
  for (size_t index = 0; index < values.size(); ++index)
    if (!std::isfinite(values[index])) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", double(values[index]));
      const std::string where = row_length > 0 ? "[" + std::to_string(index / row_length) + "][" +
                                                     std::to_string(index % row_length) + "]"
                                               : "[" + std::to_string(index) + "]";
      throw InputError(path + ": dataset " + dataset + " has value " + value + " at " + where +
                       "; expected every value finite");
    }
}

double read_scalar(hid_t object, const std::string& name, const std::string& subject,
                   const std::string& meaning) {
  return h5::read_double_attribute(object, name, 1, subject, meaning)[0];
}

void validate_for_writing(const ShotFile& file) {
  auto refuse = [](const std::string& why) {
    throw std::invalid_argument("write_shot_file: " + why);
  };
  if (file.nt < 1) refuse("nt must be >= 1");
  if (!(file.dt > 0 && std::isfinite(file.dt))) refuse("dt must be positive and finite");
  if (file.wavelet.size() != size_t(file.nt)) refuse("the wavelet must have nt samples");
  if (file.shots.empty()) refuse("there must be at least one shot");
  std::set<int> ids;
  for (const ShotGather& shot : file.shots) {
    if (shot.id < 0 || !ids.insert(shot.id).second)
      refuse("shot ids must be distinct and >= 0 (shot " + std::to_string(shot.id) + ")");
    const std::vector<Position>& receivers = file.receivers_of(shot);
    if (receivers.empty())
      refuse("shot " + std::to_string(shot.id) +
             " has no receivers (neither its own nor the shared spread)");
    for (const Position& r : receivers)
      if (!(std::isfinite(r[0]) && std::isfinite(r[1]) && std::isfinite(r[2])))
        refuse("shot " + std::to_string(shot.id) + " has a receiver at a non-finite position");
    const size_t samples = receivers.size() * size_t(file.nt);
    if (shot.data.size() != samples)
      refuse("shot " + std::to_string(shot.id) + " has " + std::to_string(shot.data.size()) +
             " samples; expected nrec * nt = " + std::to_string(samples));
  }
}

// Receivers as positions datasets carry them: float64 [n][3], metres.
void write_receivers(hid_t location, const std::string& name, const std::vector<Position>& receivers,
                     const std::string& path) {
  h5::write_positions(location, name, receivers, path);
  const h5::Dataset dataset = h5::open_dataset(location, path, name);
  h5::write_string_attribute(dataset, "units", "m", path);
  h5::write_string_attribute(dataset, "columns", "z,y,x", path);
}

// A positions dataset of at least one row, its optional units "m".
std::vector<Position> read_receivers(hid_t location, const std::string& path, const std::string& name) {
  std::vector<Position> receivers = h5::read_positions(location, path, name);
  if (receivers.empty())
    throw InputError(path + ": dataset /" + name + " has no rows; expected at least one receiver");
  const h5::Dataset dataset = h5::open_dataset(location, path, name);
  if (h5::has_attribute(dataset, "units")) {
    const std::string subject = h5::attribute_subject(path, name, "units");
    const std::string units = h5::read_string_attribute(dataset, "units", subject);
    if (units != "m")
      throw InputError(subject + " is \"" + units +
                       "\"; expected \"m\" (receiver positions in metres)");
  }
  return receivers;
}

} // namespace

void write_shot_file(const std::string& path, const ShotFile& file) {
  validate_for_writing(file);
  const hsize_t nt = hsize_t(file.nt);
  h5::write_hdf5_atomically(path, [&](hid_t out) {
    h5::write_integer_attribute(out, "nt", file.nt, path);
    h5::write_double_attribute(out, "dt", file.dt, path);
    h5::write_integer_attribute(out, "time_dispersion_removed", file.time_dispersion_removed ? 1 : 0,
                                path);
    if (file.survey_rotation != 0)
      h5::write_double_attribute(out, "survey_rotation", file.survey_rotation, path);
    if (file.nx > 0 && file.ny > 0 && file.nz > 0) {
      h5::write_integers_attribute(out, "shape", {file.nz, file.ny, file.nx}, path);
      h5::write_doubles_attribute(out, "spacing", {file.dz, file.dy, file.dx}, path);
      h5::write_doubles_attribute(out, "origin", {file.oz, file.oy, file.ox}, path);
    }
    // The shared spread, when some shot uses it (a file of per-shot spreads only has none).
    if (file.uses_shared_receivers()) write_receivers(out, "receivers", file.receivers, path);
    const h5::Dataset wavelet = h5::write_dataset(out, "wavelet", {nt}, file.wavelet.data(), path);
    h5::write_double_attribute(wavelet, "dt", file.dt, path);
    h5::write_double_attribute(wavelet, "f0", file.f0, path);
    h5::write_double_attribute(wavelet, "t0", file.t0, path);
    const h5::Group shots = h5::create_group(out, "shots", path);
    for (const ShotGather& shot : file.shots) {
      const std::string name = shot_group_name(shot.id);
      const h5::Group group = h5::create_group(shots, name, path);
      const hsize_t nrec = file.receivers_of(shot).size();
      if (!shot.receivers.empty()) write_receivers(group, "receivers", shot.receivers, path);
      const h5::Dataset data = h5::write_dataset(group, "data", {nrec, nt}, shot.data.data(), path);
      h5::write_doubles_attribute(data, "source", {shot.source[0], shot.source[1], shot.source[2]},
                                  path);
      // Each gather says its own sampling, so one taken out of the file (h5py, ParaView) is
      // still readable on its own; the reader goes by the root's dt.
      h5::write_double_attribute(data, "dt", file.dt, path);
      h5::write_string_attribute(data, "axes", "receiver,time", path);
      if (shot.field_record)
        h5::write_integer_attribute(data, "field_record", *shot.field_record, path);
    }
  });
}

namespace {

ShotFile read_shot_file_or_geometry(const std::string& path, bool with_data) {
  h5::ErrorStackSilencer silence;
  const h5::File in = h5::open_file_for_reading(path);
  ShotFile file;

  if (!h5::has_attribute(in, "nt") && !h5::link_exists(in, "shots"))
    throw InputError(path + ": not a shot file: no group /shots and no root attribute nt" +
                     h5::contents_hint(in, "a shot file") +
                     " (shot files are written by `rtm model` and `rtm import shots`; docs/io.md)");
  // Root attributes: the time axis, and the grid the shots were modelled on when recorded.
  const double nt = read_scalar(in, "nt", h5::attribute_subject(path, "/", "nt"), "time samples");
  if (!(nt >= 1 && nt <= INT_MAX && nt == std::floor(nt)))
    throw InputError(h5::attribute_subject(path, "/", "nt") + " is " + h5::values_string({nt}) +
                     "; expected a whole number of time samples >= 1");
  file.nt = int(nt);
  file.dt = read_scalar(in, "dt", h5::attribute_subject(path, "/", "dt"), "time step in seconds");
  if (!(file.dt > 0 && std::isfinite(file.dt)))
    throw InputError(h5::attribute_subject(path, "/", "dt") + " is " + h5::values_string({file.dt}) +
                     "; expected a positive time step in seconds");
  if (h5::has_attribute(in, "time_dispersion_removed")) {
    const std::string subject = h5::attribute_subject(path, "/", "time_dispersion_removed");
    const double flag = read_scalar(in, "time_dispersion_removed", subject, "0 or 1");
    if (flag != 0 && flag != 1)
      throw InputError(subject + " is " + h5::values_string({flag}) +
                       "; expected 0 (traces as the time stepping made them) or 1 (time "
                       "dispersion removed)");
    file.time_dispersion_removed = flag == 1;
  }
  if (h5::has_attribute(in, "survey_rotation")) {
    const std::string subject = h5::attribute_subject(path, "/", "survey_rotation");
    file.survey_rotation = read_scalar(in, "survey_rotation", subject, "degrees");
    if (!(std::isfinite(file.survey_rotation) && std::abs(file.survey_rotation) <= 180))
      throw InputError(subject + " is " + h5::values_string({file.survey_rotation}) +
                       "; expected an angle in degrees (io/survey_frame.h)");
  }
  if (h5::has_attribute(in, "shape")) {
    const std::string subject = h5::attribute_subject(path, "/", "shape");
    const std::vector<double> shape = h5::read_double_attribute(in, "shape", 3, subject, "[nz,ny,nx]");
    for (double n : shape)
      if (!(n >= 1 && n <= INT_MAX && n == std::floor(n)))
        throw InputError(subject + " is " + h5::values_string(shape) +
                         "; expected 3 whole numbers >= 1 [nz,ny,nx]");
    file.nz = int(shape[0]), file.ny = int(shape[1]), file.nx = int(shape[2]);
  }
  if (h5::has_attribute(in, "spacing")) {
    const std::string subject = h5::attribute_subject(path, "/", "spacing");
    const std::vector<double> h =
        h5::read_double_attribute(in, "spacing", 3, subject, "[dz,dy,dx] in metres");
    for (double value : h)
      if (!(value > 0 && std::isfinite(value)))
        throw InputError(subject + " is " + h5::values_string(h) +
                         "; expected 3 positive finite values [dz,dy,dx] in metres");
    file.dz = h[0], file.dy = h[1], file.dx = h[2];
  }
  if (h5::has_attribute(in, "origin")) {
    const std::string subject = h5::attribute_subject(path, "/", "origin");
    const std::vector<double> o =
        h5::read_double_attribute(in, "origin", 3, subject, "[z0,y0,x0] in metres");
    for (double value : o)
      if (!std::isfinite(value))
        throw InputError(subject + " is " + h5::values_string(o) +
                         "; expected 3 finite values [z0,y0,x0] in metres");
    file.oz = o[0], file.oy = o[1], file.ox = o[2];
  }

  // The shared spread; a file whose shots all have their own receivers may leave it out.
  const bool shared_spread = h5::link_exists(in, "receivers");
  if (shared_spread) file.receivers = read_receivers(in, path, "receivers");

  {
    const h5::Dataset wavelet = h5::open_dataset(in, path, "wavelet");
    const std::vector<hsize_t> dims = h5::dataset_shape(wavelet, path, "wavelet");
    if (dims.size() != 1 || dims[0] != hsize_t(file.nt))
      throw InputError(path + ": dataset /wavelet has shape " + h5::shape_string(dims) +
                       "; expected [" + std::to_string(file.nt) + "] ([nt], nt from attribute nt of /)");
    h5::require_float_dataset(wavelet, path, "wavelet");
    file.wavelet = h5::read_floats(wavelet, path, "wavelet");
    check_finite(file.wavelet, path, "/wavelet", 0);
    // The wavelet's own dt, f0 and t0 are optional (the samples are what matter), but a dt that
    // disagrees with the file's would mean the samples are on another time axis.
    if (h5::has_attribute(wavelet, "dt")) {
      const std::string subject = h5::attribute_subject(path, "wavelet", "dt");
      const double wavelet_dt = read_scalar(wavelet, "dt", subject, "time step in seconds");
      if (!(std::abs(wavelet_dt - file.dt) <= 1e-9 * file.dt))
        throw InputError(subject + " is " + h5::values_string({wavelet_dt}) +
                         "; expected the file's dt " + h5::values_string({file.dt}));
    }
    if (h5::has_attribute(wavelet, "f0")) {
      const std::string subject = h5::attribute_subject(path, "wavelet", "f0");
      file.f0 = read_scalar(wavelet, "f0", subject, "peak frequency in Hz");
      if (!(file.f0 >= 0 && std::isfinite(file.f0)))
        throw InputError(subject + " is " + h5::values_string({file.f0}) +
                         "; expected a frequency >= 0 in Hz");
    }
    if (h5::has_attribute(wavelet, "t0")) {
      const std::string subject = h5::attribute_subject(path, "wavelet", "t0");
      file.t0 = read_scalar(wavelet, "t0", subject, "delay in seconds");
      if (!std::isfinite(file.t0))
        throw InputError(subject + " is " + h5::values_string({file.t0}) +
                         "; expected a finite delay in seconds");
    }
  }

  const h5::Group shots = h5::open_group(in, path, "shots");
  H5G_info_t info;
  if (H5Gget_info(shots, &info) < 0)
    throw InputError(path + ": cannot list group /shots (HDF5: " + h5::last_hdf5_error() + ")");
  if (info.nlinks == 0)
    throw InputError(path + ": group /shots is empty; expected at least one /shots/NNNN/data");
  std::set<int> ids;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const std::optional<std::string> listed = h5::link_name_at(shots, i);
    if (!listed)
      throw InputError(path + ": cannot list group /shots (HDF5: " + h5::last_hdf5_error() + ")");
    const std::string& name = *listed;

    const bool numbered = !name.empty() && name.size() <= 9 &&
                          std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!numbered)
      throw InputError(path + ": /shots/" + name +
                       " is not a shot; expected members named by shot number (/shots/0000, ...)");
    ShotGather shot;
    shot.id = std::stoi(name);
    if (!ids.insert(shot.id).second)
      throw InputError(path + ": /shots/" + name + " repeats shot number " +
                       std::to_string(shot.id));

    const std::string receivers_name = "shots/" + name + "/receivers";
    if (h5::link_exists(in, receivers_name))
      shot.receivers = read_receivers(in, path, receivers_name);
    else if (!shared_spread)
      throw InputError(path + ": /shots/" + name + " has no receivers: neither " + "/" +
                       receivers_name + " (its own) nor /receivers (the spread shared by every "
                       "shot) exists");
    const hsize_t nrec = file.receivers_of(shot).size();
    const std::string rows = shot.receivers.empty() ? "/receivers" : "/" + receivers_name;

    const std::string dataset_name = "shots/" + name + "/data";
    const std::string shown = "/" + dataset_name;
    const h5::Dataset data = h5::open_dataset(in, path, dataset_name);
    const std::vector<hsize_t> dims = h5::dataset_shape(data, path, dataset_name);
    if (dims.size() != 2 || dims[0] != nrec || dims[1] != hsize_t(file.nt))
      throw InputError(path + ": dataset " + shown + " has shape " + h5::shape_string(dims) +
                       "; expected [" + std::to_string(nrec) + "][" + std::to_string(file.nt) +
                       "] ([nrec][nt], nrec the rows of " + rows + ", nt from attribute nt)");
    h5::require_float_dataset(data, path, dataset_name);
    const std::string subject = h5::attribute_subject(path, dataset_name, "source");
    const std::vector<double> source =
        h5::read_double_attribute(data, "source", 3, subject, "[z,y,x] in metres");
    for (double value : source)
      if (!std::isfinite(value))
        throw InputError(subject + " is " + h5::values_string(source) +
                         "; expected 3 finite values [z,y,x] in metres");
    shot.source = {source[0], source[1], source[2]};
    if (h5::has_attribute(data, "field_record")) {
      const std::string record_subject = h5::attribute_subject(path, dataset_name, "field_record");
      const double record = read_scalar(data, "field_record", record_subject, "a SEG-Y field record number");
      // SEG-Y keeps it in a 4-byte signed field (byte 9).
      if (!(record == std::floor(record) && record >= INT32_MIN && record <= INT32_MAX))
        throw InputError(record_subject + " is " + h5::values_string({record}) +
                         "; expected a whole number that fits SEG-Y's 4-byte field record (byte 9)");
      shot.field_record = (long long)record;
    }
    if (with_data) {
      shot.data = h5::read_floats(data, path, dataset_name);
      check_finite(shot.data, path, shown, file.nt);
    }
    file.shots.push_back(std::move(shot));
  }
  std::sort(file.shots.begin(), file.shots.end(),
            [](const ShotGather& a, const ShotGather& b) { return a.id < b.id; });
  return file;
}

} // namespace

ShotFile read_shot_file(const std::string& path) { return read_shot_file_or_geometry(path, true); }

ShotFile read_shot_geometry(const std::string& path) {
  return read_shot_file_or_geometry(path, false);
}

bool ShotFile::has_per_shot_receivers() const {
  return std::any_of(shots.begin(), shots.end(),
                     [](const ShotGather& shot) { return !shot.receivers.empty(); });
}

bool ShotFile::uses_shared_receivers() const {
  return std::any_of(shots.begin(), shots.end(),
                     [](const ShotGather& shot) { return shot.receivers.empty(); });
}

size_t ShotFile::max_receivers() const {
  size_t most = 0;
  for (const ShotGather& shot : shots) most = std::max(most, receivers_of(shot).size());
  return shots.empty() ? receivers.size() : most;
}

size_t ShotFile::min_receivers() const {
  size_t fewest = shots.empty() ? receivers.size() : SIZE_MAX;
  for (const ShotGather& shot : shots) fewest = std::min(fewest, receivers_of(shot).size());
  return fewest;
}

std::string describe_receiver_counts(const ShotFile& file) {
  if (!file.has_per_shot_receivers()) return std::to_string(file.receivers.size()) + " receivers";
  const size_t fewest = file.min_receivers(), most = file.max_receivers();
  return fewest == most ? "per-shot spreads of " + std::to_string(most) + " receivers"
                        : "per-shot spreads of " + std::to_string(fewest) + " to " +
                              std::to_string(most) + " receivers";
}

} // namespace rtm

namespace rtm {
namespace {

std::string triple(double z, double y, double x, const char* unit) {
  return "(" + format_number(z) + ", " + format_number(y) + ", " + format_number(x) + ")" + unit;
}

// Equal up to rounding in the files (spacing and origin are stored as float64, but may have been
// computed in float32 by whatever wrote the model).
bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max({1.0, std::abs(a), std::abs(b)}); }

} // namespace

void check_modeling_grid(const ShotFile& shots, const std::string& shots_path,
                         const VelocityModel& model, const std::string& model_path) {
  if (shots.nx <= 0) return; // no grid recorded
  const bool same_shape = shots.nx == model.nx && shots.ny == model.ny && shots.nz == model.nz;
  const bool same_spacing =
      close(shots.dx, model.dx) && close(shots.dy, model.dy) && close(shots.dz, model.dz);
  const bool same_origin =
      close(shots.ox, model.ox) && close(shots.oy, model.oy) && close(shots.oz, model.oz);
  if (same_shape && same_spacing && same_origin) return;

  const std::string recorded = "(z, y, x) shape " + triple(shots.nz, shots.ny, shots.nx, "") +
                               ", spacing " + triple(shots.dz, shots.dy, shots.dx, " m") +
                               ", origin " + triple(shots.oz, shots.oy, shots.ox, " m");
  const std::string found = "(z, y, x) shape " + triple(model.nz, model.ny, model.nx, "") +
                            ", spacing " + triple(model.dz, model.dy, model.dx, " m") +
                            ", origin " + triple(model.oz, model.oy, model.ox, " m");
  const bool swapped = shots.nx != shots.ny && shots.nx == model.ny && shots.ny == model.nx &&
                       shots.nz == model.nz && close(shots.dx, model.dy) &&
                       close(shots.dy, model.dx) && close(shots.dz, model.dz);
  std::string what;
  if (swapped) {
    what = "its x and y axes are swapped against the grid the shots were modelled on (was /vp "
           "written [nz][nx][ny] instead of [nz][ny][nx]?)";
  } else {
    std::vector<std::string> differ;
    if (!same_shape) differ.push_back("shape");
    if (!same_spacing) differ.push_back("spacing");
    if (!same_origin) differ.push_back("origin");
    what = "its ";
    for (size_t i = 0; i < differ.size(); ++i)
      what += (i == 0 ? "" : i + 1 == differ.size() ? " and " : ", ") + differ[i];
    what += std::string(differ.size() == 1 ? " differs" : " differ") +
            " from the grid the shots were modelled on";
  }
  throw InputError("the migration model " + model_path + " is not on the shots' grid: " + what +
                   ". Model: " + found + "; " + shots_path + " was modelled on " + recorded +
                   ". Use the model the shots were modelled on (or one on its grid), or pass "
                   "--allow-other-grid to migrate on this grid on purpose");
}

} // namespace rtm
