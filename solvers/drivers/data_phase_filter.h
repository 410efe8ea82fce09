// The phase correction of the recorded data before they are injected as the receiver wavefield's
// source (docs/rtm.md, section 6a). Injecting each trace at its receiver as a point source makes
// the receiver wavefield the true (time-reversed) reflected field only where the receivers are
// isolated points: summed over a dense line of receivers the 3-D Green's functions add up to a
// half-integral in time of the true field (-45 degrees), over a dense plane to a full integral
// (-90 degrees). Filtering each trace by (-i omega / omega0)^order, order 0, 1/2 or 1, undoes that,
// so the image of a reflector is a zero-phase peak at its depth.
//
// The filter is applied by the migration driver to the data before back-propagation; it is not
// part of the Born modeling / migration operator pair the adjoint test checks.
#pragma once

#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

enum class DataPhaseFilter {
  automatic, // chosen from the receiver geometry (choose_data_phase_filter)
  none,      // order 0: isolated receivers
  half,      // order 1/2: a dense line of receivers
  full,      // order 1: a dense areal spread of receivers
};
DataPhaseFilter parse_data_phase_filter(const std::string& name); // auto|none|half|full
const char* data_phase_filter_name(DataPhaseFilter filter);
// The order (exponent of -i omega): 0, 0.5 or 1. Not defined for `automatic`.
double data_phase_filter_order(DataPhaseFilter filter);

// What the receiver geometry looks like at the dominant wavelength of the data.
struct ReceiverSpread {
  int receivers = 0;
  double spacing = 0;          // median distance of a receiver to its nearest neighbour (m)
  double wavelength = 0;       // dominant wavelength v / f0 at the receivers (m)
  double extent[3] = {0, 0, 0}; // extents along the principal axes, largest first (m)
  bool dense = false;          // spacing <= wavelength / 2
  int dense_axes = 0;          // 0 points, 1 line, 2 areal (see choose_data_phase_filter)
};

// The rule (docs/rtm.md, 6a): receivers are a *dense* spread when the median nearest-neighbour
// spacing is at most half the dominant wavelength v / f0 (v: `velocity` at the receivers). Of a
// dense spread, each principal axis whose extent is at least two wavelengths counts (the first
// Fresnel zone of a reflector a few wavelengths deep fits in it); two such axes count as areal only
// when the receivers fill at least half of their bounding rectangle at that spacing (a cross of
// two lines is two lines, not a plane). Not dense, or no long axis: points.
ReceiverSpread describe_receiver_spread(const std::vector<Position>& receivers, double velocity,
                                        double f0);
DataPhaseFilter choose_data_phase_filter(const ReceiverSpread& spread);
// One line for the log, e.g. "areal: 1600 receivers 10 m apart (wavelength 111 m), 390 x 390 m".
std::string describe(const ReceiverSpread& spread);

// Filters every trace of `traces` [nrec][nt] (sampled every dt) by H(omega) =
// (-i omega / omega0)^order, omega0 = 2 pi f0 (unit gain at the peak frequency), in the frequency
// domain (zero-padded to a power of two >= 2 nt). order 1 is -d/dt / omega0. order 0: unchanged.
void apply_data_phase_filter(std::vector<float>& traces, int nrec, int nt, double dt, double order,
                             double f0);

} // namespace rtm
