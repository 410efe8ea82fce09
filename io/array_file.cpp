#include "io/array_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

template <class T>
T byte_swapped(T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  std::reverse(b, b + sizeof(T));
  std::memcpy(&v, b, sizeof(T));
  return v;
}

bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(path + ": cannot open the file for reading (does it exist?)");
  const std::streamoff size = in.tellg();
  std::vector<char> bytes(size_t(std::max<std::streamoff>(size, 0)));
  in.seekg(0);
  if (!in.read(bytes.data(), std::streamsize(bytes.size())))
    throw InputError(path + ": cannot read the file");
  return bytes;
}

// `raw` holds values in the file's axis order; returns them as [nz][ny][nx].
std::vector<float> to_zyx(std::vector<float> raw, const ArrayShape& s, AxisOrder order) {
  if (order == AxisOrder::zyx) return raw;
  std::vector<float> zyx(raw.size());
  for (int i = 0; i < s.nx; ++i)
    for (int j = 0; j < s.ny; ++j)
      for (int k = 0; k < s.nz; ++k)
        zyx[(size_t(k) * s.ny + j) * s.nx + i] = raw[(size_t(i) * s.ny + j) * s.nz + k];
  return zyx;
}

void check_finite(const std::vector<float>& values, const std::string& path) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw InputError(path + ": value " + std::to_string(i) + " (in file order) is not a finite "
                              "number");
}

} // namespace

AxisOrder parse_axis_order(const std::string& text, const std::string& option) {
  if (text == "zyx") return AxisOrder::zyx;
  if (text == "xyz") return AxisOrder::xyz;
  throw InputError(option + " " + text + ": expected zyx (x fastest, rtm's order) or xyz (z fastest)");
}

