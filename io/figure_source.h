// What `rtm plot` draws from one of rtm's HDF5 files: a volume (model, image, illumination) as
// three slices, or one shot gather of a shot file (docs/figures.md). Reads through the io readers,
// so a plotted file passes the same checks as any input.
#pragma once

#include <optional>
#include <string>

#include "io/figure_spec.h"

namespace rtm {

// image_gather: a common-image gather of `rtm migrate --offset-lags` (offset_gathers_x,
// angle_gathers_y, ...), drawn at the gather position nearest --slice's x and y.
enum class PlotKind { volume, gather, image_gather };
struct PlotSubject {
  PlotKind kind = PlotKind::volume;
  std::string dataset; // "shots" for a gather; else the volume's or gathers' dataset
};

// `dataset` "auto": /shots (a shot file: a gather), else /vp (a model), else /image (a migration's
// output). A named dataset must exist. InputError naming the file otherwise.
PlotSubject detect_plot_subject(const std::string& path, const std::string& dataset = "auto");

// The colour scale a volume dataset gets: vp velocity, illumination in dB, the rest signed.
VolumeKind volume_kind_of(const std::string& dataset);

struct PlotRequest {
  std::string dataset = "auto";
  std::string slice;  // --slice text; empty: through the middle
  int shot = 0;       // a gather: the shot's place in the file (0 = first)
  FigureOptions volume;
  GatherOptions gather;
};

// Reads what `request` names from `path` and lays out its figure.
Figure plot_figure(const std::string& path, const PlotRequest& request);

// <path without .h5>_<dataset>.png, or _shot<N>.png for a gather: next to the input.
std::string default_plot_output(const std::string& path, const PlotSubject& subject, int shot);

} // namespace rtm
