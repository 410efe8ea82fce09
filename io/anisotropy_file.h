// The TTI datasets of a model file (docs/io.md): /epsilon and /delta (dimensionless), /theta (tilt
// of the symmetry axis from the vertical) and /phi (its azimuth from x towards y), degrees, each
// float32 [nz][ny][nx] with the spacing, origin and axes attributes of /vp.
#pragma once

#include <string>

#include "io/hdf5_util.h"
#include "solvers/contracts/velocity_model.h"

namespace rtm {

// True when the file has /epsilon (the mark of an anisotropic model).
bool has_anisotropy(const std::string& path);

// Reads the four datasets into model.anisotropy (model: /vp of the same file, already read).
// /epsilon and /delta are required; /theta and /phi may be absent (0: VTI). Each must have /vp's
// shape, spacing and origin; angles carry units "degrees" if any units. Then check_anisotropy
// (solvers/contracts/anisotropy.h). Throws InputError naming the file, dataset, cell and values.
void read_anisotropy(const std::string& path, VelocityModel& model);
// The same for the planes one rank of a z-slab decomposition holds (h5::read_grid_planes, an HDF5
// hyperslab): `model` holds /vp's planes z_first .. z_first + model.nz - 1 of nz_whole (its oz that
// of plane z_first); the checks name cells by their place in `model`.
void read_anisotropy_planes(const std::string& path, VelocityModel& model, int z_first, int nz_whole);

// Writes model.anisotropy's four datasets into an open file (write_velocity_model calls it).
void write_anisotropy_datasets(hid_t file, const VelocityModel& model, const std::string& path);

} // namespace rtm
