#include "io/figure_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm {
namespace {

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// Page margins (pixels): room for the title and caption, the views' titles, tick labels and axis
// labels, and the colour bar's labels.
constexpr double kLeft = 90, kTop = 84, kBottom = 56, kGapBetweenColumns = 24,
                 kGapBetweenRows = 84, kColourBarGap = 36, kColourBarWidth = 22, kRight = 130,
                 kMinColourBarHeight = 200, kMinPageWidth = 720;

std::string metres(double value) { return format_number(value, 6) + " m"; }

} // namespace

// ---- Slice positions --------------------------------------------------------------------------

SlicePosition parse_slice_option(const std::string& text) {
  const std::string usage = " (expected --slice x=METRES,y=METRES,z=METRES, any of the three)";
  SlicePosition position;
  size_t start = 0;
  if (trim(text).empty()) throw InputError("--slice: empty" + usage);
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = trim(text.substr(start, comma - start));
    const size_t equals = item.find('=');
    if (equals == std::string::npos)
      throw InputError("--slice " + text + ": '" + item + "' is not axis=metres" + usage);
    const std::string axis = trim(item.substr(0, equals)), number = trim(item.substr(equals + 1));
    std::optional<double>* target = axis == "x" ? &position.x
                                    : axis == "y" ? &position.y
                                    : axis == "z" ? &position.z
                                                  : nullptr;
    if (!target)
      throw InputError("--slice " + text + ": unknown axis '" + axis + "'; the axes are x, y, z" +
                       usage);
    if (target->has_value())
      throw InputError("--slice " + text + ": " + axis + " is given twice");
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value))
      throw InputError("--slice " + text + ": " + axis + " = '" + number +
                       "' is not a number of metres" + usage);
    *target = value;
    start = comma + 1;
  }
  return position;
}

SliceCells locate_slices(const SlicePosition& requested, const VelocityModel& grid) {
  auto locate = [](const std::optional<double>& at, const char* axis, int n, double d, double o,
                   int& cell, double& position) {
    const double last = o + (n - 1) * d;
    if (!at) {
      cell = n / 2;
    } else {
      // Half a cell of tolerance at either end: the cells cover [o - d/2, last + d/2].
      if (!(*at >= o - 0.5 * d && *at <= last + 0.5 * d))
        throw InputError(std::string("--slice ") + axis + "=" + format_number(*at) +
                         ": outside the model, whose " + axis + " runs from " + metres(o) +
                         " to " + metres(last) + " (" + std::to_string(n) + " cells of " +
                         metres(d) + ")");
      cell = std::clamp(int(std::lround((*at - o) / d)), 0, n - 1);
    }
    position = o + cell * d;
  };
  SliceCells cells;
  locate(requested.x, "x", grid.nx, grid.dx, grid.ox, cells.i, cells.x);
  locate(requested.y, "y", grid.ny, grid.dy, grid.oy, cells.j, cells.y);
  locate(requested.z, "z", grid.nz, grid.dz, grid.oz, cells.k, cells.z);
  return cells;
}

// ---- Colour scales ----------------------------------------------------------------------------

double percentile_clip(const std::vector<float>& values, double percentile) {
  if (!(percentile > 0 && percentile <= 100))
    throw InputError("colour clip: percentile " + format_number(percentile) +
                     " is outside (0, 100]");
  std::vector<float> magnitudes;
  magnitudes.reserve(values.size());
  for (float v : values)
    if (std::isfinite(v)) magnitudes.push_back(std::abs(v));
  if (magnitudes.empty()) return 1.0;
  const double rank = std::ceil(percentile / 100.0 * double(magnitudes.size())) - 1.0;
  const size_t k = static_cast<size_t>(std::clamp(rank, 0.0, double(magnitudes.size() - 1)));
  std::nth_element(magnitudes.begin(), magnitudes.begin() + k, magnitudes.end());
  double clip = magnitudes[k];
  if (clip <= 0) clip = *std::max_element(magnitudes.begin(), magnitudes.end());
  return clip > 0 ? clip : 1.0;
}

