#include "io/png_image.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include <png.h>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

using Rgb = std::array<uint8_t, 3>;

constexpr Rgb kWhite = {255, 255, 255};
constexpr Rgb kBlack = {0, 0, 0};
constexpr Rgb kLightGrey = {225, 225, 225};

// Encodes 8-bit RGB rows (top row first) through libpng's simplified API, which reports errors
// by return value rather than longjmp, so C++ objects on the stack are safe.
void write_rgb_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgb) {
  write_file_atomically(path, [&](const std::string& temporary) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = static_cast<png_uint_32>(width);
    image.height = static_cast<png_uint_32>(height);
    image.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&image, temporary.c_str(), 0, rgb.data(), 0, nullptr)) {
      const std::string reason = image.message;
      png_image_free(&image);
      throw InputError(path + ": cannot write the PNG image: " + reason);
    }
  });
}

void check_percentile(double percentile) {
  if (!(percentile > 0 && percentile <= 100))
    throw InputError("PNG colour clip: percentile " + std::to_string(percentile) +
                     " is outside (0, 100]");
}

// The `percentile` of |values| over the finite values: the colour scale saturates beyond it, so
// a few extreme samples (the source, say) do not wash out the rest of the picture.
double symmetric_clip(const std::vector<float>& values, double percentile) {
  std::vector<float> magnitudes;
  magnitudes.reserve(values.size());
  for (float v : values)
    if (std::isfinite(v)) magnitudes.push_back(std::abs(v));
  if (magnitudes.empty()) return 1.0;
  const double rank = std::ceil(percentile / 100.0 * double(magnitudes.size())) - 1.0;
  const size_t k = static_cast<size_t>(std::clamp(rank, 0.0, double(magnitudes.size() - 1)));
  std::nth_element(magnitudes.begin(), magnitudes.begin() + k, magnitudes.end());
  double clip = magnitudes[k];
  // A percentile that lands on zeros (a mostly empty image) falls back to the largest value.
  if (clip <= 0) clip = *std::max_element(magnitudes.begin(), magnitudes.end());
  return clip > 0 ? clip : 1.0;
}

Rgb colour_of(float value, double clip, ColorScale scale) {
  const double t = std::isfinite(value) ? std::clamp(double(value) / clip, -1.0, 1.0) : 0.0;
  auto level = [](double fraction) { return static_cast<uint8_t>(std::lround(255.0 * fraction)); };
  if (scale == ColorScale::grey) {
    const uint8_t g = level((t + 1.0) / 2.0);
    return {g, g, g};
  }
  // Seismic: -clip blue, 0 white, +clip red.
  if (t < 0) return {level(1.0 + t), level(1.0 + t), 255};
  return {255, level(1.0 - t), level(1.0 - t)};
}

// `zoom` >= 1 repeats every value zoom x zoom times (nearest neighbour).
void write_mapped(const std::string& path, int width, int height, const float* values,
                  ColorScale scale, double clip, int zoom = 1) {
  float lo = 0, hi = 0; // the range scale's ends
  if (scale == ColorScale::range) {
    bool any = false;
    for (size_t i = 0; i < size_t(width) * height; ++i)
      if (std::isfinite(values[i])) {
        lo = any ? std::min(lo, values[i]) : values[i];
        hi = any ? std::max(hi, values[i]) : values[i];
        any = true;
      }
  }
  const int w = width * zoom, h = height * zoom;
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const float v = values[size_t(r / zoom) * width + c / zoom];
      Rgb colour;
      if (scale == ColorScale::range) {
        const double t = hi > lo && std::isfinite(v) ? (double(v) - lo) / (double(hi) - lo) : 0.5;
        const auto g = static_cast<uint8_t>(std::lround(255.0 * t));
        colour = {g, g, g};
      } else {
        colour = colour_of(v, clip, scale);
      }
      std::copy(colour.begin(), colour.end(), rgb.begin() + 3 * (size_t(r) * w + c));
    }
  write_rgb_png(path, w, h, rgb);
}

// ---- A tiny raster canvas for line plots --------------------------------------------------------

