#include "io/segy_file.h"

#include <segyio/segy.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

// ---- segyio plumbing --------------------------------------------------------------------------

struct SegyCloser {
  void operator()(segy_file* fp) const { segy_close(fp); }
};
using SegyHandle = std::unique_ptr<segy_file, SegyCloser>;

std::string format_name(int format) {
  switch (format) {
  case SEGY_IBM_FLOAT_4_BYTE: return "1 (4-byte IBM float)";
  case SEGY_SIGNED_INTEGER_4_BYTE: return "2 (4-byte integer)";
  case SEGY_SIGNED_SHORT_2_BYTE: return "3 (2-byte integer)";
  case SEGY_FIXED_POINT_WITH_GAIN_4_BYTE: return "4 (fixed point with gain, obsolete)";
  case SEGY_IEEE_FLOAT_4_BYTE: return "5 (4-byte IEEE float)";
  case SEGY_SIGNED_CHAR_1_BYTE: return "8 (1-byte integer)";
  default: return std::to_string(format) + " (not a SEG-Y sample format)";
  }
}

// A SEG-Y file opened for reading, its binary header checked: what every reader needs.
struct SegyInput {
  SegyHandle fp;
  int format = 0, samples = 0, traces = 0, trace_bytes = 0;
  long trace0 = 0;
  double interval = 0;     // the binary header's sample interval field, as stored
  std::string text_header; // ASCII (segyio converts EBCDIC)
};

SegyInput open_segy(const std::string& path) {
  SegyInput in;
  if (FILE* probe = std::fopen(path.c_str(), "rb"))
    std::fclose(probe);
  else
    throw InputError(path + ": cannot open the file for reading (does it exist?)");
  in.fp.reset(segy_open(path.c_str(), "rb"));
  if (!in.fp) throw InputError(path + ": cannot open the file for reading");

  std::array<char, SEGY_TEXT_HEADER_SIZE + 1> text{};
  char bin[SEGY_BINARY_HEADER_SIZE];
  if (segy_read_textheader(in.fp.get(), text.data()) != SEGY_OK ||
      segy_binheader(in.fp.get(), bin) != SEGY_OK)
    throw InputError(path + ": not a SEG-Y file: shorter than the 3600 bytes of its text and "
                            "binary headers");
  in.text_header.assign(text.data());
  in.format = segy_format(bin);
  if (in.format != SEGY_IBM_FLOAT_4_BYTE && in.format != SEGY_IEEE_FLOAT_4_BYTE)
    throw InputError(path + ": binary header (byte 3225) gives sample format " +
                     format_name(in.format) +
                     "; rtm reads 4-byte IBM (1) or IEEE (5) floats. Convert the file, e.g. with "
                     "segyio or Seismic Unix, to one of those");
  in.samples = segy_samples(bin);
  if (in.samples < 1)
    throw InputError(path + ": binary header (byte 3221) gives " + std::to_string(in.samples) +
                     " samples per trace; expected at least 1");
  in.trace0 = segy_trace0(bin);
  in.trace_bytes = segy_trsize(in.format, in.samples);
  if (segy_set_format(in.fp.get(), in.format) != SEGY_OK)
    throw InputError(path + ": segyio cannot read sample format " + format_name(in.format));
  const int err = segy_traces(in.fp.get(), &in.traces, in.trace0, in.trace_bytes);
  if (err == SEGY_TRACE_SIZE_MISMATCH)
    throw InputError(path + ": truncated or inconsistent: the bytes after the headers are not a "
                            "whole number of traces of " +
                     std::to_string(SEGY_TRACE_HEADER_SIZE + in.trace_bytes) + " bytes (" +
                     std::to_string(in.samples) + " samples of format " + format_name(in.format) +
                     " plus the 240-byte header)");
  if (err != SEGY_OK || in.traces < 1)
    throw InputError(path + ": no traces after the 3600 bytes of headers");
  // The binary header's interval, or the first trace header's when that one is 0.
  float interval = 0;
  segy_sample_interval(in.fp.get(), 0.0f, &interval);
  in.interval = interval;
  return in;
}