ValueRange finite_range(const std::vector<float>& values) {
  ValueRange range;
  bool any = false;
  for (float v : values)
    if (std::isfinite(v)) {
      range.lo = any ? std::min(range.lo, double(v)) : v;
      range.hi = any ? std::max(range.hi, double(v)) : v;
      any = true;
    }
  if (!any) return {0, 1};
  if (range.hi <= range.lo) { // a constant: a scale around it
    const double half = range.lo != 0 ? 0.05 * std::abs(range.lo) : 0.5;
    range.lo -= half, range.hi += half;
  }
  return range;
}

std::vector<float> to_decibels(const std::vector<float>& values, double reference) {
  std::vector<float> decibels(values.size());
  for (size_t n = 0; n < values.size(); ++n)
    decibels[n] = values[n] > 0 && reference > 0
                      ? float(10.0 * std::log10(double(values[n]) / reference))
                      : -INFINITY;
  return decibels;
}

double decibel_floor(const std::vector<float>& decibels) {
  std::vector<float> finite;
  finite.reserve(decibels.size());
  for (float v : decibels)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return kDecibelFloorLimit;
  const size_t k = size_t(std::floor(0.01 * double(finite.size() - 1)));
  std::nth_element(finite.begin(), finite.begin() + k, finite.end());
  return std::max(double(finite[k]), kDecibelFloorLimit);
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalised = raw / magnitude;
  const double step =
      (normalised < 1.5 ? 1 : normalised < 3 ? 2 : normalised < 7 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + 1e-9 * step; t += step)
    ticks.push_back(std::abs(t) < 1e-9 * step ? 0.0 : t); // no "-1.4e-17" at zero
  return ticks;
}

std::string tick_label(double value) { return format_number(value, 4); }

// ---- Layout -----------------------------------------------------------------------------------

VolumeLayout layout_volume(double extent_x, double extent_y, double extent_z, int max_width,
                           int max_height) {
  if (!(extent_x > 0 && extent_y > 0 && extent_z > 0) || max_width < 10 || max_height < 10)
    throw std::invalid_argument("layout_volume: extents and sizes must be positive");
  VolumeLayout l;
  // Inline + crossline side by side (x + y wide), inline over depth slice (z + y tall).
  l.pixels_per_metre =
      std::min(max_width / (extent_x + extent_y), max_height / (extent_z + extent_y));
  const double s = l.pixels_per_metre;
  l.inline_view = {kLeft, kTop, extent_x * s, extent_z * s};
  l.crossline_view = {kLeft + extent_x * s + kGapBetweenColumns, kTop, extent_y * s, extent_z * s};
  l.depth_view = {kLeft, kTop + extent_z * s + kGapBetweenRows, extent_x * s, extent_y * s};
  const double data_bottom = l.depth_view.y + l.depth_view.h;
  const double bar_height =
      std::max(l.inline_view.h, std::min(kMinColourBarHeight, data_bottom - kTop));
  l.colour_bar = {l.crossline_view.x + l.crossline_view.w + kColourBarGap, kTop, kColourBarWidth,
                  bar_height};
  l.width = int(std::ceil(std::max(l.colour_bar.x + l.colour_bar.w + kRight, kMinPageWidth)));
  l.height = int(std::ceil(data_bottom + kBottom));
  return l;
}

// ---- Figures ----------------------------------------------------------------------------------

namespace {

ColourScale volume_scale(const std::vector<float>& volume, VolumeKind kind, const std::string& name,
                         const std::string& units, const FigureOptions& options,
                         std::vector<float>& shown) {
  ColourScale scale;
  if (kind == VolumeKind::velocity) {
    const ValueRange range = finite_range(volume);
    scale.map = ColourMap::velocity;
    scale.lo = range.lo, scale.hi = range.hi;
    scale.label = "velocity (m/s)";
    scale.caption = "colours span the model's range, " + format_number(range.lo, 5) + " to " +
                    format_number(range.hi, 5) + " m/s";
    shown = volume;
  } else if (kind == VolumeKind::illumination) {
    const double reference = finite_range(volume).hi;
    shown = to_decibels(volume, reference);
    scale.map = ColourMap::illumination;
    scale.hi = 0;
    scale.lo = decibel_floor(shown);
    if (scale.lo >= 0) scale.lo = -1;
    scale.label = name + " (dB re maximum)";
    scale.caption = "10 log10(" + name + " / maximum " + format_number(reference, 4) +
                    "); colour floor " + format_number(scale.lo, 3) + " dB (1st percentile, " +
                    "no lower than " + format_number(kDecibelFloorLimit) + " dB)";
  } else {
    const double clip = percentile_clip(volume, options.clip_percentile);
    scale.map = options.signed_colours;
    scale.lo = -clip, scale.hi = clip;
    scale.label = name + (units.empty() ? "" : " (" + units + ")");
    scale.caption = "clip \u00b1" + format_number(clip, 4) + " = " +
                    format_number(options.clip_percentile, 4) + "th percentile of |" + name +
                    "| over the volume";
    shown = volume;
  }
  return scale;
}

} // namespace

