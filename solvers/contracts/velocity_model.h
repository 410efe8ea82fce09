// A velocity model in memory, the positions that go with it, and the plausibility check every model
// passes on its way in: plain data that the drivers, io/ and the tests share. Reading and writing
// the model files is io/velocity_model.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "solvers/contracts/anisotropy.h"

namespace rtm {

using Position = std::array<double, 3>; // (z, y, x) in metres, the HDF5 order

struct VelocityModel {
  int nx = 0, ny = 0, nz = 0;
  double dx = 0, dy = 0, dz = 0; // spacing (m)
  double ox = 0, oy = 0, oz = 0; // origin of cell (0,0,0) (m)
  std::vector<float> vp;         // m/s, [nz][ny][nx], x fastest
  Anisotropy anisotropy;         // TTI parameters like vp; empty for an isotropic model

  int64_t cells() const { return int64_t(nx) * ny * nz; }
  float& at(int i, int j, int k) { return vp[(int64_t(k) * ny + j) * nx + i]; }
  float at(int i, int j, int k) const { return vp[(int64_t(k) * ny + j) * nx + i]; }
  float vmin() const;
  float vmax() const;
  // The index into vp (and the anisotropy arrays) of the cell nearest to a position, clamped to
  // the model.
  int64_t nearest_cell(const Position& zyx) const;
};

// P velocities of seismic media lie between these (m/s): dry soil and air-filled sediment near
// 300, the fastest crystalline rocks well under 10 000. Values outside are nearly always a units
// mistake (km/s written without a units attribute runs, and models garbage), so every model that
// enters the program passes check_plausible_velocities (docs/robustness.md).
constexpr double kMinPlausibleVelocity = 300;
constexpr double kMaxPlausibleVelocity = 10000;

// Throws InputError when a velocity of `model` (m/s) lies outside the plausible range, naming
// `source` (e.g. "m.h5: dataset /vp"), the range found and a hint: `km_per_s_hint` when the values
// would be plausible in km/s, `thousandfold_hint` when they would be plausible divided by 1000;
// else a general one. Every way a model enters (HDF5 files, generated models, importers) calls it.
void check_plausible_velocities(const VelocityModel& model, const std::string& source,
                                const std::string& km_per_s_hint,
                                const std::string& thousandfold_hint);

} // namespace rtm
