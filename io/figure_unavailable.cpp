// Figures in a build without Cairo (the GPU machine's image lacks it): every writer says so.
#include "solvers/contracts/errors.h"
#include "io/figure.h"

namespace rtm {

bool figures_supported() { return false; }

std::string no_figure_support_message() {
  return "this rtm was built without figure support (Cairo was not found at build time, or "
         "-DRTM_ENABLE_FIGURES=OFF; install libcairo2-dev and rebuild, or draw the HDF5 files "
         "later with `rtm plot` on a build that has it)";
}

void write_figure(const std::string& path, const Figure&) {
  throw InputError(path + ": " + no_figure_support_message());
}

void write_line_plot(const std::string& path, const std::string&, const std::string&,
                     const std::string&, const std::vector<PlotSeries>&, int, int) {
  throw InputError(path + ": " + no_figure_support_message());
}

} // namespace rtm
