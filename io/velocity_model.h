// Velocity models and their HDF5 files (layout and checks in docs/io.md):
//   /vp  float32 [nz][ny][nx]; attributes spacing [dz,dy,dx] (m), origin [z0,y0,x0] (m),
//        axes "z,y,x", units "m/s" (or "km/s", converted on reading)
//   /sources   float64 [nshots][3] (z,y,x in metres), optional
//   /receivers float64 [nrec][3]   (z,y,x in metres), optional
#pragma once

#include <string>
#include <vector>

#include "solvers/contracts/velocity_model.h"

namespace rtm {

struct SurveyFrame; // io/survey_frame.h

// Acquisition positions that may travel with a model file.
struct ModelGeometry {
  std::vector<Position> sources;
  std::vector<Position> receivers;
};

enum class VelocityCheck {
  plausible,    // refuse values outside [kMinPlausibleVelocity, kMaxPlausibleVelocity]
  any_positive, // an unusual medium on purpose (--allow-unusual-velocities)
};

// Reads /vp (or `dataset`) and checks everything docs/io.md lists: the file exists and is HDF5, the
// dataset exists with rank 3 and a float type, every value finite and positive, spacing positive,
// units m/s or km/s, and (unless `check` is any_positive) every velocity plausible. Throws
// InputError naming the file, dataset or attribute on any failure.
VelocityModel read_velocity_model(const std::string& path, const std::string& dataset = "vp",
                                  VelocityCheck check = VelocityCheck::plausible);

// Planes z_begin <= z < z_end of a velocity dataset (an HDF5 hyperslab: only they are read), for one
// rank of a z-slab decomposition (docs/decomposition.md). `model` holds those planes: its nz is their
// count and its origin oz that of plane z_begin; values converted to m/s and checked finite and
// positive. Plausibility needs the extremes of every plane of the file: the ranks reduce theirs and
// call check_velocity_planes_plausible. z_end < 0 reads every plane (read_velocity_model).
struct VelocityPlanes {
  VelocityModel model;
  int z_first = 0;  // model plane of model.vp's first plane
  int nz_whole = 0; // planes of the whole dataset
  std::string path, dataset;
  bool units_declared = false;
  double to_metres_per_second = 1.0;
};
VelocityPlanes read_velocity_planes(const std::string& path, const std::string& dataset, int z_begin,
                                    int z_end);
// The check of VelocityCheck::plausible on the whole dataset's extremes (m/s), with the same message.
void check_velocity_planes_plausible(const VelocityPlanes& read, double vmin, double vmax);
// The dataset's shape, spacing and origin (every plane's count in nz; vp empty), reading one plane.
VelocityModel read_model_shape(const std::string& path, const std::string& dataset = "vp");

// Reads /sources and /receivers when present (each [n][3] float64); empty when absent.
ModelGeometry read_model_geometry(const std::string& path);

// Writes the model (and geometry, when non-empty) under a temporary name, then renames it.
void write_velocity_model(const std::string& path, const VelocityModel& model,
                          const ModelGeometry& geometry = {});
// The same, with the survey the model was imported from recorded as attributes of /vp
// (io/survey_frame.h), for `rtm export` to number and place its traces as the survey did.
void write_velocity_model(const std::string& path, const VelocityModel& model,
                          const ModelGeometry& geometry, const SurveyFrame& frame);

} // namespace rtm