int32_t field(const char* header, int byte) {
  int32_t value = 0;
  segy_get_field(header, byte, &value);
  return value;
}

// SEG-Y scalars: positive multiplies, negative divides, zero means one.
double apply_scalar(int32_t value, int32_t scalar) {
  if (scalar > 0) return double(value) * scalar;
  if (scalar < 0) return double(value) / -double(scalar);
  return value;
}

// Reads trace `t` as native floats.
void read_trace(const SegyInput& in, const std::string& path, int t, float* samples) {
  if (segy_readtrace(in.fp.get(), t, samples, in.trace0, in.trace_bytes) != SEGY_OK)
    throw InputError(path + ": cannot read trace " + std::to_string(t + 1) + " (truncated file?)");
  segy_to_native(in.format, in.samples, samples);
  for (int k = 0; k < in.samples; ++k)
    if (!std::isfinite(samples[k]))
      throw InputError(path + ": trace " + std::to_string(t + 1) + " sample " +
                       std::to_string(k + 1) + " is not a finite number");
}

std::string number(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.10g", v);
  return s;
}

// The exact grid rtm writes into text-header line 40 (read back so a round trip is exact):
// "RTM key=value ...". Empty when the line is not there.
std::map<std::string, double> rtm_text_fields(const std::string& text) {
  std::map<std::string, double> fields;
  for (size_t line = 0; line < text.size(); line += 80) {
    const std::string row = text.substr(line, 80);
    const size_t at = row.find("RTM ");
    if (at == std::string::npos) continue;
    std::istringstream words(row.substr(at + 4));
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      try {
        fields[word.substr(0, eq)] = std::stod(word.substr(eq + 1));
      } catch (const std::exception&) {
      }
    }
  }
  return fields;
}

// A text header of 40 lines of 80 characters: "C 1 ..." lines, rtm's exact grid in line 40.
std::string text_header(const std::vector<std::string>& lines, const std::string& rtm_fields) {
  std::string text;
  for (int i = 0; i < 40; ++i) {
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "C%2d ", i + 1);
    std::string row = prefix;
    if (i == 39)
      row += "RTM " + rtm_fields;
    else if (size_t(i) < lines.size())
      row += lines[size_t(i)];
    row.resize(80, ' ');
    text += row;
  }
  return text;
}

// Largest power-of-ten scalar (1 to 10000, written as -divisor) that keeps every value within
// int32 when multiplied: the finest precision the header's 4-byte fields allow.
int32_t coordinate_divisor(const std::vector<double>& values) {
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  int32_t divisor = 10000;
  while (divisor > 1 && largest * divisor > 2.0e9) divisor /= 10;
  if (largest > 2.0e9)
    throw std::invalid_argument("SEG-Y: coordinate " + number(largest) + " m does not fit the "
                                "4-byte header fields");
  return divisor;
}

int32_t scaled(double v, int32_t divisor) { return int32_t(std::llround(v * divisor)); }

