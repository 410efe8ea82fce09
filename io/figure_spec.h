// What a figure shows, worked out without any drawing library: slice positions in metres, colour
// scales and their clip, tick positions and the page layout (equal metres per pixel across the
// views of a volume). io/figure.h draws these specs; keeping the decisions here lets the tests check
// them in every build, with or without the drawing library (docs/figures.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

// ---- Slice positions --------------------------------------------------------------------------

// `--slice x=600,y=300,z=450`: positions in metres (model coordinates, origin included); an axis
// not named takes the middle of the model.
struct SlicePosition {
  std::optional<double> x, y, z;
};
// Parses the option's text; InputError naming --slice on a bad axis, number or repeat.
SlicePosition parse_slice_option(const std::string& text);

// The cells the three slices go through and their positions in metres.
struct SliceCells {
  int i = 0, j = 0, k = 0;
  double x = 0, y = 0, z = 0;
};
// The nearest cell to each requested position; InputError naming --slice and the valid range in
// metres when a position lies outside the model's cells.
SliceCells locate_slices(const SlicePosition& requested, const VelocityModel& grid);

// ---- Colour scales ----------------------------------------------------------------------------

enum class ColourMap {
  seismic,     // -clip blue, 0 white, +clip red: images and wavefields
  grey,        // -clip black, +clip white
  velocity,    // a perceptual blue-green-yellow ramp over the velocity range (m/s)
  illumination // a dark-to-bright ramp over decibels
};

// The `percentile` (0-100] of |values| over the finite values: the colour scale saturates beyond
// it, so a few extreme samples (a source, say) do not wash out the rest. A percentile landing on
// zeros falls back to the largest |value|; all zero gives 1.
double percentile_clip(const std::vector<float>& values, double percentile);

// min and max over the finite values ({0, 1} when none; widened a little when they are equal).
struct ValueRange {
  double lo = 0, hi = 1;
};
ValueRange finite_range(const std::vector<float>& values);

// 10 log10(value / reference): illumination is an energy (a sum of squared amplitudes). Values
// <= 0 map to -infinity.
std::vector<float> to_decibels(const std::vector<float>& values, double reference);
// The colour floor of a decibel picture: the 1st percentile of the finite decibels, no lower than
// kDecibelFloorLimit (below that, the deep shadow would take most of the colour scale).
constexpr double kDecibelFloorLimit = -60;
double decibel_floor(const std::vector<float>& decibels);

// The colour scale of one figure: values from lo to hi, the caption that says what and the clip.
struct ColourScale {
  ColourMap map = ColourMap::seismic;
  double lo = -1, hi = 1;
  std::string label;   // beside the colour bar: quantity and units
  std::string caption; // under the title: how lo and hi were chosen, with their values
};

// Tick positions at 1, 2 or 5 times a power of ten, about `target` of them over [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target);
// A tick's text: as few digits as show it.
std::string tick_label(double value);

// ---- Layout -----------------------------------------------------------------------------------

struct PixelBox {
  double x = 0, y = 0, w = 0, h = 0; // pixels, y downwards, from the page's top-left corner
};

// Where the views of a volume go: inline (x across, depth down) and crossline (y across, depth
// down) side by side, sharing the depth axis; the depth slice (x across, y up, a map) under the
// inline view, sharing the x axis; the colour bar on the right. One scale, pixels_per_metre, for
// every view and both directions, so distances and angles compare across them.
struct VolumeLayout {
  double pixels_per_metre = 1;
  PixelBox inline_view, crossline_view, depth_view, colour_bar;
  int width = 0, height = 0; // the page
};
// extent_*: the model's size in metres (cells x spacing). The views together fit within
// max_width x max_height pixels of data (small models are enlarged, large ones reduced).
VolumeLayout layout_volume(double extent_x, double extent_y, double extent_z, int max_width = 1000,
                           int max_height = 800);

// ---- Figures ----------------------------------------------------------------------------------

