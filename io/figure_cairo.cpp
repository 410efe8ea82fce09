// Figures drawn with Cairo: rasters scaled into their boxes, axes with ticks in metres or seconds,
// colour bars, text in the system's sans-serif font (DejaVu Sans on Debian), PNG out.
#include "io/figure.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include <cairo.h>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

using Rgb = std::array<double, 3>; // 0..1

// ---- Colour maps --------------------------------------------------------------------------------

Rgb interpolate(const std::vector<Rgb>& anchors, double t) {
  const double position = std::clamp(t, 0.0, 1.0) * double(anchors.size() - 1);
  const size_t n = std::min(size_t(position), anchors.size() - 2);
  const double f = position - double(n);
  Rgb c;
  for (int k = 0; k < 3; ++k) c[size_t(k)] = (1 - f) * anchors[n][size_t(k)] + f * anchors[n + 1][size_t(k)];
  return c;
}

// Viridis (perceptually uniform, colour-blind safe) for velocity; inferno for decibels: the two
// never read as each other or as the seismic map.
const std::vector<Rgb> kViridis = {{0.267, 0.005, 0.329}, {0.283, 0.141, 0.458}, {0.254, 0.265, 0.530},
                                   {0.207, 0.372, 0.553}, {0.164, 0.471, 0.558}, {0.128, 0.567, 0.551},
                                   {0.135, 0.659, 0.518}, {0.267, 0.749, 0.441}, {0.478, 0.821, 0.318},
                                   {0.741, 0.873, 0.150}, {0.993, 0.906, 0.144}};
const std::vector<Rgb> kInferno = {{0.001, 0.000, 0.014}, {0.087, 0.045, 0.225}, {0.258, 0.039, 0.406},
                                   {0.416, 0.090, 0.433}, {0.578, 0.148, 0.404}, {0.735, 0.216, 0.330},
                                   {0.865, 0.317, 0.226}, {0.955, 0.469, 0.099}, {0.988, 0.645, 0.040},
                                   {0.964, 0.843, 0.273}, {0.988, 0.998, 0.645}};

Rgb colour_of(ColourMap map, double t) {
  t = std::clamp(t, 0.0, 1.0);
  switch (map) {
  case ColourMap::seismic: // blue, white, red
    return t < 0.5 ? Rgb{2 * t, 2 * t, 1} : Rgb{1, 2 * (1 - t), 2 * (1 - t)};
  case ColourMap::grey:
    return {t, t, t};
  case ColourMap::velocity:
    return interpolate(kViridis, t);
  case ColourMap::illumination:
    return interpolate(kInferno, t);
  }
  return {0, 0, 0};
}

double fraction(float value, const ColourScale& scale) {
  if (std::isnan(value)) return 0.5;
  return (double(value) - scale.lo) / (scale.hi - scale.lo); // +-inf clamp to the ends
}

uint32_t packed(const Rgb& c) {
  auto level = [](double v) { return uint32_t(std::lround(255.0 * std::clamp(v, 0.0, 1.0))); };
  return (level(c[0]) << 16) | (level(c[1]) << 8) | level(c[2]);
}

// ---- Cairo helpers ------------------------------------------------------------------------------

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using Context = std::unique_ptr<cairo_t, ContextDeleter>;

// A columns x rows raster of colours; pixel(c, r) sets one.
class Raster {
public:
  Raster(int columns, int rows)
      : surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, columns, rows)) {
    if (cairo_surface_status(surface_.get()) != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error("figure: cannot allocate a " + std::to_string(columns) + " x " +
                               std::to_string(rows) + " raster");
    cairo_surface_flush(surface_.get());
    data_ = cairo_image_surface_get_data(surface_.get());
    stride_ = cairo_image_surface_get_stride(surface_.get());
  }
  void pixel(int c, int r, uint32_t rgb) {
    reinterpret_cast<uint32_t*>(data_ + size_t(r) * size_t(stride_))[c] = rgb;
  }
  cairo_surface_t* done() {
    cairo_surface_mark_dirty(surface_.get());
    return surface_.get();
  }

private:
  Surface surface_;
  unsigned char* data_ = nullptr;
  int stride_ = 0;
};

enum class Align { left, centre, right };

