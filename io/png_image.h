// PNG slices of volumes, for people to look at.
#pragma once

#include <string>
#include <vector>

namespace rtm {

// grey and seismic (blue-white-red) are symmetric about zero, for images and wavefields;
// range maps min..max to black..white, for all-positive fields such as velocity models.
enum class ColorScale { grey, seismic, range };

// Writes a width x height slice (row-major, row 0 at the top) as 8-bit RGB PNG. Values are mapped
// symmetrically to [-clip, clip] with clip = the `percentile` (0-100) of |values|; values beyond
// are saturated. Written under a temporary name and renamed.
void write_png_slice(const std::string& path, int width, int height,
                     const std::vector<float>& values, ColorScale scale, double percentile = 99.0);

// Writes three slices through the centre (or the given cell) of a [nz][ny][nx] volume:
// <stem>_inline.png (x-z at y), <stem>_crossline.png (y-z at x), <stem>_depth.png (x-y at z).
std::vector<std::string> write_png_slices(const std::string& stem, int nx, int ny, int nz,
                                          const std::vector<float>& volume, ColorScale scale,
                                          double percentile = 99.0, int at_x = -1, int at_y = -1,
                                          int at_z = -1, int min_pixels = 0);
// What the app asks for, so that pictures of small grids are readable.
constexpr int kReadablePicturePixels = 600;
// min_pixels > 0: each slice is enlarged by a whole factor (nearest neighbour) until its longer
// side has at least that many pixels, so small grids make pictures a person can read.

// A simple line plot (several series against x) as PNG, e.g. time per step against step.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
};
void write_png_line_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                         const std::string& ylabel, const std::vector<PlotSeries>& series,
                         int width = 900, int height = 500);

} // namespace rtm