// 5x7 pixel glyphs, one byte per row, bit 4 the leftmost column. Lower-case letters are drawn
// as capitals; anything else missing is drawn as '?'.
struct Glyph {
  char character;
  std::array<uint8_t, 7> rows;
};
constexpr Glyph kFont[] = {
    {' ', {0, 0, 0, 0, 0, 0, 0}},
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
    {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
    {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
    {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
    {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},
    {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
    {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},
    {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},
    {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'/', {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
    {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'^', {0x04, 0x0A, 0x11, 0, 0, 0, 0}},
    {'*', {0, 0x04, 0x15, 0x0E, 0x15, 0x04, 0}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04}},
};

const Glyph& glyph_for(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  for (const Glyph& g : kFont)
    if (g.character == c) return g;
  return glyph_for('?');
}

class Canvas {
public:
  Canvas(int width, int height)
      : width_(width), height_(height), rgb_(size_t(width) * height * 3, 255) {}

  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    std::copy(c.begin(), c.end(), rgb_.begin() + 3 * (size_t(y) * width_ + x));
  }
  void fill(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) set(x, y, c);
  }
  // Bresenham; `thickness` squares of pixels along the line.
  void line(int x0, int y0, int x1, int y1, Rgb c, int thickness = 1) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int error = dx + dy;
    while (true) {
      fill(x0, y0, x0 + thickness - 1, y0 + thickness - 1, c);
      if (x0 == x1 && y0 == y1) break;
      const int e2 = 2 * error;
      if (e2 >= dy) error += dy, x0 += sx;
      if (e2 <= dx) error += dx, y0 += sy;
    }
  }
  // Text with its top-left corner at (x, y); `upwards` rotates it to read from bottom to top,
  // starting at (x, y) as its bottom-left corner.
  void text(int x, int y, const std::string& s, Rgb c, int scale, bool upwards = false) {
    for (size_t i = 0; i < s.size(); ++i) {
      const Glyph& g = glyph_for(s[i]);
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 5; ++col) {
          if (!(g.rows[size_t(row)] & (0x10 >> col))) continue;
          const int along = int(i) * 6 * scale + col * scale, across = row * scale;
          if (upwards)
            fill(x + across, y - along - scale + 1, x + across + scale - 1, y - along, c);
          else
            fill(x + along, y + across, x + along + scale - 1, y + across + scale - 1, c);
        }
    }
  }
  static int text_width(const std::string& s, int scale) { return int(s.size()) * 6 * scale - scale; }
  static int text_height(int scale) { return 7 * scale; }

  const std::vector<uint8_t>& rgb() const { return rgb_; }

private:
  int width_, height_;
  std::vector<uint8_t> rgb_;
};

// Tick positions at 1, 2 or 5 times a power of ten, about `target` of them over [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalised = raw / magnitude;
  const double step =
      (normalised < 1.5 ? 1 : normalised < 3 ? 2 : normalised < 7 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step)
    ticks.push_back(std::abs(t) < 1e-9 * step ? 0.0 : t); // no "-1.4e-17" at zero
  return ticks;
}

std::string tick_label(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// Distinct, colour-blind-friendly line colours (the "tab10" palette).
constexpr Rgb kSeriesColours[] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},
                                  {214, 39, 40},  {148, 103, 189}, {140, 86, 75},
                                  {227, 119, 194}, {127, 127, 127}, {188, 189, 34},
                                  {23, 190, 207}};

} // namespace

void write_png_slice(const std::string& path, int width, int height,
                     const std::vector<float>& values, ColorScale scale, double percentile) {
  if (width < 1 || height < 1 || values.size() != size_t(width) * size_t(height))
    throw std::invalid_argument("write_png_slice: " + std::to_string(values.size()) +
                                " values for a " + std::to_string(width) + " x " +
                                std::to_string(height) + " image");
  check_percentile(percentile);
  write_mapped(path, width, height, values.data(), scale, symmetric_clip(values, percentile));
}

