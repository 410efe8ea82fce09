// The phase correction of the recorded data before they are injected as the receiver wavefield's
// source (docs/rtm.md, section 6a). The phase an image carries depends on the acquisition and on
// the scatterer: a reflector's image is a stationary-phase sum over every direction the
// acquisition samples densely (-45 degrees each), a point scatterer's is not (its image at the
// point is a sum of terms all in phase), and a point scatters the second time derivative of
// what a reflector reflects. Filtering each trace by (-i omega / omega0)^order makes a reflector
// zero-phase with order = dense directions / 2 and a point with order 2; no single filter does
// both (the image is linear in the model); the automatic one takes the order halfway where that
// leaves both within 45 degrees, else the reflector's.
//
// The filter is applied by the migration driver to the data before back-propagation; it is not
// part of the Born modeling / migration operator pair the adjoint test checks.
#pragma once

#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

enum class DataPhaseFilter {
  automatic, // chosen from the geometry of the receivers and the sources (automatic_data_phase_order)
  none,      // order 0: a reflector's filter for isolated receivers and shots
  half,      // order 1/2: a reflector's filter for a dense line
  full,      // order 1: a reflector's filter for a dense areal spread
  order,     // a fixed order given as a number (MigrationParams::data_phase_order)
};
DataPhaseFilter parse_data_phase_filter(const std::string& name); // auto|none|half|full
// A number given instead of a name: the order, 0 to 3 (InputError outside; false: not a number).
bool parse_data_phase_order(const std::string& text, double& order);
const char* data_phase_filter_name(DataPhaseFilter filter);
// The filter as asked and the order applied, e.g. "auto, order 1.5" (the image file's attribute).
std::string describe_data_phase_filter(DataPhaseFilter filter, double order);
// The order (exponent of -i omega) of a fixed filter: 0, 0.5 or 1. Not defined for `automatic`
// and `order` (their order is a number of the run's).
double data_phase_filter_order(DataPhaseFilter filter);

// What a spread of points (receivers, or the shots' sources) looks like at the dominant
// wavelength of the data.
struct ReceiverSpread {
  int receivers = 0;
  double spacing = 0;          // median distance of a point to its nearest neighbour (m)
  double wavelength = 0;       // dominant wavelength v / f0 at the points (m)
  double extent[3] = {0, 0, 0}; // extents along the principal axes, largest first (m)
  double axis[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}; // those axes, unit (z, y, x) vectors
  bool dense = false;          // spacing <= wavelength / 2
  int dense_axes = 0;          // 0 points, 1 line, 2 areal (see choose_data_phase_filter)
};

// The rule (docs/rtm.md, 6a): points are a *dense* spread when the median nearest-neighbour
// spacing is at most half the dominant wavelength v / f0 (v: `velocity` at the points). Of a
// dense spread, each principal axis whose extent is at least two wavelengths counts (the first
// Fresnel zone of a reflector a few wavelengths deep fits in it); two such axes count as areal only
// when the points fill at least half of their bounding rectangle at that spacing (a cross of
// two lines is two lines, not a plane). Not dense, or no long axis: points.
// `long_wavelengths`: the extent, in dominant wavelengths, from which an axis counts (2 for
// receivers, 1 for midpoints, whose extent is half that of the offsets).
ReceiverSpread describe_receiver_spread(const std::vector<Position>& receivers, double velocity,
                                        double f0, double long_wavelengths = 2);
// A reflector's filter for receivers alone (the rule before sources and scatterers were counted):
// none, half or full for 0, 1 or 2 dense axes.
DataPhaseFilter choose_data_phase_filter(const ReceiverSpread& spread);
// One line for the log, e.g. "areal: 1600 receivers 10 m apart (wavelength 111 m), 390 x 390 m".
std::string describe(const ReceiverSpread& spread, const char* noun = "receiver");

// The midpoints (s + r) / 2 of every source-receiver pair: for a flat reflector, where each pair
// reflects (its specular point lies under it). receivers[i] is shot i's spread. Above `limit`
// pairs, whole shots are skipped evenly (a shot's own midpoints keep their spacing).
std::vector<Position> acquisition_midpoints(const std::vector<Position>& sources,
                                            const std::vector<const std::vector<Position>*>& receivers,
                                            size_t limit = 200000);
// How many directions (0, 1 or 2) the midpoints sample densely: spacing at most half the
// dominant wavelength, extent at least one wavelength (a reflector's Fresnel zone a few
// wavelengths deep), as describe_receiver_spread counts axes. Each is a stationary-phase sum a
// reflector's image takes and a point scatterer's does not (docs/rtm.md, 6a).
int acquisition_dense_dims(const std::vector<Position>& midpoints, double velocity, double f0,
                           ReceiverSpread* spread = nullptr);
// The order of the automatic filter for `dense_dims` (docs/rtm.md, 6a): 1.5 for two, halfway
// between a point scatterer's zero-phase order 2 and a reflector's 1, which leaves both 45
// degrees from zero phase, of opposite signs; for fewer the halfway order would leave both 67.5
// or 90 degrees off, and the reflector's own order dense_dims / 2 is taken.
double automatic_data_phase_order(int dense_dims);
// The image's residual phase in degrees for a filter of `order` and a scatterer whose zero-phase
// order is `scatterer_order` (2 a point; dense_dims / 2 a reflector): 90 (scatterer_order - order),
// positive when the image leans to a positive lobe above the scatterer.
inline double residual_phase_degrees(double order, double scatterer_order) {
  return 90.0 * (scatterer_order - order);
}

// Filters every trace of `traces` [nrec][nt] (sampled every dt) by H(omega) =
// (-i omega / omega0)^order, omega0 = 2 pi f0 (unit gain at the peak frequency), in the frequency
// domain (zero-padded to a power of two >= 2 nt). order 1 is -d/dt / omega0. order 0: unchanged.
void apply_data_phase_filter(std::vector<float>& traces, int nrec, int nt, double dt, double order,
                             double f0);

} // namespace rtm
