// rtm plot: a figure of any of rtm's HDF5 files for quick QC: a volume (model, image,
// illumination) as three slices in metres, or a shot gather in seconds (docs/figures.md).
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/path_checks.h"

namespace rtm::app {
namespace {

struct PlotArgs {
  std::string input, output;
  std::string beside; // a second file drawn to the right (--beside)
  std::string colors = "seismic";
  std::string axis = "receiver";
  bool wiggles = false;
  PlotRequest request;
};

void run_plot(PlotArgs& a) {
  if (!figures_supported()) throw InputError("rtm plot: " + no_figure_support_message());
  if (!(a.request.volume.clip_percentile > 0))
    throw InputError("--clip-percentile " + std::to_string(a.request.volume.clip_percentile) +
                     ": must be above 0 (and at most 100)");
  const PlotSubject subject = detect_plot_subject(a.input, a.request.dataset);
  const std::string output =
      a.output.empty() ? default_plot_output(a.input, subject, a.request.shot) : a.output;
  check_output_path(output);
  check_outputs_are_not_inputs({{"-o", output}}, {{"input", a.input}, {"--beside", a.beside}});
  const ColourMap colours = a.colors == "grey" ? ColourMap::grey : ColourMap::seismic;
  a.request.volume.signed_colours = colours;
  a.request.gather.colours = colours;
  a.request.gather.clip_percentile = a.request.volume.clip_percentile;
  a.request.gather.axis = a.axis == "offset" ? GatherAxis::offset : GatherAxis::receiver;
  a.request.gather.wiggles = a.wiggles;
  Figure figure = plot_figure(a.input, a.request);
  if (!a.beside.empty()) {
    if (subject.kind != PlotKind::volume || detect_plot_subject(a.beside, a.request.dataset).kind != PlotKind::volume)
      throw InputError("--beside " + a.beside + ": side by side draws two volumes (models or images), "
                       "not shot gathers");
    const Figure right = plot_figure(a.beside, a.request);
    if (right.scale.map != figure.scale.map || right.scale.label != figure.scale.label)
      throw InputError("--beside " + a.beside + ": its " + a.request.dataset + " (" + right.scale.label +
                       ") is not the same kind of volume as " + a.input + "'s (" + figure.scale.label + ")");
    figure = side_by_side(figure, right, a.input, a.beside);
  }
  write_figure(output, figure);
  std::printf("wrote %s: %d x %d pixels, %s\n", output.c_str(), figure.width, figure.height,
              figure.title.c_str());
}

} // namespace

void register_plot(CLI::App& rtm) {
  auto a = std::make_shared<PlotArgs>();
  CLI::App* cmd = rtm.add_subcommand(
      "plot", "Draw a figure (PNG) of a model, image or shot file: three slices of a volume in "
              "metres, or a shot gather in seconds");
  cmd->add_option("input", a->input, "rtm HDF5 file (model, image or shots)")->required();
  cmd->add_option("-o,--output", a->output,
                  "PNG to write; default: next to the input, <name>_<dataset>.png or "
                  "<name>_shot<N>.png");
  cmd->add_option("--dataset", a->request.dataset,
                  "What to draw: vp, image, illumination, image_raw, shots, a gather of `rtm "
                  "migrate --offset-lags` (offset_gathers_x, angle_gathers_x, ...: the one nearest "
                  "--slice x=..,y=..), or auto (shots, else vp, else image)")
      ->capture_default_str();
  cmd->add_option("--beside", a->beside,
                  "Volumes: a second file (e.g. another migration of the same data) whose same "
                  "dataset and slices are drawn to the right of the first; images each clipped at "
                  "their own --clip-percentile");
  cmd->add_option("--slice", a->request.slice,
                  "Volumes: where the slices cut, in metres, e.g. x=600,y=300,z=450 (any of the "
                  "three; the others through the middle); image gathers: the position x=..,y=.. "
                  "(the nearest gather; the first where not given)");
  cmd->add_option("--shot", a->request.shot, "Shot files: which gather (0 = the first in the file)")
      ->capture_default_str();
  cmd->add_option("--axis", a->axis,
                  "Gathers: traces against receiver (number in the file) or offset (signed, m)")
      ->check(CLI::IsMember({"receiver", "offset"}))
      ->capture_default_str();
  cmd->add_flag("--wiggles", a->wiggles, "Gathers: wiggle traces (variable area) instead of colours");
  cmd->add_option("--clip-percentile", a->request.volume.clip_percentile,
                  "Images and gathers: colours clipped symmetrically at this percentile of |values|")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--colors", a->colors,
                  "Images and gathers: seismic (blue-white-red) or grey; models and illumination "
                  "have their own colour maps")
      ->check(CLI::IsMember({"seismic", "grey"}))
      ->capture_default_str();
  cmd->callback([a]() { run_plot(*a); });
}

} // namespace rtm::app
