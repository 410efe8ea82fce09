#include "io/figure_source.h"

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/hdf5_util.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"

namespace rtm {
namespace {

// The dataset's units attribute, short: "relative amplitude (illumination-normalised, ...)" ->
// "relative amplitude"; "" when it has none.
std::string short_units(const std::string& path, const std::string& dataset) {
  const h5::ErrorStackSilencer quiet;
  const h5::File file = h5::open_file_for_reading(path);
  const h5::Dataset data = h5::open_dataset(file, path, dataset);
  if (!h5::has_attribute(data, "units")) return "";
  const std::string units =
      h5::read_string_attribute(data, "units", path + ": dataset /" + dataset);
  return units.substr(0, units.find(" ("));
}

} // namespace

PlotSubject detect_plot_subject(const std::string& path, const std::string& dataset) {
  if (dataset == "auto") {
    for (const char* name : {"shots", "vp", "image"})
      if (hdf5_has_member(path, name))
        return {std::string(name) == "shots" ? PlotKind::gather : PlotKind::volume, name};
    throw InputError(path + ": holds no /shots (a shot file), /vp (a model) or /image (a "
                            "migration); name what to draw with --dataset");
  }
  if (!hdf5_has_member(path, dataset))
    throw InputError(path + ": --dataset " + dataset + ": no /" + dataset + " in the file");
  return {dataset == "shots" ? PlotKind::gather : PlotKind::volume, dataset};
}

VolumeKind volume_kind_of(const std::string& dataset) {
  if (dataset == "vp") return VolumeKind::velocity;
  if (dataset == "illumination") return VolumeKind::illumination;
  return VolumeKind::signed_field;
}

Figure plot_figure(const std::string& path, const PlotRequest& request) {
  const PlotSubject subject = detect_plot_subject(path, request.dataset);
  if (subject.kind == PlotKind::gather) {
    if (!request.slice.empty())
      throw InputError("--slice: " + path + " is a shot file; --slice is for volumes (--shot "
                       "chooses the gather)");
    const ShotFile shots = read_shot_file(path);
    const int count = int(shots.shots.size());
    if (request.shot < 0 || request.shot >= count)
      throw InputError("--shot " + std::to_string(request.shot) + ": " + path + " holds " +
                       std::to_string(count) + " shot(s), numbered 0 to " +
                       std::to_string(count - 1));
    const ShotGather& g = shots.shots[size_t(request.shot)];
    const std::string title = "shot " + std::to_string(request.shot) + " (id " +
                              std::to_string(g.id) + ") of " + path + ": source at x = " +
                              format_number(g.source[2]) + ", y = " + format_number(g.source[1]) +
                              ", z = " + format_number(g.source[0]) + " m";
    const std::vector<Position>& receivers = shots.receivers_of(g);
    return gather_figure(g.data, int(receivers.size()), shots.nt, shots.dt, g.source, receivers,
                         title, request.gather);
  }
  VelocityModel grid;
  std::vector<float> values;
  std::string units;
  if (subject.dataset == "vp") {
    // Plotting runs no physics: an unusual medium is drawn as it is.
    grid = read_velocity_model(path, "vp", VelocityCheck::any_positive);
    values = std::move(grid.vp);
    grid.vp.clear();
    units = "m/s";
  } else {
    values = read_volume(path, subject.dataset, grid);
    units = short_units(path, subject.dataset);
  }
  const SliceCells slices =
      locate_slices(request.slice.empty() ? SlicePosition{} : parse_slice_option(request.slice), grid);
  return volume_figure(grid, values, volume_kind_of(subject.dataset), subject.dataset, units, path,
                       slices, request.volume);
}

std::string default_plot_output(const std::string& path, const PlotSubject& subject, int shot) {
  std::string stem = path;
  for (const char* extension : {".h5", ".hdf5", ".H5"})
    if (stem.size() > std::string(extension).size() &&
        stem.compare(stem.size() - std::string(extension).size(), std::string::npos, extension) == 0) {
      stem.resize(stem.size() - std::string(extension).size());
      break;
    }
  return stem + (subject.kind == PlotKind::gather ? "_shot" + std::to_string(shot)
                                                   : "_" + subject.dataset) +
         ".png";
}

} // namespace rtm