// Writes a SEG-Y file of IEEE floats: text header, binary header, then each trace's header and
// samples from the callbacks. Everything atomically under a temporary name.
void write_segy(const std::string& path, const std::string& text, int samples, int traces,
                int interval_field, int sorting,
                const std::function<void(int trace, char* header)>& fill_header,
                const std::function<void(int trace, float* samples)>& fill_samples) {
  if (interval_field < 1 || interval_field > 32767)
    throw InputError(path + ": the sample interval " + std::to_string(interval_field) +
                     " does not fit SEG-Y's 2-byte field (1 to 32767)");
  if (samples > 32767)
    throw InputError(path + ": " + std::to_string(samples) +
                     " samples per trace do not fit SEG-Y's 2-byte field (at most 32767)");
  write_file_atomically(path, [&](const std::string& temporary) {
    SegyHandle fp(segy_open(temporary.c_str(), "w+b"));
    if (!fp) throw InputError(path + ": cannot create the file");
    auto check = [&](int err, const char* what) {
      if (err != SEGY_OK)
        throw std::runtime_error(path + ": writing the " + std::string(what) + " failed (segyio " +
                                 std::to_string(err) + ")");
    };
    check(segy_write_textheader(fp.get(), 0, text.c_str()), "text header");
    char bin[SEGY_BINARY_HEADER_SIZE] = {};
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, interval_field);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, samples);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bin, SEGY_BIN_SORTING_CODE, sorting);
    segy_set_bfield(bin, SEGY_BIN_MEASUREMENT_SYSTEM, 1); // metres
    segy_set_bfield(bin, SEGY_BIN_SEGY_REVISION, 0x0100);
    segy_set_bfield(bin, SEGY_BIN_TRACE_FLAG, 1);         // every trace has the same length
    check(segy_write_binheader(fp.get(), bin), "binary header");
    check(segy_set_format(fp.get(), SEGY_IEEE_FLOAT_4_BYTE), "format");
    const long trace0 = segy_trace0(bin);
    const int trace_bytes = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, samples);
    std::vector<float> data(static_cast<size_t>(samples));
    for (int t = 0; t < traces; ++t) {
      char header[SEGY_TRACE_HEADER_SIZE] = {};
      segy_set_field(header, SEGY_TR_SEQ_LINE, t + 1);
      segy_set_field(header, SEGY_TR_SEQ_FILE, t + 1);
      segy_set_field(header, SEGY_TR_TRACE_ID, 1);
      segy_set_field(header, SEGY_TR_SAMPLE_COUNT, samples);
      segy_set_field(header, SEGY_TR_SAMPLE_INTER, interval_field);
      fill_header(t, header);
      check(segy_write_traceheader(fp.get(), t, header, trace0, trace_bytes), "trace header");
      fill_samples(t, data.data());
      segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, samples, data.data());
      check(segy_writetrace(fp.get(), t, data.data(), trace0, trace_bytes), "trace");
    }
    check(segy_flush(fp.get(), false), "file");
  });
}

// Sorted distinct values, with a check that they are evenly spaced (a gap means a missing line).
std::vector<int> line_numbers(const std::vector<int>& numbers, const std::string& path,
                              const char* what, int byte) {
  std::vector<int> lines(std::set<int>(numbers.begin(), numbers.end()).size());
  {
    const std::set<int> distinct(numbers.begin(), numbers.end());
    std::copy(distinct.begin(), distinct.end(), lines.begin());
  }
  for (size_t i = 2; i < lines.size(); ++i)
    if (lines[i] - lines[i - 1] != lines[1] - lines[0])
      throw InputError(path + ": " + what + " numbers (trace header byte " + std::to_string(byte) +
                       ") are not evenly spaced: " + std::to_string(lines[i - 1]) + " is followed by " +
                       std::to_string(lines[i]) + " but the first step is " +
                       std::to_string(lines[1] - lines[0]) + " (a missing line?)");
  return lines;
}

} // namespace

bool segy_supported() { return true; }

// ---- volumes ------------------------------------------------------------------------------------

