// Plain arrays in and out: NumPy .npy files and raw binary float32 (docs/io.md, "NumPy and raw").
//
// rtm's arrays are [nz][ny][nx] with x fastest ("zyx"). Arrays from elsewhere often come the other
// way round, [nx][ny][nz] with depth fastest ("xyz", e.g. Fortran codes and many Python tools);
// the reader takes the order as an argument and returns rtm's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rtm {

enum class AxisOrder {
  zyx, // C order [nz][ny][nx]: x fastest (rtm's own)
  xyz, // C order [nx][ny][nz]: z fastest
};
// "zyx" or "xyz"; InputError naming `option` otherwise.
AxisOrder parse_axis_order(const std::string& text, const std::string& option);

struct ArrayShape {
  int nx = 0, ny = 0, nz = 0;
  int64_t cells() const { return int64_t(nx) * ny * nz; }
};

// Whether a file name says NumPy (.npy): how import and export pick a format.
inline bool has_npy_extension(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

// A 3-D .npy array (format 1.0 to 3.0; float32 or float64 of either byte order; C or Fortran
// order) as [nz][ny][nx] floats; `shape` receives nx, ny, nz. The array's own axes are read as
// `order` says. InputError naming the file on anything else (not .npy, rank != 3, integer or
// complex data, a file shorter than the header says, non-finite values).
std::vector<float> read_npy(const std::string& path, AxisOrder order, ArrayShape& shape);

// A raw file of nx*ny*nz float32 values in `order`, little-endian unless `big_endian`. InputError
// when the file's size is not exactly that, or a value is not finite.
std::vector<float> read_raw_float32(const std::string& path, const ArrayShape& shape,
                                    AxisOrder order, bool big_endian);

// Writes [nz][ny][nx] floats as a .npy array of shape (nz, ny, nx), little-endian float32, C
// order (numpy.load gives arr[z, y, x]). Atomic: written under a temporary name.
void write_npy(const std::string& path, const std::vector<float>& values, const ArrayShape& shape);
// The same for an array of any rank: `dims` slowest first (NumPy's C order).
void write_npy_array(const std::string& path, const std::vector<float>& values,
                     const std::vector<long long>& dims);

} // namespace rtm
