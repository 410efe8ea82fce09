// XDMF sidecars: a small XML file next to each HDF5 grid file that tells ParaView and VisIt the
// grid's shape, spacing and origin and where its datasets are, so `paraview image.xmf` opens the
// image at its true position in metres (docs/io.md, "ParaView and Python tools").
#pragma once

#include <string>
#include <vector>

#include "io/velocity_model.h"

namespace rtm {

// "dir/image.h5" -> "dir/image.xmf" (".hdf5" and ".h5" replaced, anything else gets ".xmf").
std::string xdmf_path_for(const std::string& hdf5_path);

// Writes the sidecar of `hdf5_path`: one uniform 3-D co-rectilinear grid (grid's shape, spacing
// and origin) with a node-centred scalar attribute per dataset name. The HDF5 file is named
// relative to the sidecar, so the pair can be moved together. Atomic, like every writer.
void write_xdmf_sidecar(const std::string& hdf5_path, const VelocityModel& grid,
                        const std::vector<std::string>& datasets);

} // namespace rtm