Figure volume_figure(const VelocityModel& grid, const std::vector<float>& volume, VolumeKind kind,
                     const std::string& name, const std::string& units, const std::string& source,
                     const SliceCells& slices, const FigureOptions& options) {
  const int nx = grid.nx, ny = grid.ny, nz = grid.nz;
  if (nx < 1 || ny < 1 || nz < 1 || volume.size() != size_t(nx) * ny * nz)
    throw std::invalid_argument("volume_figure: the volume does not have nz*ny*nx values");
  Figure f;
  std::vector<float> shown;
  f.scale = volume_scale(volume, kind, name, units, options, shown);
  const VolumeLayout layout =
      layout_volume(nx * grid.dx, ny * grid.dy, nz * grid.dz, options.max_width, options.max_height);
  f.width = layout.width, f.height = layout.height;
  f.colour_bar = layout.colour_bar;
  f.title = name + " of " + source + ": " + std::to_string(nx) + " x " + std::to_string(ny) +
            " x " + std::to_string(nz) + " cells of " + format_number(grid.dx) + " x " +
            format_number(grid.dy) + " x " + format_number(grid.dz) + " m";
  auto at = [&](int i, int j, int k) { return shown[(size_t(k) * ny + j) * nx + i]; };
  // Cell centres at o + i d: the views' edges lie half a cell outside.
  const double x0 = grid.ox - 0.5 * grid.dx, x1 = x0 + nx * grid.dx;
  const double y0 = grid.oy - 0.5 * grid.dy, y1 = y0 + ny * grid.dy;
  const double z0 = grid.oz - 0.5 * grid.dz, z1 = z0 + nz * grid.dz;

  View in;
  in.title = "inline at y = " + metres(slices.y);
  in.box = layout.inline_view;
  in.columns = nx, in.rows = nz;
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) in.values.push_back(at(i, slices.j, k));
  in.left = x0, in.right = x1, in.top = z0, in.bottom = z1;
  in.horizontal_label = "x (m)", in.vertical_label = "depth z (m)";
  in.cut_vertical_at = slices.x, in.cut_horizontal_at = slices.z;

  View cross;
  cross.title = "crossline at x = " + metres(slices.x);
  cross.box = layout.crossline_view;
  cross.columns = ny, cross.rows = nz;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) cross.values.push_back(at(slices.i, j, k));
  cross.left = y0, cross.right = y1, cross.top = z0, cross.bottom = z1;
  cross.horizontal_label = "y (m)";
  cross.vertical_tick_labels = false; // the inline view on its left shows depth
  cross.cut_vertical_at = slices.y, cross.cut_horizontal_at = slices.z;

  View depth;
  depth.title = "depth slice at z = " + metres(slices.z);
  depth.box = layout.depth_view;
  depth.columns = nx, depth.rows = ny;
  for (int j = ny - 1; j >= 0; --j) // a map: y upwards
    for (int i = 0; i < nx; ++i) depth.values.push_back(at(i, j, slices.k));
  depth.left = x0, depth.right = x1, depth.top = y1, depth.bottom = y0;
  depth.horizontal_label = "x (m)", depth.vertical_label = "y (m)";
  depth.cut_vertical_at = slices.x, depth.cut_horizontal_at = slices.y;

  f.views = {std::move(in), std::move(cross), std::move(depth)};
  return f;
}