VelocityModel read_segy_volume(const std::string& path, const SegyVolumeReadOptions& options) {
  const SegyInput in = open_segy(path);

  // Headers first: each trace's inline, crossline and position.
  std::vector<int> il(size_t(in.traces)), xl(size_t(in.traces));
  std::vector<double> cx(size_t(in.traces)), cy(size_t(in.traces));
  bool any_coordinate = false;
  for (int t = 0; t < in.traces; ++t) {
    char h[SEGY_TRACE_HEADER_SIZE];
    if (segy_traceheader(in.fp.get(), t, h, in.trace0, in.trace_bytes) != SEGY_OK)
      throw InputError(path + ": cannot read the header of trace " + std::to_string(t + 1));
    il[size_t(t)] = field(h, SEGY_TR_INLINE);
    xl[size_t(t)] = field(h, SEGY_TR_CROSSLINE);
    const int32_t scalar = field(h, SEGY_TR_SOURCE_GROUP_SCALAR);
    const int32_t x = field(h, SEGY_TR_CDP_X), y = field(h, SEGY_TR_CDP_Y);
    cx[size_t(t)] = apply_scalar(x, scalar);
    cy[size_t(t)] = apply_scalar(y, scalar);
    any_coordinate = any_coordinate || x != 0 || y != 0;
  }
  const std::vector<int> inlines = line_numbers(il, path, "inline", SEGY_TR_INLINE);
  const std::vector<int> crosslines = line_numbers(xl, path, "crossline", SEGY_TR_CROSSLINE);
  const int nx = int(crosslines.size()), ny = int(inlines.size());
  if (int64_t(nx) * ny != in.traces)
    throw InputError(path + ": inconsistent trace count: " + std::to_string(in.traces) +
                     " traces for " + std::to_string(ny) + " inlines x " + std::to_string(nx) +
                     " crosslines (bytes 189 and 193); a 3-D post-stack volume has one trace per pair");

  VelocityModel grid;
  grid.nx = nx;
  grid.ny = ny;
  grid.nz = in.samples;
  std::vector<int> trace_of(size_t(in.traces), -1); // [j][i] -> trace
  const int il_step = ny > 1 ? inlines[1] - inlines[0] : 1;
  const int xl_step = nx > 1 ? crosslines[1] - crosslines[0] : 1;
  for (int t = 0; t < in.traces; ++t) {
    const int j = (il[size_t(t)] - inlines[0]) / il_step, i = (xl[size_t(t)] - crosslines[0]) / xl_step;
    int& slot = trace_of[size_t(j) * nx + i];
    if (slot >= 0)
      throw InputError(path + ": traces " + std::to_string(slot + 1) + " and " +
                       std::to_string(t + 1) + " both hold inline " + std::to_string(il[size_t(t)]) +
                       " crossline " + std::to_string(xl[size_t(t)]));
    slot = t;
  }

  // Spacing and origin: rtm's own exact record first, then the trace coordinates, then options.
  const std::map<std::string, double> exact = rtm_text_fields(in.text_header);
  auto exact_or = [&](const char* key, double fallback) {
    const auto it = exact.find(key);
    return it != exact.end() ? it->second : fallback;
  };
  grid.dz = options.dz > 0 ? options.dz : exact_or("dz", in.interval / 1000.0);
  if (!(grid.dz > 0))
    throw InputError(path + ": the sample interval field (binary header byte 3217) is " +
                     number(in.interval) + "; give the depth step with --dz");
  grid.oz = exact_or("oz", 0.0);
  if (options.dx > 0 || options.dy > 0) {
    grid.dx = options.dx > 0 ? options.dx : options.dy;
    grid.dy = options.dy > 0 ? options.dy : options.dx;
    grid.ox = exact_or("ox", 0.0);
    grid.oy = exact_or("oy", 0.0);
  } else if (exact.count("dx") && exact.count("dy")) {
    grid.dx = exact.at("dx");
    grid.dy = exact.at("dy");
    grid.ox = exact_or("ox", 0.0);
    grid.oy = exact_or("oy", 0.0);
  } else {
    if (!any_coordinate)
      throw InputError(path + ": the trace headers carry no coordinates (CDP_X and CDP_Y, bytes 181 "
                              "and 185, are 0 in every trace); give the spacing with --spacing");
    if (nx < 2 || ny < 2)
      throw InputError(path + ": a single inline or crossline does not define the grid spacing; "
                              "give it with --spacing");
    // The grid's axes from the corner traces; every trace must sit on that regular grid.
    const int t00 = trace_of[0], t10 = trace_of[size_t(nx - 1)], t01 = trace_of[size_t(ny - 1) * nx];
    const double ex[2] = {(cx[size_t(t10)] - cx[size_t(t00)]) / (nx - 1),
                          (cy[size_t(t10)] - cy[size_t(t00)]) / (nx - 1)};
    const double ey[2] = {(cx[size_t(t01)] - cx[size_t(t00)]) / (ny - 1),
                          (cy[size_t(t01)] - cy[size_t(t00)]) / (ny - 1)};
    grid.dx = std::hypot(ex[0], ex[1]);
    grid.dy = std::hypot(ey[0], ey[1]);
    if (!(grid.dx > 0 && grid.dy > 0))
      throw InputError(path + ": traces of different crosslines or inlines share one position "
                              "(CDP_X/CDP_Y); give the spacing with --spacing");
    const double tolerance = 0.01 * std::min(grid.dx, grid.dy);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int t = trace_of[size_t(j) * nx + i];
        const double px = cx[size_t(t00)] + i * ex[0] + j * ey[0];
        const double py = cy[size_t(t00)] + i * ex[1] + j * ey[1];
        if (std::hypot(cx[size_t(t)] - px, cy[size_t(t)] - py) > tolerance)
          throw InputError(path + ": trace " + std::to_string(t + 1) + " (inline " +
                           std::to_string(il[size_t(t)]) + ", crossline " +
                           std::to_string(xl[size_t(t)]) + ") sits at (" + number(cx[size_t(t)]) +
                           ", " + number(cy[size_t(t)]) + ") m, off the regular grid the corner "
                           "traces define (expected (" + number(px) + ", " + number(py) + ") m)");
      }
    // Axis-aligned surveys keep their coordinates; a rotated one is placed in its own frame.
    const bool aligned = std::abs(ex[1]) <= tolerance && std::abs(ey[0]) <= tolerance &&
                         ex[0] > 0 && ey[1] > 0;
    grid.ox = aligned ? cx[size_t(t00)] : 0.0;
    grid.oy = aligned ? cy[size_t(t00)] : 0.0;
  }

  grid.vp.assign(size_t(grid.cells()), 0.0f);
  std::vector<float> trace(size_t(in.samples));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      read_trace(in, path, trace_of[size_t(j) * nx + i], trace.data());
      for (int k = 0; k < grid.nz; ++k) grid.at(i, j, k) = trace[size_t(k)];
    }
  return grid;
}