std::vector<float> read_npy(const std::string& path, AxisOrder order, ArrayShape& shape) {
  const std::vector<char> bytes = read_all(path);
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    throw InputError(path + ": not a NumPy .npy file (it does not start with \\x93NUMPY)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_length = 0, header_start = 0;
  auto byte = [&](size_t i) { return size_t(static_cast<unsigned char>(bytes[i])); };
  if (major == 1) {
    header_length = byte(8) | byte(9) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(path + ": truncated .npy header");
    header_length = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_start = 12;
  } else {
    throw InputError(path + ": .npy format version " + std::to_string(major) +
                     " is not known (1, 2 and 3 are)");
  }
  if (header_start + header_length > bytes.size())
    throw InputError(path + ": truncated .npy header");
  const std::string header(bytes.data() + header_start, header_length);

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([<>|=])([a-zA-Z])(\\d+)'")))
    throw InputError(path + ": .npy header has no dtype ('descr'): " + header);
  const char endian = m[1].str()[0], kind = m[2].str()[0];
  const int item = std::stoi(m[3].str());
  if (kind != 'f' || (item != 4 && item != 8))
    throw InputError(path + ": .npy dtype " + m[0].str().substr(m[0].str().find(':') + 1) +
                     " is not float32 or float64; convert with arr.astype(numpy.float32)");
  const bool fortran = std::regex_search(header, std::regex("'fortran_order'\\s*:\\s*True"));
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    throw InputError(path + ": .npy header has no shape: " + header);
  std::vector<int64_t> dims;
  {
    const std::string list = m[1].str();
    const std::regex digits("\\d+");
    std::sregex_iterator it(list.begin(), list.end(), digits), end;
    for (; it != end; ++it) dims.push_back(std::stoll(it->str()));
  }
  if (dims.size() != 3)
    throw InputError(path + ": .npy array has rank " + std::to_string(dims.size()) +
                     "; expected a 3-D array");
  for (int64_t d : dims)
    if (d < 1 || d > (int64_t(1) << 30))
      throw InputError(path + ": .npy shape has a dimension of " + std::to_string(d));
  // Fortran order of shape (a, b, c) is C order of shape (c, b, a): read it as that.
  if (fortran) std::reverse(dims.begin(), dims.end());
  AxisOrder stored = order;
  if (fortran) stored = order == AxisOrder::zyx ? AxisOrder::xyz : AxisOrder::zyx;
  if (stored == AxisOrder::zyx)
    shape = {int(dims[2]), int(dims[1]), int(dims[0])};
  else
    shape = {int(dims[0]), int(dims[1]), int(dims[2])};

  const size_t count = size_t(shape.cells());
  const size_t data_start = header_start + header_length;
  if (bytes.size() - data_start < count * size_t(item))
    throw InputError(path + ": the .npy file holds " + std::to_string(bytes.size() - data_start) +
                     " bytes of data; its header promises " + std::to_string(count * size_t(item)) +
                     " (truncated?)");
  const bool swap = (endian == '>' && host_is_little_endian()) || (endian == '<' && !host_is_little_endian());
  std::vector<float> values(count);
  const char* data = bytes.data() + data_start;
  for (size_t i = 0; i < count; ++i) {
    if (item == 4) {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      values[i] = swap ? byte_swapped(v) : v;
    } else {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      values[i] = float(swap ? byte_swapped(v) : v);
    }
  }
  check_finite(values, path);
  return to_zyx(std::move(values), shape, stored);
}

std::vector<float> read_raw_float32(const std::string& path, const ArrayShape& shape,
                                    AxisOrder order, bool big_endian) {
  const std::vector<char> bytes = read_all(path);
  const size_t expected = size_t(shape.cells()) * 4;
  if (bytes.size() != expected)
    throw InputError(path + ": holds " + std::to_string(bytes.size()) + " bytes; --shape " +
                     std::to_string(shape.nx) + "," + std::to_string(shape.ny) + "," +
                     std::to_string(shape.nz) + " of float32 needs exactly " +
                     std::to_string(expected) + (bytes.size() % 4 == 0 && bytes.size() / 4 != 0
                                                     ? " (" + std::to_string(bytes.size() / 4) +
                                                           " values found)"
                                                     : ""));
  const bool swap = big_endian == host_is_little_endian();
  std::vector<float> values(size_t(shape.cells()));
  for (size_t i = 0; i < values.size(); ++i) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    values[i] = swap ? byte_swapped(v) : v;
  }
  check_finite(values, path);
  return to_zyx(std::move(values), shape, order);
}

void write_npy(const std::string& path, const std::vector<float>& values, const ArrayShape& shape) {
  write_npy_array(path, values, {shape.nz, shape.ny, shape.nx});
}

void write_npy_array(const std::string& path, const std::vector<float>& values,
                     const std::vector<long long>& dims) {
  long long count = dims.empty() ? 0 : 1;
  std::string shape_text;
  for (long long d : dims) {
    count *= d;
    shape_text += std::to_string(d) + ", ";
  }
  if (values.size() != size_t(count))
    throw std::invalid_argument("write_npy: " + std::to_string(values.size()) +
                                " values for a shape of " + std::to_string(count));
  // "(4, 5, 6)", and "(3,)" for one dimension, as NumPy writes them.
  if (!shape_text.empty()) shape_text.resize(shape_text.size() - (dims.size() > 1 ? 2 : 1));
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape_text +
                       "), }";
  // Version 1.0: magic (6) + version (2) + length (2) + header padded with spaces to a multiple
  // of 64 bytes, ending in a newline.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.resize(total - 10 - 1, ' ');
  header += '\n';
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw InputError(path + ": cannot create the file");
    const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                        static_cast<unsigned char>(header.size() & 0xff),
                                        static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(preamble), 10);
    out.write(header.data(), std::streamsize(header.size()));
    if (host_is_little_endian()) {
      out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
    } else {
      for (float v : values) {
        const float le = byte_swapped(v);
        out.write(reinterpret_cast<const char*>(&le), 4);
      }
    }
    out.close();
    if (!out) throw std::runtime_error(path + ": writing failed (disk full?)");
  });
}

} // namespace rtm