Figure side_by_side(const Figure& left, const Figure& right, const std::string& left_label,
                    const std::string& right_label) {
  if (left.scale.map != right.scale.map || left.scale.label != right.scale.label)
    throw std::invalid_argument("side_by_side: the figures have different colour scales");
  Figure f = left;
  // right's page starts where left's colour bar was, a gap further: a narrow view's title (the
  // crossline's) runs past its view's right edge.
  constexpr double kSideGap = 80;
  const double dx = left.colour_bar.x + kSideGap;
  const bool signed_field = left.scale.lo == -left.scale.hi && right.scale.lo == -right.scale.hi &&
                            right.scale.hi > 0;
  const double rescale = signed_field ? left.scale.hi / right.scale.hi : 1.0;
  // The first view (a volume's inline section) names its file; the page title says left and right.
  if (!f.views.empty()) f.views.front().title = left_label + ": " + f.views.front().title;
  for (size_t n = 0; n < right.views.size(); ++n) {
    View v = right.views[n];
    v.box.x += dx;
    if (n == 0) v.title = right_label + ": " + v.title;
    if (rescale != 1.0)
      for (float& value : v.values) value = float(value * rescale);
    f.views.push_back(std::move(v));
  }
  f.colour_bar = right.colour_bar;
  f.colour_bar.x += dx;
  f.width = int(std::ceil(dx + right.width));
  f.height = std::max(left.height, right.height);
  f.title = left_label + " (left) and " + right_label + " (right): " + left.title;
  if (signed_field)
    f.scale.caption = left_label + " " + left.scale.caption + "; " + right_label + " " +
                      right.scale.caption + " (drawn on the same bar)";
  return f;
}

std::vector<double> signed_offsets(const Position& source, const std::vector<Position>& receivers) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const Position& r : receivers) {
    xmin = std::min(xmin, r[2]), xmax = std::max(xmax, r[2]);
    ymin = std::min(ymin, r[1]), ymax = std::max(ymax, r[1]);
  }
  const bool along_x = receivers.empty() || xmax - xmin >= ymax - ymin;
  std::vector<double> offsets;
  for (const Position& r : receivers) {
    const double ex = r[2] - source[2], ey = r[1] - source[1];
    const double along = along_x ? ex : ey;
    offsets.push_back((along < 0 ? -1.0 : 1.0) * std::hypot(ex, ey));
  }
  return offsets;
}

Figure gather_figure(const std::vector<float>& traces, int nrec, int nt, double dt,
                     const Position& source, const std::vector<Position>& receivers,
                     const std::string& title, const GatherOptions& options) {
  if (nrec < 1 || nt < 1 || traces.size() != size_t(nrec) * nt ||
      receivers.size() != size_t(nrec))
    throw std::invalid_argument("gather_figure: traces are not [nrec][nt]");
  Figure f;
  const double clip = percentile_clip(traces, options.clip_percentile);
  f.scale.map = options.colours;
  f.scale.lo = -clip, f.scale.hi = clip;
  f.scale.label = "pressure (relative amplitude)";
  f.scale.caption = "clip \u00b1" + format_number(clip, 4) + " = " +
                    format_number(options.clip_percentile, 4) +
                    "th percentile of |amplitude| over the gather" +
                    (options.wiggles ? " (one trace spacing)" : "");
  f.title = title;

  View v;
  v.box = {kLeft, kTop, double(options.width), double(options.height)};
  v.title = std::to_string(nrec) + " receivers, " + std::to_string(nt) + " samples of " +
            format_number(dt * 1e3, 4) + " ms";
  // Sample n is at time n dt and covers half a sample either side.
  v.top = -0.5 * dt, v.bottom = (nt - 0.5) * dt;
  v.vertical_label = "time (s)";
  // Columns in the order drawn: receivers as stored, or sorted by signed offset.
  std::vector<int> order(static_cast<size_t>(nrec));
  for (int r = 0; r < nrec; ++r) order[size_t(r)] = r;
  std::vector<double> centre(static_cast<size_t>(nrec));
  if (options.axis == GatherAxis::offset) {
    const std::vector<double> offsets = signed_offsets(source, receivers);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return offsets[size_t(a)] < offsets[size_t(b)]; });
    for (int c = 0; c < nrec; ++c) centre[size_t(c)] = offsets[size_t(order[size_t(c)])];
    // Each column reaches halfway to its neighbours; the outer ones as far outwards.
    std::vector<double>& edges = v.column_edges;
    edges.resize(size_t(nrec) + 1);
    for (int c = 1; c < nrec; ++c)
      edges[size_t(c)] = 0.5 * (centre[size_t(c - 1)] + centre[size_t(c)]);
    const double first = nrec > 1 ? edges[1] - centre[0] : 0.5;
    const double last = nrec > 1 ? centre[size_t(nrec - 1)] - edges[size_t(nrec - 1)] : 0.5;
    edges[0] = centre[0] - std::max(first, 1e-3);
    edges[size_t(nrec)] = centre[size_t(nrec - 1)] + std::max(last, 1e-3);
    v.left = edges.front(), v.right = edges.back();
    v.horizontal_label = "signed offset (m)";
  } else {
    for (int c = 0; c < nrec; ++c) centre[size_t(c)] = c;
    v.left = -0.5, v.right = nrec - 0.5;
    v.horizontal_label = "receiver (number in the file)";
  }
  v.columns = nrec, v.rows = nt;
  v.values.resize(size_t(nrec) * nt);
  for (int c = 0; c < nrec; ++c)
    for (int n = 0; n < nt; ++n)
      v.values[size_t(n) * nrec + c] = traces[size_t(order[size_t(c)]) * nt + n];
  v.wiggles = options.wiggles;
  v.column_centres = centre;
  f.views.push_back(std::move(v));
  const View& view = f.views.back();
  if (!options.wiggles)
    f.colour_bar = {view.box.x + view.box.w + kColourBarGap, kTop, kColourBarWidth, view.box.h};
  f.width = int(std::ceil(std::max(view.box.x + view.box.w + kColourBarGap + kColourBarWidth + kRight,
                                   kMinPageWidth)));
  f.height = int(std::ceil(view.box.y + view.box.h + kBottom));
  return f;
}