std::vector<std::string> write_png_slices(const std::string& stem, int nx, int ny, int nz,
                                          const std::vector<float>& volume, ColorScale scale,
                                          double percentile, int at_x, int at_y, int at_z,
                                          int min_pixels) {
  if (nx < 1 || ny < 1 || nz < 1 || volume.size() != size_t(nx) * ny * nz)
    throw std::invalid_argument("write_png_slices: volume of " + std::to_string(volume.size()) +
                                " values is not nz*ny*nx");
  check_percentile(percentile);
  auto position = [](int requested, int n, const char* axis) {
    if (requested < 0) return n / 2;
    if (requested >= n)
      throw InputError(std::string("PNG slice position ") + axis + " = " +
                       std::to_string(requested) + " is outside the grid (0.." +
                       std::to_string(n - 1) + ")");
    return requested;
  };
  const int x = position(at_x, nx, "x"), y = position(at_y, ny, "y"), z = position(at_z, nz, "z");
  auto at = [&](int i, int j, int k) { return volume[(size_t(k) * ny + j) * nx + i]; };

  // Image rows go down in z (depth) or y; columns go along x or y.
  std::vector<float> inline_slice(size_t(nx) * nz), crossline_slice(size_t(ny) * nz),
      depth_slice(size_t(nx) * ny);
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) inline_slice[size_t(k) * nx + i] = at(i, y, k);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) crossline_slice[size_t(k) * ny + j] = at(x, j, k);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) depth_slice[size_t(j) * nx + i] = at(i, j, z);

  // One clip for the three pictures, so the same colour means the same value in each.
  std::vector<float> all(inline_slice);
  all.insert(all.end(), crossline_slice.begin(), crossline_slice.end());
  all.insert(all.end(), depth_slice.begin(), depth_slice.end());
  const double clip = symmetric_clip(all, percentile);

  const std::vector<std::string> paths = {stem + "_inline.png", stem + "_crossline.png",
                                          stem + "_depth.png"};
  auto zoom = [min_pixels](int a, int b) {
    const int longer = std::max(a, b);
    return min_pixels > longer ? (min_pixels + longer - 1) / longer : 1;
  };
  write_mapped(paths[0], nx, nz, inline_slice.data(), scale, clip, zoom(nx, nz));
  write_mapped(paths[1], ny, nz, crossline_slice.data(), scale, clip, zoom(ny, nz));
  write_mapped(paths[2], nx, ny, depth_slice.data(), scale, clip, zoom(nx, ny));
  return paths;
}