void write_segy_volume(const std::string& path, const VelocityModel& grid,
                       const std::vector<float>& values, const std::string& description) {
  if (values.size() != size_t(grid.cells()))
    throw std::invalid_argument("write_segy_volume: " + std::to_string(values.size()) +
                                " values for a grid of " + std::to_string(grid.cells()) + " cells");
  const int interval = int(std::lround(grid.dz * 1000.0));
  if (interval < 1 || interval > 32767)
    throw InputError(path + ": the depth step " + number(grid.dz) +
                     " m does not fit SEG-Y's sample-interval field as millimetres (1 to 32767 mm)");
  std::vector<double> coordinates;
  for (double v : {grid.ox, grid.oy, grid.ox + (grid.nx - 1) * grid.dx,
                   grid.oy + (grid.ny - 1) * grid.dy})
    coordinates.push_back(v);
  const int32_t divisor = coordinate_divisor(coordinates);
  const std::string exact = "dx=" + number(grid.dx) + " dy=" + number(grid.dy) + " dz=" +
                            number(grid.dz) + " ox=" + number(grid.ox) + " oy=" + number(grid.oy) +
                            " oz=" + number(grid.oz);
  const std::string text = text_header(
      {"rtm " + description + ", 3-D post-stack depth volume",
       "inline (byte 189) = y index + 1, crossline (byte 193) = x index + 1",
       "CDP_X/CDP_Y (bytes 181/185) in metres, scalar in byte 71",
       "sample interval field = depth step in millimetres; IEEE float samples",
       "grid: " + std::to_string(grid.nx) + " x " + std::to_string(grid.ny) + " x " +
           std::to_string(grid.nz) + " (x, y, z) cells"},
      exact);
  write_segy(
      path, text, grid.nz, grid.nx * grid.ny, interval, SEGY_INLINE_SORTING,
      [&](int t, char* h) {
        const int i = t % grid.nx, j = t / grid.nx;
        segy_set_field(h, SEGY_TR_INLINE, j + 1);
        segy_set_field(h, SEGY_TR_CROSSLINE, i + 1);
        segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, -divisor);
        segy_set_field(h, SEGY_TR_CDP_X, scaled(grid.ox + i * grid.dx, divisor));
        segy_set_field(h, SEGY_TR_CDP_Y, scaled(grid.oy + j * grid.dy, divisor));
      },
      [&](int t, float* samples) {
        const int i = t % grid.nx, j = t / grid.nx;
        for (int k = 0; k < grid.nz; ++k) samples[k] = values[(size_t(k) * grid.ny + j) * grid.nx + i];
      });
}

// ---- shot gathers -------------------------------------------------------------------------------