Figure image_gather_figure(const std::vector<float>& panel, int nz, int nc, double oz, double dz,
                           double oc, double dc, const std::string& axis_label,
                           const std::string& units, const std::string& title,
                           const GatherOptions& options) {
  if (nz < 1 || nc < 1 || panel.size() != size_t(nz) * nc || !(dz > 0) || !(dc > 0))
    throw std::invalid_argument("image_gather_figure: the panel is not [nz][nc] on positive steps");
  Figure f;
  const double clip = percentile_clip(panel, options.clip_percentile);
  f.scale.map = options.colours;
  f.scale.lo = -clip, f.scale.hi = clip;
  f.scale.label = units.empty() ? "amplitude" : units;
  f.scale.caption = "clip \u00b1" + format_number(clip, 4) + " = " +
                    format_number(options.clip_percentile, 4) +
                    "th percentile of |amplitude| over the gather" +
                    (options.wiggles ? " (one trace spacing)" : "");
  f.title = title;
  View v;
  v.box = {kLeft, kTop, double(options.width), double(options.height)};
  v.title = std::to_string(nc) + (axis_label.rfind("angle", 0) == 0 ? " angles, " : " lags, ") +
std::to_string(nz) +
            " depths of " + format_number(dz, 4) + " m";
  // Each sample covers half a step either side.
  v.top = oz - 0.5 * dz, v.bottom = oz + (nz - 0.5) * dz;
  v.left = oc - 0.5 * dc, v.right = oc + (nc - 0.5) * dc;
  v.vertical_label = "depth (m)";
  v.horizontal_label = axis_label;
  v.columns = nc, v.rows = nz;
  v.values = panel;
  v.wiggles = options.wiggles;
  for (int c = 0; c < nc; ++c) v.column_centres.push_back(oc + c * dc);
  f.views.push_back(std::move(v));
  const View& view = f.views.back();
  if (!options.wiggles)
    f.colour_bar = {view.box.x + view.box.w + kColourBarGap, kTop, kColourBarWidth, view.box.h};
  f.width = int(std::ceil(std::max(view.box.x + view.box.w + kColourBarGap + kColourBarWidth + kRight,
                                   kMinPageWidth)));
  f.height = int(std::ceil(view.box.y + view.box.h + kBottom));
  return f;
}

} // namespace rtm
