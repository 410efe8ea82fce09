// Figures as PNG files, drawn with Cairo (docs/figures.md): the specs of io/figure_spec.h, and line
// plots. A build without Cairo (the GPU machine's image lacks it) has figures_supported() false and
// every writer throws InputError saying so.
#pragma once

#include <string>
#include <vector>

#include "io/figure_spec.h"

namespace rtm {

// Whether this build can draw figures (Cairo was found at build time).
bool figures_supported();
// What the commands print or throw when it cannot.
std::string no_figure_support_message();

// Writes `figure` as an 8-bit RGB PNG of figure.width x figure.height pixels, under a temporary
// name renamed when complete.
void write_figure(const std::string& path, const Figure& figure);

// A line plot (several series against x), e.g. time per step against step.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
};
void write_line_plot(const std::string& path, const std::string& title, const std::string& xlabel,
                     const std::string& ylabel, const std::vector<PlotSeries>& series,
                     int width = 900, int height = 500);

} // namespace rtm