ShotFile read_segy_shots(const std::string& path) {
  const SegyInput in = open_segy(path);
  const std::map<std::string, double> exact = rtm_text_fields(in.text_header);
  ShotFile file;
  file.nt = in.samples;
  file.dt = exact.count("dt") ? exact.at("dt") : in.interval * 1e-6;
  if (!(file.dt > 0))
    throw InputError(path + ": the sample interval (binary header byte 3217) is " +
                     number(in.interval) + " microseconds; expected a positive time step");

  struct Trace {
    int record;
    Position source, receiver;
  };
  std::vector<Trace> traces(size_t(in.traces));
  bool any_coordinate = false;
  for (int t = 0; t < in.traces; ++t) {
    char h[SEGY_TRACE_HEADER_SIZE];
    if (segy_traceheader(in.fp.get(), t, h, in.trace0, in.trace_bytes) != SEGY_OK)
      throw InputError(path + ": cannot read the header of trace " + std::to_string(t + 1));
    const int32_t scalar = field(h, SEGY_TR_SOURCE_GROUP_SCALAR);
    const int32_t elevation_scalar = field(h, SEGY_TR_ELEV_SCALAR);
    const int32_t sx = field(h, SEGY_TR_SOURCE_X), sy = field(h, SEGY_TR_SOURCE_Y);
    const int32_t gx = field(h, SEGY_TR_GROUP_X), gy = field(h, SEGY_TR_GROUP_Y);
    any_coordinate = any_coordinate || sx != 0 || sy != 0 || gx != 0 || gy != 0;
    Trace& tr = traces[size_t(t)];
    tr.record = field(h, SEGY_TR_FIELD_RECORD);
    tr.source = {apply_scalar(field(h, SEGY_TR_SOURCE_DEPTH), elevation_scalar),
                 apply_scalar(sy, scalar), apply_scalar(sx, scalar)};
    tr.receiver = {-apply_scalar(field(h, SEGY_TR_RECV_GROUP_ELEV), elevation_scalar),
                   apply_scalar(gy, scalar), apply_scalar(gx, scalar)};
  }
  if (!any_coordinate)
    throw InputError(path + ": the trace headers carry no source or receiver coordinates (bytes "
                            "73/77 and 81/85 are 0 in every trace); rtm needs them to place the shots");

  // Shots by field record, in order of first appearance, each with its own receivers (any
  // number); when every shot has the same ones they become the file's shared spread.
  std::map<int, std::vector<int>> by_record;
  std::vector<int> order;
  for (int t = 0; t < in.traces; ++t) {
    auto [it, fresh] = by_record.try_emplace(traces[size_t(t)].record);
    if (fresh) order.push_back(traces[size_t(t)].record);
    it->second.push_back(t);
  }
  auto describe = [](const Position& p) {
    return "(z, y, x) = (" + number(p[0]) + ", " + number(p[1]) + ", " + number(p[2]) + ") m";
  };
  std::vector<float> samples(size_t(in.samples));
  for (size_t s = 0; s < order.size(); ++s) {
    const std::vector<int>& members = by_record.at(order[s]);
    ShotGather shot;
    shot.id = int(s);
    shot.source = traces[size_t(members.front())].source;
    const size_t nrec = members.size();
    shot.data.resize(nrec * size_t(file.nt));
    for (size_t r = 0; r < nrec; ++r) {
      const Trace& tr = traces[size_t(members[r])];
      if (tr.source != shot.source)
        throw InputError(path + ": trace " + std::to_string(members[r] + 1) + " of field record " +
                         std::to_string(order[s]) + " has its source at " + describe(tr.source) +
                         ", the record's first trace at " + describe(shot.source));
      shot.receivers.push_back(tr.receiver);
      read_trace(in, path, members[r], samples.data());
      std::copy(samples.begin(), samples.end(), shot.data.begin() + r * size_t(file.nt));
    }
    file.shots.push_back(std::move(shot));
  }
  const bool shared = std::all_of(file.shots.begin(), file.shots.end(), [&](const ShotGather& g) {
    return g.receivers == file.shots.front().receivers;
  });
  if (shared) {
    file.receivers = file.shots.front().receivers;
    for (ShotGather& g : file.shots) g.receivers.clear();
  }
  return file;
}