void write_png_line_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                         const std::string& ylabel, const std::vector<PlotSeries>& series,
                         int width, int height) {
  if (width < 200 || height < 150)
    throw std::invalid_argument("write_png_line_plot: the image must be at least 200 x 150");
  if (series.empty()) throw std::invalid_argument("write_png_line_plot: no series to plot");
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const PlotSeries& s : series) {
    if (s.x.size() != s.y.size())
      throw std::invalid_argument("write_png_line_plot: series '" + s.label +
                                  "' has different numbers of x and y values");
    for (size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        xmin = std::min(xmin, s.x[i]), xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]), ymax = std::max(ymax, s.y[i]);
      }
  }
  if (!(xmin <= xmax)) throw std::invalid_argument("write_png_line_plot: no finite points");
  // Flat data still needs a range; a little headroom keeps lines off the frame.
  if (xmax - xmin <= 0) xmin -= 0.5, xmax += 0.5;
  if (ymax - ymin <= 0) {
    const double half = ymax != 0 ? 0.05 * std::abs(ymax) : 0.5;
    ymin -= half, ymax += half;
  } else {
    const double pad = 0.05 * (ymax - ymin);
    ymin = (ymin >= 0 && ymin - pad < 0) ? 0.0 : ymin - pad; // times stay >= 0
    ymax += pad;
  }

  const int scale = width >= 600 && height >= 300 ? 2 : 1;
  const int char_h = Canvas::text_height(scale), gap = 4 * scale;
  const std::vector<double> xticks = nice_ticks(xmin, xmax, 6), yticks = nice_ticks(ymin, ymax, 5);
  int ytick_width = 0;
  for (double t : yticks) ytick_width = std::max(ytick_width, Canvas::text_width(tick_label(t), scale));

  // The legend sits right of the plot area, so it never hides a line.
  int label_width = 0;
  for (const PlotSeries& s : series) label_width = std::max(label_width, Canvas::text_width(s.label, scale));
  const int swatch = 8 * scale, row_height = char_h + gap;
  const int legend_width = 3 * gap + swatch + label_width;

  const int left = gap + char_h + 3 * gap + ytick_width + gap;
  const int right = width - legend_width - 4 * gap;
  const int top = gap + char_h + 2 * gap;
  const int bottom = height - (gap + char_h + 2 * gap + char_h + gap);
  if (right - left < 50 || bottom - top < 50)
    throw std::invalid_argument("write_png_line_plot: the image is too small for its labels and legend");
  auto px = [&](double x) { return left + int(std::lround((x - xmin) / (xmax - xmin) * (right - left))); };
  auto py = [&](double y) { return bottom - int(std::lround((y - ymin) / (ymax - ymin) * (bottom - top))); };

  Canvas canvas(width, height);
  canvas.text((width - Canvas::text_width(title, scale)) / 2, gap, title, kBlack, scale);
  for (double t : xticks) {
    const int x = px(t);
    canvas.line(x, top, x, bottom, kLightGrey);
    canvas.line(x, bottom, x, bottom + gap, kBlack);
    const std::string label = tick_label(t);
    canvas.text(x - Canvas::text_width(label, scale) / 2, bottom + 2 * gap, label, kBlack, scale);
  }
  for (double t : yticks) {
    const int y = py(t);
    canvas.line(left, y, right, y, kLightGrey);
    canvas.line(left - gap, y, left, y, kBlack);
    const std::string label = tick_label(t);
    canvas.text(left - 2 * gap - Canvas::text_width(label, scale), y - char_h / 2, label, kBlack,
                scale);
  }
  canvas.line(left, top, left, bottom, kBlack);
  canvas.line(left, bottom, right, bottom, kBlack);
  canvas.text((left + right - Canvas::text_width(xlabel, scale)) / 2, height - gap - char_h, xlabel,
              kBlack, scale);
  canvas.text(gap, (top + bottom + Canvas::text_width(ylabel, scale)) / 2, ylabel, kBlack, scale,
              true);

  for (size_t s = 0; s < series.size(); ++s) {
    const Rgb colour = kSeriesColours[s % std::size(kSeriesColours)];
    bool have_previous = false;
    int previous_x = 0, previous_y = 0;
    for (size_t i = 0; i < series[s].x.size(); ++i) {
      if (!std::isfinite(series[s].x[i]) || !std::isfinite(series[s].y[i])) {
        have_previous = false; // a gap in the data is a gap in the line
        continue;
      }
      const int x = px(series[s].x[i]), y = py(series[s].y[i]);
      if (have_previous) canvas.line(previous_x, previous_y, x, y, colour, scale);
      else canvas.fill(x - scale, y - scale, x + scale, y + scale, colour); // visible if alone
      previous_x = x, previous_y = y, have_previous = true;
    }
  }

  const int legend_left = right + 2 * gap, legend_right = legend_left + legend_width;
  const int legend_top = top, legend_bottom = legend_top + gap + int(series.size()) * row_height;
  canvas.fill(legend_left, legend_top, legend_right, legend_bottom, kWhite);
  canvas.line(legend_left, legend_top, legend_right, legend_top, kBlack);
  canvas.line(legend_left, legend_bottom, legend_right, legend_bottom, kBlack);
  canvas.line(legend_left, legend_top, legend_left, legend_bottom, kBlack);
  canvas.line(legend_right, legend_top, legend_right, legend_bottom, kBlack);
  for (size_t s = 0; s < series.size(); ++s) {
    const int y = legend_top + gap + int(s) * row_height;
    const Rgb colour = kSeriesColours[s % std::size(kSeriesColours)];
    canvas.fill(legend_left + gap, y + char_h / 2 - scale / 2, legend_left + gap + swatch,
                y + char_h / 2 + scale / 2, colour);
    canvas.text(legend_left + 2 * gap + swatch, y, series[s].label, kBlack, scale);
  }

  write_rgb_png(path, width, height, canvas.rgb());
}

} // namespace rtm
