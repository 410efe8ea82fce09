#include "io/figure_source.h"

#include <algorithm>
#include <cmath>

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
  if (dataset.rfind("offset_gathers_", 0) == 0 || dataset.rfind("angle_gathers_", 0) == 0)
    return {PlotKind::image_gather, dataset};
  return {dataset == "shots" ? PlotKind::gather : PlotKind::volume, dataset};
}

namespace {

// The gather of `dataset` nearest --slice's x and y (metres; the first position where not given).
Figure image_gather_plot(const std::string& path, const std::string& dataset,
                         const PlotRequest& request) {
  ArrayInfo info;
  const std::vector<float> values = read_array(path, dataset, info);
  if (info.dims.size() != 4)
    throw InputError(path + ": /" + dataset + " has rank " + std::to_string(info.dims.size()) +
                     "; expected 4 ([gather y][gather x][z][lag or angle])");
  const SlicePosition at = request.slice.empty() ? SlicePosition{} : parse_slice_option(request.slice);
  if (at.z)
    throw InputError("--slice: a gather is drawn at a position x, y; its depth is its vertical "
                     "axis (leave z out)");
  auto nearest = [&](const std::optional<double>& metres, int axis, const char* name) {
    const long long n = info.dims[size_t(axis)];
    if (!metres) return 0LL;
    const double first = info.origin[size_t(axis)], step = info.spacing[size_t(axis)];
    const double last = first + (n - 1) * step;
    if (*metres < first - 0.5 * step || *metres > last + 0.5 * step)
      throw InputError("--slice " + std::string(name) + "=" + format_number(*metres) + ": the " +
                       dataset + " positions run from " + format_number(first) + " to " +
                       format_number(last) + " m along " + name);
    return std::min(n - 1, std::max(0LL, (long long)std::lround((*metres - first) / step)));
  };
  const long long gy = nearest(at.y, 0, "y"), gx = nearest(at.x, 1, "x");
  const long long nz = info.dims[2], nc = info.dims[3];
  const size_t first = size_t((gy * info.dims[1] + gx) * nz * nc);
  const std::vector<float> panel(values.begin() + long(first), values.begin() + long(first + nz * nc));
  const bool angles = info.axes[3] == "angle";
  const std::string title = dataset + " of " + path + " at x = " +
                            format_number(info.origin[1] + gx * info.spacing[1]) + ", y = " +
                            format_number(info.origin[0] + gy * info.spacing[0]) + " m";
  const std::string units = short_units(path, dataset);
  return image_gather_figure(panel, int(nz), int(nc), info.origin[2], info.spacing[2],
                             info.origin[3], info.spacing[3],
                             angles ? "angle (degrees)" : "subsurface half-offset h (m)", units,
                             title, request.gather);
}

} // namespace

VolumeKind volume_kind_of(const std::string& dataset) {
  if (dataset == "vp") return VolumeKind::velocity;
  if (dataset == "illumination") return VolumeKind::illumination;
  return VolumeKind::signed_field;
}

Figure plot_figure(const std::string& path, const PlotRequest& request) {
  const PlotSubject subject = detect_plot_subject(path, request.dataset);
  if (subject.kind == PlotKind::image_gather) return image_gather_plot(path, subject.dataset, request);
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