// One view: a raster of values (rows x columns, row 0 at the top) with its axes.
struct View {
  std::string title;
  PixelBox box;
  int columns = 0, rows = 0;
  std::vector<float> values;
  // The axis values at the box's edges (left, right; top, bottom), e.g. metres of the cell edges.
  double left = 0, right = 1, top = 0, bottom = 1;
  std::string horizontal_label, vertical_label;
  bool vertical_tick_labels = true; // off where a neighbour on the left shows the same axis
  // Where the other slices cut this view (axis values): a vertical and a horizontal line.
  std::optional<double> cut_horizontal_at, cut_vertical_at;
  // Columns at irregular positions (a gather against offset): columns + 1 edges in axis values;
  // empty: the columns are evenly spread from left to right.
  std::vector<double> column_edges;
  // Draw the columns as wiggle traces (variable area) at column_centres instead of colours.
  bool wiggles = false;
  std::vector<double> column_centres;
};

struct Figure {
  int width = 0, height = 0;
  std::string title;
  ColourScale scale;
  PixelBox colour_bar;
  std::vector<View> views;
};

// What a volume holds, which decides its colour scale.
enum class VolumeKind {
  velocity,     // m/s, its own colour map over min..max
  illumination, // shown in dB re its maximum
  signed_field  // images, wavefields: symmetric about zero, clipped at a percentile
};

struct FigureOptions {
  double clip_percentile = 99;           // signed fields
  ColourMap signed_colours = ColourMap::seismic; // seismic or grey
  int max_width = 1000, max_height = 800;         // data area of a volume figure
};

// The three views of a volume through `slices`. `name` (e.g. "image") and `source` (the file) go
// into the title; `units` into the colour bar's label.
Figure volume_figure(const VelocityModel& grid, const std::vector<float>& volume, VolumeKind kind,
                     const std::string& name, const std::string& units, const std::string& source,
                     const SliceCells& slices, const FigureOptions& options = {});

// Two figures of the same kind side by side on one page (`rtm plot A --beside B`): `right`'s views
// where `left`'s colour bar was (and a gap), one colour bar right of both, each figure's first
// view's title prefixed with its label. Signed fields keep each figure's own clip (right's values rescaled onto left's
// scale, the caption says both); other kinds share left's scale. std::invalid_argument when the
// colour maps differ.
Figure side_by_side(const Figure& left, const Figure& right, const std::string& left_label,
                    const std::string& right_label);

// A shot gather: time (s) down against receiver number or signed offset (m).
enum class GatherAxis { receiver, offset };
struct GatherOptions {
  GatherAxis axis = GatherAxis::receiver;
  bool wiggles = false;
  double clip_percentile = 99;
  ColourMap colours = ColourMap::seismic;
  int width = 900, height = 700; // the data area
};
// Offset of each receiver from `source`: the horizontal distance, signed by the receiver's side
// along the spread's longer horizontal direction (x when it is at least as long as y).
std::vector<double> signed_offsets(const Position& source, const std::vector<Position>& receivers);
// `traces`: [nrec][nt].
Figure gather_figure(const std::vector<float>& traces, int nrec, int nt, double dt,
                     const Position& source, const std::vector<Position>& receivers,
                     const std::string& title, const GatherOptions& options = {});

// One common-image gather of `rtm migrate --offset-lags` (docs/rtm.md, section 5d): depth (m)
// down against the lag (m) or the angle (degrees) across; `panel` [nz][nc], sample k at depth
// oz + k dz, column c at oc + c dc; `axis_label` names the horizontal axis. Signed colours clipped
// at the options' percentile over the panel, or wiggles.
Figure image_gather_figure(const std::vector<float>& panel, int nz, int nc, double oz, double dz,
                           double oc, double dc, const std::string& axis_label,
                           const std::string& units, const std::string& title,
                           const GatherOptions& options = {});

} // namespace rtm