void write_segy_shots(const std::string& path, const ShotFile& shots) {
  const int interval = int(std::lround(shots.dt * 1e6));
  std::vector<double> coordinates, depths;
  // One trace per (shot, receiver), shot by shot; each shot with its own receivers or the shared.
  std::vector<std::pair<size_t, size_t>> trace_of; // (shot index, receiver index)
  for (size_t s = 0; s < shots.shots.size(); ++s) {
    const ShotGather& shot = shots.shots[s];
    coordinates.insert(coordinates.end(), {shot.source[1], shot.source[2]});
    depths.push_back(shot.source[0]);
    for (size_t r = 0; r < shots.receivers_of(shot).size(); ++r) trace_of.emplace_back(s, r);
  }
  auto add_receivers = [&](const std::vector<Position>& receivers) {
    for (const Position& r : receivers) {
      coordinates.insert(coordinates.end(), {r[1], r[2]});
      depths.push_back(r[0]);
    }
  };
  add_receivers(shots.receivers);
  for (const ShotGather& shot : shots.shots) add_receivers(shot.receivers);
  const int32_t divisor = coordinate_divisor(coordinates);
  const int32_t depth_divisor = coordinate_divisor(depths);
  const std::string text = text_header(
      {"rtm shot gathers, pre-stack, one trace per (shot, receiver)",
       "field record (byte 9) = shot number + 1; trace in record (byte 13) = receiver + 1",
       "source x/y bytes 73/77, depth 49; receiver x/y 81/85, elevation 41 (= -depth)",
       "coordinate scalar byte 71, depth/elevation scalar byte 69; metres",
       "sample interval in microseconds (rounded); exact dt below; IEEE float samples",
       "wavelet: Ricker f0 = " + number(shots.f0) + " Hz, t0 = " + number(shots.t0) + " s",
       shots.has_per_shot_receivers() ? "each shot has its own receivers (per-shot spreads)"
                                      : "every shot has the same receivers"},
      "dt=" + number(shots.dt) + " f0=" + number(shots.f0) + " t0=" + number(shots.t0));
  if (trace_of.size() > size_t(INT32_MAX))
    throw InputError(path + ": " + std::to_string(trace_of.size()) +
                     " traces are more than a SEG-Y file can count");
  write_segy(
      path, text, shots.nt, int(trace_of.size()), interval, SEGY_UNKNOWN_SORTING,
      [&](int t, char* h) {
        const auto [shot, receiver] = trace_of[size_t(t)];
        const ShotGather& s = shots.shots[shot];
        const Position& r = shots.receivers_of(s)[receiver];
        segy_set_field(h, SEGY_TR_FIELD_RECORD, s.id + 1);
        segy_set_field(h, SEGY_TR_NUMBER_ORIG_FIELD, int(receiver) + 1);
        segy_set_field(h, SEGY_TR_ELEV_SCALAR, -depth_divisor);
        segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, -divisor);
        segy_set_field(h, SEGY_TR_SOURCE_DEPTH, scaled(s.source[0], depth_divisor));
        segy_set_field(h, SEGY_TR_SOURCE_Y, scaled(s.source[1], divisor));
        segy_set_field(h, SEGY_TR_SOURCE_X, scaled(s.source[2], divisor));
        segy_set_field(h, SEGY_TR_RECV_GROUP_ELEV, scaled(-r[0], depth_divisor));
        segy_set_field(h, SEGY_TR_GROUP_Y, scaled(r[1], divisor));
        segy_set_field(h, SEGY_TR_GROUP_X, scaled(r[2], divisor));
        const double offset = std::hypot(r[1] - s.source[1], r[2] - s.source[2]);
        segy_set_field(h, SEGY_TR_OFFSET, int32_t(std::lround(offset)));
      },
      [&](int t, float* samples) {
        const auto [shot, receiver] = trace_of[size_t(t)];
        const float* row = shots.shots[shot].data.data() + receiver * size_t(shots.nt);
        std::copy(row, row + shots.nt, samples);
      });
}

} // namespace rtm
