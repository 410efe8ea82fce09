// Velocity models and their HDF5 files (layout and checks in docs/io.md):
//   /vp  float32 [nz][ny][nx]; attributes spacing [dz,dy,dx] (m), origin [z0,y0,x0] (m),
//        axes "z,y,x", units "m/s" (or "km/s", converted on reading)
//   /sources   float64 [nshots][3] (z,y,x in metres), optional
//   /receivers float64 [nrec][3]   (z,y,x in metres), optional
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rtm {

using Position = std::array<double, 3>; // (z, y, x) in metres, the HDF5 order

struct VelocityModel {
  int nx = 0, ny = 0, nz = 0;
  double dx = 0, dy = 0, dz = 0; // spacing (m)
  double ox = 0, oy = 0, oz = 0; // origin of cell (0,0,0) (m)
  std::vector<float> vp;         // m/s, [nz][ny][nx], x fastest

  int64_t cells() const { return int64_t(nx) * ny * nz; }
  float& at(int i, int j, int k) { return vp[(int64_t(k) * ny + j) * nx + i]; }
  float at(int i, int j, int k) const { return vp[(int64_t(k) * ny + j) * nx + i]; }
  float vmin() const;
  float vmax() const;
};

// Acquisition positions that may travel with a model file.
struct ModelGeometry {
  std::vector<Position> sources;
  std::vector<Position> receivers;
};

// P velocities of seismic media lie between these (m/s): dry soil and air-filled sediment near
// 300, the fastest crystalline rocks well under 10 000. Values outside are nearly always a units
// mistake (km/s written without a units attribute runs, and models garbage), so every model that
// enters the program passes check_plausible_velocities (docs/robustness.md).
constexpr double kMinPlausibleVelocity = 300;
constexpr double kMaxPlausibleVelocity = 10000;

enum class VelocityCheck {
  plausible,    // refuse values outside [kMinPlausibleVelocity, kMaxPlausibleVelocity]
  any_positive, // an unusual medium on purpose (--allow-unusual-velocities)
};

// Throws InputError when a velocity of `model` (m/s) lies outside the plausible range, naming
// `source` (e.g. "m.h5: dataset /vp"), the range found and a hint: `km_per_s_hint` when the values
// would be plausible in km/s, `thousandfold_hint` when they would be plausible divided by 1000;
// else a general one. Every way a model enters (HDF5 files, generated models, importers) calls it.
void check_plausible_velocities(const VelocityModel& model, const std::string& source,
                                const std::string& km_per_s_hint,
                                const std::string& thousandfold_hint);

// Reads /vp (or `dataset`) and checks everything docs/io.md lists: the file exists and is HDF5, the
// dataset exists with rank 3 and a float type, every value finite and positive, spacing positive,
// units m/s or km/s, and (unless `check` is any_positive) every velocity plausible. Throws
// InputError naming the file, dataset or attribute on any failure.
VelocityModel read_velocity_model(const std::string& path, const std::string& dataset = "vp",
                                  VelocityCheck check = VelocityCheck::plausible);

// Reads /sources and /receivers when present (each [n][3] float64); empty when absent.
ModelGeometry read_model_geometry(const std::string& path);

// Writes the model (and geometry, when non-empty) under a temporary name, then renames it.
void write_velocity_model(const std::string& path, const VelocityModel& model,
                          const ModelGeometry& geometry = {});

} // namespace rtm
