#include "io/xdmf_sidecar.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {

std::string xdmf_path_for(const std::string& hdf5_path) {
  std::filesystem::path p(hdf5_path);
  if (p.extension() == ".h5" || p.extension() == ".hdf5") p.replace_extension(".xmf");
  else p += ".xmf";
  return p.string();
}

void write_xdmf_sidecar(const std::string& hdf5_path, const VelocityModel& grid,
                        const std::vector<std::string>& datasets) {
  const std::string target = xdmf_path_for(hdf5_path);
  const std::string file = std::filesystem::path(hdf5_path).filename().string();
  char dims[96], origin[160], spacing[160];
  // XDMF lists a 3DCoRectMesh's dimensions, origin and spacing slowest axis first: z, y, x.
  std::snprintf(dims, sizeof dims, "%d %d %d", grid.nz, grid.ny, grid.nx);
  std::snprintf(origin, sizeof origin, "%.17g %.17g %.17g", grid.oz, grid.oy, grid.ox);
  std::snprintf(spacing, sizeof spacing, "%.17g %.17g %.17g", grid.dz, grid.dy, grid.dx);
  std::string xml = "<?xml version=\"1.0\" ?>\n<!-- written by rtm: open with ParaView or VisIt; "
                    "the data live in " + file + " -->\n"
                    "<Xdmf Version=\"3.0\">\n  <Domain>\n    <Grid Name=\"" + file +
                    "\" GridType=\"Uniform\">\n"
                    "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" + dims + "\"/>\n"
                    "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
                    "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" +
                    origin + "</DataItem>\n"
                    "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" +
                    spacing + "</DataItem>\n      </Geometry>\n";
  for (const std::string& name : datasets)
    xml += "      <Attribute Name=\"" + name + "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
           "        <DataItem Dimensions=\"" + std::string(dims) +
           "\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" + file + ":/" + name +
           "</DataItem>\n      </Attribute>\n";
  xml += "    </Grid>\n  </Domain>\n</Xdmf>\n";
  write_file_atomically(target, [&](const std::string& temporary) {
    std::ofstream out(temporary);
    if (!out) throw InputError(target + ": cannot create the file");
    out << xml;
    out.close();
    if (!out) throw std::runtime_error(target + ": writing failed (disk full?)");
  });
}

} // namespace rtm
