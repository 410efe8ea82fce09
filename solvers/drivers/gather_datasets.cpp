#include "solvers/drivers/gather_datasets.h"

#include <stdexcept>

namespace rtm {

namespace {

// The positions' axes and the depth: y, x, z of the model's grid at the gathers' strides.
NamedArray positioned(const VelocityModel& grid, const OffsetGatherLayout& l) {
  NamedArray a;
  a.dims = {l.ngy, l.ngx, l.nz};
  a.axes = {"y", "x", "z"};
  a.axis_units = {"m", "m", "m"};
  a.spacing = {l.stride_y * grid.dy, l.stride_x * grid.dx, grid.dz};
  a.origin = {grid.oy, grid.ox, grid.oz};
  return a;
}

} // namespace

GatherArrays gather_arrays(const VelocityModel& grid, const OffsetGatherLayout& l,
                           const std::vector<float>& offsets, const std::vector<float>& angles,
                           const AngleGatherSpec& angle_spec, bool write_offsets) {
  if (int64_t(offsets.size()) != l.values())
    throw std::invalid_argument("gather_arrays: the offset gathers do not fit their layout");
  GatherArrays out;
  const char* axis_names[2] = {"x", "y"};
  const int64_t angle_values = l.values() / l.nlag * angle_spec.angles;
  if (!angles.empty() && int64_t(angles.size()) != angle_values)
    throw std::invalid_argument("gather_arrays: the angle gathers do not fit their layout");
  // Reserved first: the arrays point into `store`, which must not move.
  out.store.reserve(size_t(2 * l.axes));
  for (int axis = 0; axis < l.axes; ++axis) {
    const double step = l.lag_step * (axis == 0 ? grid.dx : grid.dy);
    if (write_offsets) {
      const int64_t n = l.per_axis();
      out.store.emplace_back(offsets.begin() + axis * n, offsets.begin() + (axis + 1) * n);
      NamedArray a = positioned(grid, l);
      a.name = std::string("offset_gathers_") + axis_names[axis];
      a.data = &out.store.back();
      a.dims.push_back(l.nlag);
      a.axes.push_back("h");
      a.axis_units.push_back("m");
      a.spacing.push_back(step);
      a.origin.push_back(-l.lags * step);
      a.units = kOffsetGatherUnits;
      out.arrays.push_back(a);
    }
    if (!angles.empty()) {
      const int64_t n = angle_values / l.axes;
      out.store.emplace_back(angles.begin() + axis * n, angles.begin() + (axis + 1) * n);
      NamedArray a = positioned(grid, l);
      a.name = std::string("angle_gathers_") + axis_names[axis];
      a.data = &out.store.back();
      a.dims.push_back(angle_spec.angles);
      a.axes.push_back("angle");
      a.axis_units.push_back("degrees");
      a.spacing.push_back(2 * angle_spec.max_degrees / (angle_spec.angles - 1));
      a.origin.push_back(-angle_spec.max_degrees);
      a.units = kAngleGatherUnits;
      out.arrays.push_back(a);
    }
  }
  return out;
}

unsigned long long gather_bytes(const VelocityModel& shape, const OffsetGatherSpec& spec,
                                bool offsets, bool angles, const AngleGatherSpec& angle_spec) {
  if (!spec.enabled()) return 0;
  const OffsetGatherLayout l = offset_gather_layout(Box{0, shape.nx, 0, shape.ny, 0, shape.nz}, spec);
  const unsigned long long per_lag = (unsigned long long)(l.values() / l.nlag) * sizeof(float);
  return (offsets ? per_lag * l.nlag : 0) + (angles ? per_lag * angle_spec.angles : 0);
}

} // namespace rtm