void text(cairo_t* cr, double x, double y, const std::string& s, double size, Align align,
          bool bold = false, bool upwards = false) {
  cairo_save(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  const double shift = align == Align::left ? 0 : align == Align::centre ? e.x_advance / 2 : e.x_advance;
  cairo_translate(cr, x, y);
  if (upwards) cairo_rotate(cr, -M_PI / 2);
  cairo_move_to(cr, -shift, 0); // (x, y): the baseline
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_show_text(cr, s.c_str());
  cairo_restore(cr);
}

double text_width(cairo_t* cr, const std::string& s, double size) {
  cairo_save(cr);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  cairo_restore(cr);
  return e.x_advance;
}

void line(cairo_t* cr, double x0, double y0, double x1, double y1, double width = 1) {
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  cairo_set_line_width(cr, width);
  cairo_stroke(cr);
}

// Paints `raster` (columns x rows) into the rectangle; cells stay sharp when enlarged and are
// averaged when reduced.
void paint_scaled(cairo_t* cr, cairo_surface_t* raster, int columns, int rows, double x, double y,
                  double w, double h) {
  cairo_save(cr);
  cairo_rectangle(cr, x, y, w, h);
  cairo_clip(cr);
  cairo_translate(cr, x, y);
  cairo_scale(cr, w / columns, h / rows);
  cairo_set_source_surface(cr, raster, 0, 0);
  const bool enlarged = w >= columns && h >= rows;
  cairo_pattern_set_filter(cairo_get_source(cr), enlarged ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
  cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
  cairo_paint(cr);
  cairo_restore(cr);
}

constexpr double kTickFont = 11, kLabelFont = 12, kViewTitleFont = 13, kTitleFont = 15,
                 kCaptionFont = 12, kTick = 5;

double along(double value, double from, double to, double start, double length) {
  return start + (value - from) / (to - from) * length;
}

void draw_view(cairo_t* cr, const View& v, const ColourScale& scale) {
  const PixelBox& b = v.box;
  if (v.wiggles) {
    // White background; each trace at its centre, swinging one trace spacing at the clip, the
    // positive lobes filled black (variable area).
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    cairo_fill(cr);
    const double spacing = v.columns > 1 ? std::abs(v.right - v.left) / v.columns : 1.0;
    const double clip = std::max(std::abs(scale.lo), std::abs(scale.hi));
    cairo_save(cr);
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    cairo_clip(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (int c = 0; c < v.columns; ++c) {
      const double centre = v.column_centres[size_t(c)];
      auto point = [&](int n, bool positive_only) {
        double a = v.values[size_t(n) * v.columns + c] / clip;
        a = std::isfinite(a) ? std::clamp(a, -1.5, 1.5) : 0.0;
        if (positive_only) a = std::max(a, 0.0);
        const double t = v.top + (n + 0.5) * (v.bottom - v.top) / v.rows;
        return std::array<double, 2>{along(centre + a * spacing, v.left, v.right, b.x, b.w),
                                     along(t, v.top, v.bottom, b.y, b.h)};
      };
      // Filled positive lobes.
      const double base = along(centre, v.left, v.right, b.x, b.w);
      cairo_move_to(cr, base, along(v.top, v.top, v.bottom, b.y, b.h));
      for (int n = 0; n < v.rows; ++n) {
        const auto p = point(n, true);
        cairo_line_to(cr, p[0], p[1]);
      }
      cairo_line_to(cr, base, b.y + b.h);
      cairo_close_path(cr);
      cairo_fill(cr);
      for (int n = 0; n < v.rows; ++n) {
        const auto p = point(n, false);
        n == 0 ? cairo_move_to(cr, p[0], p[1]) : cairo_line_to(cr, p[0], p[1]);
      }
      cairo_set_line_width(cr, 0.6);
      cairo_stroke(cr);
    }
    cairo_restore(cr);
  } else if (v.column_edges.empty()) {
    Raster raster(v.columns, v.rows);
    for (int r = 0; r < v.rows; ++r)
      for (int c = 0; c < v.columns; ++c)
        raster.pixel(c, r, packed(colour_of(scale.map, fraction(v.values[size_t(r) * v.columns + c], scale))));
    paint_scaled(cr, raster.done(), v.columns, v.rows, b.x, b.y, b.w, b.h);
  } else {
    // Columns at irregular positions: each one painted over its own span.
    for (int c = 0; c < v.columns; ++c) {
      Raster raster(1, v.rows);
      for (int r = 0; r < v.rows; ++r)
        raster.pixel(0, r, packed(colour_of(scale.map, fraction(v.values[size_t(r) * v.columns + c], scale))));
      const double x0 = along(v.column_edges[size_t(c)], v.left, v.right, b.x, b.w);
      const double x1 = along(v.column_edges[size_t(c) + 1], v.left, v.right, b.x, b.w);
      paint_scaled(cr, raster.done(), 1, v.rows, x0, b.y, std::max(x1 - x0, 0.5), b.h);
    }
  }

  // Where the other views cut this one: thin dashed lines, black over white so they show on any
  // colour.
  auto cut = [&](double x0, double y0, double x1, double y1) {
    const double dash[] = {6, 4};
    cairo_save(cr);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
    line(cr, x0, y0, x1, y1, 2.2);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    line(cr, x0, y0, x1, y1, 1.0);
    cairo_restore(cr);
  };
  if (v.cut_vertical_at) {
    const double x = along(*v.cut_vertical_at, v.left, v.right, b.x, b.w);
    cut(x, b.y, x, b.y + b.h);
  }
  if (v.cut_horizontal_at) {
    const double y = along(*v.cut_horizontal_at, v.top, v.bottom, b.y, b.h);
    cut(b.x, y, b.x + b.w, y);
  }

  // Frame, ticks, labels.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  const int horizontal_target = std::max(2, int(b.w / 90));
  for (double t : nice_ticks(std::min(v.left, v.right), std::max(v.left, v.right), horizontal_target)) {
    const double x = along(t, v.left, v.right, b.x, b.w);
    line(cr, x, b.y + b.h, x, b.y + b.h + kTick);
    text(cr, x, b.y + b.h + kTick + 13, tick_label(t), kTickFont, Align::centre);
  }
  const int vertical_target = std::max(2, int(b.h / 60));
  for (double t : nice_ticks(std::min(v.top, v.bottom), std::max(v.top, v.bottom), vertical_target)) {
    const double y = along(t, v.top, v.bottom, b.y, b.h);
    line(cr, b.x - kTick, y, b.x, y);
    if (v.vertical_tick_labels) text(cr, b.x - kTick - 3, y + 4, tick_label(t), kTickFont, Align::right);
  }
  text(cr, b.x + b.w / 2, b.y + b.h + kTick + 31, v.horizontal_label, kLabelFont, Align::centre);
  if (!v.vertical_label.empty())
    text(cr, b.x - 62, b.y + b.h / 2, v.vertical_label, kLabelFont, Align::centre, false, true);
  text(cr, b.x, b.y - 8, v.title, kViewTitleFont, Align::left, true);
}

void draw_colour_bar(cairo_t* cr, const PixelBox& b, const ColourScale& scale) {
  if (b.w <= 0 || b.h <= 0) return;
  constexpr int kSteps = 256;
  Raster raster(1, kSteps);
  for (int r = 0; r < kSteps; ++r) // top row: hi
    raster.pixel(0, r, packed(colour_of(scale.map, 1.0 - (r + 0.5) / kSteps)));
  paint_scaled(cr, raster.done(), 1, kSteps, b.x, b.y, b.w, b.h);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  double widest = 0;
  for (double t : nice_ticks(scale.lo, scale.hi, 5)) {
    const double y = along(t, scale.hi, scale.lo, b.y, b.h);
    line(cr, b.x + b.w, y, b.x + b.w + kTick, y);
    const std::string label = tick_label(t);
    text(cr, b.x + b.w + kTick + 3, y + 4, label, kTickFont, Align::left);
    widest = std::max(widest, text_width(cr, label, kTickFont));
  }
  text(cr, b.x + b.w + kTick + 3 + widest + 18, b.y + b.h / 2, scale.label, kLabelFont,
       Align::centre, false, true);
}

void write_surface(const std::string& path, cairo_surface_t* surface) {
  cairo_surface_flush(surface);
  write_file_atomically(path, [&](const std::string& temporary) {
    const cairo_status_t status = cairo_surface_write_to_png(surface, temporary.c_str());
    if (status != CAIRO_STATUS_SUCCESS)
      throw InputError(path + ": cannot write the PNG: " + cairo_status_to_string(status));
  });
}

Context page(cairo_surface_t* surface) {
  Context cr(cairo_create(surface));
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  return cr;
}

// Distinct, colour-blind-friendly line colours (the "tab10" palette).
constexpr std::array<std::array<int, 3>, 10> kSeriesColours = {{{31, 119, 180}, {255, 127, 14},
                                                                {44, 160, 44}, {214, 39, 40},
                                                                {148, 103, 189}, {140, 86, 75},
                                                                {227, 119, 194}, {127, 127, 127},
                                                                {188, 189, 34}, {23, 190, 207}}};

} // namespace

bool figures_supported() { return true; }

std::string no_figure_support_message() { return ""; }

void write_figure(const std::string& path, const Figure& figure) {
  if (figure.width < 1 || figure.height < 1)
    throw std::invalid_argument("write_figure: the page has no pixels");
  Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, figure.width, figure.height));
  Context owner = page(surface.get());
  cairo_t* cr = owner.get();
  text(cr, 16, 26, figure.title, kTitleFont, Align::left, true);
  text(cr, 16, 46, figure.scale.caption, kCaptionFont, Align::left);
  for (const View& v : figure.views) draw_view(cr, v, figure.scale);
  draw_colour_bar(cr, figure.colour_bar, figure.scale);
  if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("figure: drawing failed: ") +
                             cairo_status_to_string(cairo_status(cr)));
  write_surface(path, surface.get());
}

