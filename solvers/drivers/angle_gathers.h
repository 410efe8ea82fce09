// Angle-domain common-image gathers from subsurface-offset gathers (docs/rtm.md, section 5d): the
// offset-to-angle transform of Sava & Fomel (2003). For each gather position and lag axis the
// panel I(z, h) (h the half-offset: S at x - h, R at x + h) goes to the Fourier domain over z,
// and for each depth wavenumber k_z and angle theta the sum over the lags is evaluated exactly at
//   k_h = -k_z tan(theta),
// then back over z:  A(k_z, theta) = sum_h I(k_z, h) exp(-i k_h h). In the space domain this is
// the slant stack A(z, theta) = sum_h I(z + h tan(theta), h) with band-limited interpolation along
// z, so a reflector imaged in the right velocity, focused at h = 0, is flat in theta.
//
// The FFT over z is FFTW's (libfftw3-dev, single precision).
#pragma once

#include <string>
#include <vector>

#include "solvers/contracts/offset_gathers.h"

namespace rtm {

struct AngleGatherSpec {
  int angles = 61;         // odd: theta = -max .. max in equal steps, 0 among them
  double max_degrees = 60; // 0 < max < 90
};

// InputError naming `option` unless angles >= 2 and 0 < max_degrees < 90.
void check_angle_gather_spec(const AngleGatherSpec& spec, const std::string& option);

// theta of angle index a in degrees.
double angle_degrees(const AngleGatherSpec& spec, int a);

// The angle gathers of `offset` (dense as `layout` says, [axis][gy][gx][z][lag]), dense
// [axis][gy][gx][z][angle]. dz: the depth step (m); dx, dy: the horizontal ones (m), the lags
// along x being lag_step * dx apart and those along y lag_step * dy. Depths are padded to twice
// their count before the FFT so that the slant stack does not wrap around; angles whose k_h
// exceeds the lags' Nyquist wavenumber pi / dh at a k_z get nothing there (unsampled).
std::vector<float> angle_gathers(const std::vector<float>& offset, const OffsetGatherLayout& layout,
                                 double dz, double dx, double dy, const AngleGatherSpec& spec);

} // namespace rtm