void write_line_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                     const std::string& ylabel, const std::vector<PlotSeries>& series, int width,
                     int height) {
  if (width < 300 || height < 200)
    throw std::invalid_argument("write_line_plot: the image must be at least 300 x 200");
  if (series.empty()) throw std::invalid_argument("write_line_plot: no series to plot");
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const PlotSeries& s : series) {
    if (s.x.size() != s.y.size())
      throw std::invalid_argument("write_line_plot: series '" + s.label +
                                  "' has different numbers of x and y values");
    for (size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        xmin = std::min(xmin, s.x[i]), xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]), ymax = std::max(ymax, s.y[i]);
      }
  }
  if (!(xmin <= xmax)) throw std::invalid_argument("write_line_plot: no finite points");
  if (xmax - xmin <= 0) xmin -= 0.5, xmax += 0.5;
  if (ymax - ymin <= 0) {
    const double half = ymax != 0 ? 0.05 * std::abs(ymax) : 0.5;
    ymin -= half, ymax += half;
  } else {
    const double pad = 0.05 * (ymax - ymin);
    ymin = (ymin >= 0 && ymin - pad < 0) ? 0.0 : ymin - pad; // times stay >= 0
    ymax += pad;
  }

  Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height));
  Context owner = page(surface.get());
  cairo_t* cr = owner.get();
  double legend_width = 0;
  for (const PlotSeries& s : series) legend_width = std::max(legend_width, text_width(cr, s.label, kTickFont));
  legend_width += 40;
  const PixelBox b{80, 44, width - 80 - legend_width - 30, double(height) - 44 - 56};
  if (b.w < 50 || b.h < 50)
    throw std::invalid_argument("write_line_plot: the image is too small for its labels and legend");
  // Grid lines under the data.
  cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
  for (double t : nice_ticks(xmin, xmax, 6)) {
    const double x = along(t, xmin, xmax, b.x, b.w);
    line(cr, x, b.y, x, b.y + b.h);
  }
  for (double t : nice_ticks(ymin, ymax, 5)) {
    const double y = along(t, ymax, ymin, b.y, b.h);
    line(cr, b.x, y, b.x + b.w, y);
  }
  cairo_save(cr);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_clip(cr);
  for (size_t s = 0; s < series.size(); ++s) {
    const auto& c = kSeriesColours[s % kSeriesColours.size()];
    cairo_set_source_rgb(cr, c[0] / 255.0, c[1] / 255.0, c[2] / 255.0);
    bool have_previous = false;
    for (size_t i = 0; i < series[s].x.size(); ++i) {
      if (!std::isfinite(series[s].x[i]) || !std::isfinite(series[s].y[i])) {
        have_previous = false; // a gap in the data is a gap in the line
        continue;
      }
      const double x = along(series[s].x[i], xmin, xmax, b.x, b.w);
      const double y = along(series[s].y[i], ymax, ymin, b.y, b.h);
      if (have_previous) cairo_line_to(cr, x, y);
      else cairo_move_to(cr, x, y);
      have_previous = true;
    }
    cairo_set_line_width(cr, 2);
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  // Frame, ticks and labels as for a figure's view.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  for (double t : nice_ticks(xmin, xmax, 6)) {
    const double x = along(t, xmin, xmax, b.x, b.w);
    line(cr, x, b.y + b.h, x, b.y + b.h + kTick);
    text(cr, x, b.y + b.h + kTick + 13, tick_label(t), kTickFont, Align::centre);
  }
  for (double t : nice_ticks(ymin, ymax, 5)) {
    const double y = along(t, ymax, ymin, b.y, b.h);
    line(cr, b.x - kTick, y, b.x, y);
    text(cr, b.x - kTick - 3, y + 4, tick_label(t), kTickFont, Align::right);
  }
  text(cr, b.x + b.w / 2, b.y + b.h + kTick + 33, xlabel, kLabelFont, Align::centre);
  text(cr, 20, b.y + b.h / 2, ylabel, kLabelFont, Align::centre, false, true);
  text(cr, width / 2.0, 26, title, kTitleFont, Align::centre, true);
  // Legend right of the plot, so it never hides a line.
  const double lx = b.x + b.w + 20;
  for (size_t s = 0; s < series.size(); ++s) {
    const auto& c = kSeriesColours[s % kSeriesColours.size()];
    const double y = b.y + 10 + 20 * double(s);
    cairo_set_source_rgb(cr, c[0] / 255.0, c[1] / 255.0, c[2] / 255.0);
    line(cr, lx, y, lx + 24, y, 3);
    text(cr, lx + 30, y + 4, series[s].label, kTickFont, Align::left);
  }
  write_surface(path, surface.get());
}

} // namespace rtm
