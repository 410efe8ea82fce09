#include "io/segy_file.h"

#include <segyio/segy.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

// Sample formats of SEG-Y rev 2.1 (binary header bytes 3225-3226).
std::string format_name(long long format) {
  switch (format) {
  case 1: return "1 (4-byte IBM float)";
  case 2: return "2 (4-byte integer)";
  case 3: return "3 (2-byte integer)";
  case 4: return "4 (4-byte fixed point with gain, obsolete)";
  case 5: return "5 (4-byte IEEE float)";
  case 6: return "6 (8-byte IEEE float)";
  case 7: return "7 (3-byte integer)";
  case 8: return "8 (1-byte integer)";
  case 9: return "9 (8-byte integer)";
  case 10: return "10 (4-byte unsigned integer)";
  case 11: return "11 (2-byte unsigned integer)";
  case 12: return "12 (8-byte unsigned integer)";
  case 15: return "15 (3-byte unsigned integer)";
  case 16: return "16 (1-byte unsigned integer)";
  default: return std::to_string(format) + " (not a SEG-Y sample format)";
  }
}
bool is_format_code(long long f) { return (f >= 1 && f <= 12) || f == 15 || f == 16; }
// What the libsegyio rtm builds against (1.8, Debian's) converts: its SEGY_FORMAT values but the
// obsolete 4 (segy_to_native would hand back its raw bits as if they were a number).
bool segyio_reads(long long f) { return f == 1 || f == 2 || f == 3 || f == 5 || f == 8; }

// ---- header fields ------------------------------------------------------------------------------
// Every field is read by its position and its type in the standard (signed 2- or 4-byte, unsigned
// where SEG-Y says so: samples per trace), from a buffer of known size: a position outside it is a
// bug here, not a fault of the file.
enum class Type { u8, i16, u16, i32 };

int64_t field_at(const char* header, size_t size, long offset, Type type, bool little) {
  const size_t width = type == Type::i32 ? 4 : type == Type::u8 ? 1 : 2;
  if (offset < 0 || size_t(offset) + width > size)
    throw std::logic_error("SEG-Y header field at offset " + std::to_string(offset) + " is outside the header");
  const unsigned char* b = reinterpret_cast<const unsigned char*>(header) + offset;
  uint32_t v = 0;
  for (size_t k = 0; k < width; ++k) v = (v << 8) | b[little ? width - 1 - k : k];
  switch (type) {
  case Type::u8:
  case Type::u16: return v;
  case Type::i16: return int16_t(uint16_t(v));
  case Type::i32: return int32_t(v);
  }
  return 0;
}
// Trace headers as segyio hands them over: big-endian whatever the file's order.
int64_t trace_field(const char* header, int byte, Type type) {
  return field_at(header, SEGY_TRACE_HEADER_SIZE, byte - 1, type, false);
}

// Starts of the 4-byte fields of the standard trace header (SEG-Y rev 1; 233 and 237 unassigned).
constexpr int kFourByteFields[] = {1,   5,   9,   13,  17,  21,  25,  37,  41,  45,  49,  53,
                                   57,  61,  65,  73,  77,  81,  85,  181, 185, 189, 193, 197,
                                   233, 237};

// A SEG-Y file opened for reading, its binary header checked: what every reader needs.
struct SegyInput {
  std::string path;
  SegyHandle fp;
  bool little = false;     // the file is little-endian (segyio swaps it to big-endian for us)
  int format = 0, traces = 0, trace_bytes = 0;
  long long samples = 0;
  long trace0 = 0;
  int bin_interval = 0;    // binary header bytes 3217-3218, signed 16 bits, as stored
  std::string text_header; // ASCII (segyio converts EBCDIC)
  mutable std::vector<char> raw; // one trace's samples as stored

  std::string byte_order() const { return little ? "little-endian" : "big-endian"; }
  std::string describe() const {
    return byte_order() + ", sample format " + format_name(format) + ", " + std::to_string(samples) +
           " samples per trace";
  }
};

std::string number(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.10g", v);
  return s;
}

SegyInput open_segy(const std::string& path) {
  SegyInput in;
  in.path = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": is a directory, not a SEG-Y file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path + ": cannot open the file for reading (does it exist?)");
  in.fp.reset(segy_open(path.c_str(), "rb"));
  if (!in.fp) throw InputError(path + ": cannot open the file for reading");

  std::array<char, SEGY_TEXT_HEADER_SIZE + 1> text{};
  char bin[SEGY_BINARY_HEADER_SIZE];
  // segyio presents the binary header as stored until it is told the byte order (below).
  if (size < 3600 || segy_read_textheader(in.fp.get(), text.data()) != SEGY_OK ||
      segy_binheader(in.fp.get(), bin) != SEGY_OK)
    throw InputError(path + ": not a SEG-Y file: " + std::to_string(size) +
                     " bytes, shorter than the 3600 bytes of its text and binary headers");
  in.text_header.assign(text.data());
  auto binary = [&](int byte, Type type) {
    return field_at(bin, SEGY_BINARY_HEADER_SIZE, byte - 3201, type, in.little);
  };

  // Byte order: SEG-Y rev 2 says it in bytes 3297-3300 (the number 16909060 = 0x01020304 as
  // written); older files only by what makes sense, so the format code (3225) decides: a valid
  // code one way and not the other. Little-endian files are what Seismic Unix and some rev 2
  // writers produce.
  const int64_t constant = field_at(bin, SEGY_BINARY_HEADER_SIZE, 96, Type::i32, false);
  const int64_t format_big = field_at(bin, SEGY_BINARY_HEADER_SIZE, 24, Type::i16, false);
  const int64_t format_little = field_at(bin, SEGY_BINARY_HEADER_SIZE, 24, Type::i16, true);
  if (constant == 0x01020304)
    in.little = false;
  else if (constant == 0x04030201)
    in.little = true;
  else if (is_format_code(format_big))
    in.little = false;
  else if (is_format_code(format_little))
    in.little = true;
  else
    throw InputError(path + ": binary header bytes 3225-3226 (sample format) hold " +
                     std::to_string(format_big) + " read big-endian and " +
                     std::to_string(format_little) + " read little-endian; neither is a SEG-Y "
                     "sample format code (1-12, 15, 16): not a SEG-Y file, or a damaged one");
  const int64_t format = binary(3225, Type::i16);
  const int revision = int(binary(3501, Type::u8));
  if (!segyio_reads(format))
    throw InputError(path + ": binary header byte 3225 gives sample format " + format_name(format) +
                     " (" + in.byte_order() + " file); the libsegyio rtm is built with reads formats 1 "
                     "(IBM float), 2 (4-byte integer), 3 (2-byte integer), 5 (IEEE float) and 8 "
                     "(1-byte integer), either byte order. Convert the file, e.g. with segyio 1.9 or "
                     "later (Python) or Seismic Unix, to format 5");
  in.format = int(format);

  // Samples per trace: unsigned (rev 1 and 2: up to 65535); rev 2 files may put a larger count in
  // the extended field (3269-3272) and leave this one 0.
  // segyio's rule: the extended count when the standard one is 0, or when the major revision
  // (byte 3501) is 2 or more (earlier revisions leave 3269 unassigned: noise, not a count).
  in.samples = binary(3221, Type::u16);
  const int64_t extended_samples = binary(3269, Type::i32);
  if (extended_samples > 0 && (in.samples == 0 || revision >= 2))
    in.samples = extended_samples;
  if (in.samples < 1)
    throw InputError(path + ": binary header bytes 3221-3222 give " + std::to_string(in.samples) +
                     " samples per trace (the extended field 3269-3272: " + std::to_string(extended_samples) + ")" +
                     "; expected at least 1");
  if (in.samples > (1 << 28))
    throw InputError(path + ": binary header gives " + std::to_string(in.samples) +
                     " samples per trace; more than rtm reads in one trace (2^28)");
  const int64_t extended = binary(3505, Type::i16);
  if (extended < 0)
    throw InputError(path + ": binary header bytes 3505-3506 give " + std::to_string(extended) +
                     " extended text headers (a count known only by reading them, SEG-Y rev 2); "
                     "the libsegyio rtm is built with needs the count");
  if (revision >= 2) {
    const int64_t extra = binary(3507, Type::i16);
    if (extra > 0)
      throw InputError(path + ": binary header bytes 3507-3508 give " + std::to_string(extra) +
                       " additional 240-byte trace headers per trace (SEG-Y rev 2 trace header "
                       "extensions), which the libsegyio rtm is built with does not read");
  }
  in.trace0 = 3600 + 3200L * long(extended);
  const int element = segy_trsize(in.format, 1);
  in.trace_bytes = int(in.samples) * element;
  if (segy_set_format(in.fp.get(), in.format | (in.little ? SEGY_LSB : SEGY_MSB)) != SEGY_OK)
    throw InputError(path + ": segyio cannot read sample format " + format_name(in.format));
  const long long record = SEGY_TRACE_HEADER_SIZE + (long long)in.trace_bytes;
  const std::string layout = std::to_string(record) + " bytes (the 240-byte header and " +
                             std::to_string(in.samples) + " samples of " + format_name(in.format) +
                             ", binary header bytes 3221 and 3225, read " + in.byte_order() + ")";
  if ((long long)size <= in.trace0)
    throw InputError(path + ": no traces: the file ends at byte " + std::to_string(size) +
                     " where its first trace would begin (byte " + std::to_string(in.trace0) +
                     (extended > 0 ? ", after " + std::to_string(extended) + " extended text headers"
                                   : std::string()) + ")");
  if (((long long)size - in.trace0) % record != 0)
    throw InputError(path + ": truncated or inconsistent: the " +
                     std::to_string((long long)size - in.trace0) + " bytes after the headers are "
                     "not a whole number of traces of " + layout);
  if (((long long)size - in.trace0) / record > INT32_MAX)
    throw InputError(path + ": more traces than segyio counts (2^31)");
  if (segy_traces(in.fp.get(), &in.traces, in.trace0, in.trace_bytes) != SEGY_OK || in.traces < 1)
    throw InputError(path + ": cannot count the traces of " + layout);
  in.bin_interval = int(binary(3217, Type::i16));
  in.raw.resize(size_t(in.trace_bytes));
  return in;
}

// The sample interval as stored: the binary header's (3217) when positive, else the first trace's
// (byte 117), as segyio does; 0 when neither is. Both are signed 16-bit fields.
struct Interval {
  int value = 0, binary = 0, trace = 0;
  std::string fields() const {
    return "binary header bytes 3217-3218 hold " + std::to_string(binary) +
           ", trace 1's bytes 117-118 hold " + std::to_string(trace);
  }
};

Interval sample_interval(const SegyInput& in, const char* first_header) {
  Interval iv;
  iv.binary = in.bin_interval;
  iv.trace = int(trace_field(first_header, 117, Type::i16));
  iv.value = iv.binary > 0 ? iv.binary : iv.trace > 0 ? iv.trace : 0;
  return iv;
}

// SEG-Y scalars: positive multiplies, negative divides, zero means one.
double apply_scalar(int64_t value, int64_t scalar) {
  if (scalar > 0) return double(value) * double(scalar);
  if (scalar < 0) return double(value) / -double(scalar);
  return double(value);
}

// A scalar field (bytes 69, 71, 215): SEG-Y allows 0 and +-1 to +-10000 (powers of ten; segyio
// and its test files use others, so any value in that range is taken). A larger one is no scalar:
// the 240 bytes are not a trace header (a samples-per-trace count that does not match the traces
// puts sample values there) or the header is damaged.
int64_t scalar_field(const SegyInput& in, const char* header, int byte, int t, const char* what) {
  const int64_t v = trace_field(header, byte, Type::i16);
  if (v > 10000 || v < -10000)
    throw InputError(in.path + ": trace " + std::to_string(t + 1) + "'s " + what + " scalar (byte " +
                     std::to_string(byte) + ") is " + std::to_string(v) + "; SEG-Y's scalars are 0 "
                     "and +-1 to +-10000. The 240 bytes there are not a trace header: are the traces "
                     "really " + std::to_string(in.samples) + " samples long (binary header bytes "
                     "3221-3222, " + in.describe() + ")?");
  return v;
}

void read_header(const SegyInput& in, int t, char* header) {
  if (segy_traceheader(in.fp.get(), t, header, in.trace0, in.trace_bytes) != SEGY_OK)
    throw InputError(in.path + ": cannot read the header of trace " + std::to_string(t + 1) +
                     " (truncated file?)");
}

// Reads trace `t` as native floats, whatever the stored format: integers become their values.
void read_trace(const SegyInput& in, int t, float* samples) {
  char* raw = in.raw.data();
  if (segy_readtrace(in.fp.get(), t, raw, in.trace0, in.trace_bytes) != SEGY_OK)
    throw InputError(in.path + ": cannot read trace " + std::to_string(t + 1) + " (truncated file?)");
  // segyio hands the samples over big-endian; to_native makes them the host's (and IBM IEEE).
  segy_to_native(in.format, in.samples, raw);
  const size_t n = size_t(in.samples);
  switch (in.format) {
  case SEGY_IBM_FLOAT_4_BYTE:
  case SEGY_IEEE_FLOAT_4_BYTE: std::memcpy(samples, raw, n * 4); break;
  case SEGY_SIGNED_INTEGER_4_BYTE:
    for (size_t k = 0; k < n; ++k) {
      int32_t v;
      std::memcpy(&v, raw + 4 * k, 4);
      samples[k] = float(v);
    }
    break;
  case SEGY_SIGNED_SHORT_2_BYTE:
    for (size_t k = 0; k < n; ++k) {
      int16_t v;
      std::memcpy(&v, raw + 2 * k, 2);
      samples[k] = float(v);
    }
    break;
  case SEGY_SIGNED_CHAR_1_BYTE:
    for (size_t k = 0; k < n; ++k) samples[k] = float(int8_t(raw[k]));
    break;
  default: throw std::logic_error("read_trace: format " + std::to_string(in.format));
  }
  for (size_t k = 0; k < n; ++k)
    if (!std::isfinite(samples[k]))
      throw InputError(in.path + ": trace " + std::to_string(t + 1) + " sample " +
                       std::to_string(k + 1) + " is not a finite number (" + in.describe() + ")");
}

// The exact grid rtm writes into text-header line 40 (read back so a round trip is exact):
// "RTM key=value ...". Empty when the line is not there.
std::map<std::string, double> rtm_text_fields(const std::string& text) {
  std::map<std::string, double> fields;
  for (size_t line = 0; line < text.size(); line += 80) {
    const std::string row = text.substr(line, 80);
    // rtm's rows only: "C40 RTM ..." (a foreign header that mentions RTM elsewhere is not one).
    const size_t at = row.find("RTM ");
    if (at != 4 || row[0] != 'C') continue;
    std::istringstream words(row.substr(at + 4));
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      try {
        const double value = std::stod(word.substr(eq + 1));
        if (std::isfinite(value)) fields[word.substr(0, eq)] = value;
      } catch (const std::exception&) {
      }
    }
  }
  return fields;
}

// A text header of 40 lines of 80 characters: "C 1 ..." lines, rtm's exact grid in line 40.
std::string text_header(const std::vector<std::string>& lines, const std::string& rtm_fields) {
  // The exact fields, "RTM key=value ...", packed into as many 80-column lines as they need at
  // the end of the header (each line starts "RTM " again; the reader joins them).
  std::vector<std::string> exact_rows;
  {
    std::istringstream words(rtm_fields);
    std::string row, word;
    while (words >> word) {
      if (!row.empty() && row.size() + 1 + word.size() > 72) {
        exact_rows.push_back("RTM " + row);
        row.clear();
      }
      row += (row.empty() ? "" : " ") + word;
    }
    if (!row.empty()) exact_rows.push_back("RTM " + row);
  }
  const size_t first_exact = 40 - exact_rows.size();
  std::string text;
  for (size_t i = 0; i < 40; ++i) {
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "C%2d ", int(i + 1));
    std::string row = prefix;
    if (i >= first_exact)
      row += exact_rows[i - first_exact];
    else if (i < lines.size())
      row += lines[i];
    row.resize(80, ' ');
    text += row;
  }
  return text;
}

// Every digit a double needs to come back the same: the exact fields of the text header.
std::string exact_number(double v) {
  char s[40];
  std::snprintf(s, sizeof s, "%.17g", v);
  return s;
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
  // Samples per trace is an unsigned 2-byte field (SEG-Y rev 1 and 2).
  if (samples > 65535)
    throw InputError(path + ": " + std::to_string(samples) +
                     " samples per trace do not fit SEG-Y's 2-byte field (at most 65535)");
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

// Sorted distinct line numbers, with a check that they are evenly spaced (a gap means a missing
// line). Header numbers are 4-byte signed; their differences are taken in 64 bits.
std::vector<long long> line_numbers(const std::vector<long long>& numbers, const std::string& path,
                                    const char* what, int byte, const std::string& hint) {
  const std::set<long long> distinct(numbers.begin(), numbers.end());
  std::vector<long long> lines(distinct.begin(), distinct.end());
  for (size_t i = 2; i < lines.size(); ++i)
    if (lines[i] - lines[i - 1] != lines[1] - lines[0])
      throw InputError(path + ": " + what + " numbers (trace header byte " + std::to_string(byte) +
                       ") are not evenly spaced: " + std::to_string(lines[i - 1]) + " is followed by " +
                       std::to_string(lines[i]) + " but the first step is " +
                       std::to_string(lines[1] - lines[0]) + " (a missing line?)" + hint);
  return lines;
}

// What one trace header says, for the volume reader and its messages.
struct VolumeTrace {
  long long il = 0, xl = 0;
  double x = 0, y = 0; // CDP position (m), scaled
  long long offset = 0, record = 0;
  bool shot_coordinates = false; // source or group x/y (73-88) not 0
};

// What a file that is not one trace per (inline, crossline) looks like instead, for the messages.
std::string volume_layout_hint(const std::vector<VolumeTrace>& traces, const SegyHeaderBytes& bytes) {
  std::set<long long> offsets, records;
  bool shot_coordinates = false, numbered = false;
  for (const VolumeTrace& t : traces) {
    offsets.insert(t.offset);
    records.insert(t.record);
    shot_coordinates = shot_coordinates || t.shot_coordinates;
    numbered = numbered || t.il != 0 || t.xl != 0;
  }
  std::string hint;
  if (!numbered)
    hint += ". The inline and crossline numbers (bytes " + std::to_string(bytes.inline_number) +
            " and " + std::to_string(bytes.crossline_number) + ") are 0 in every trace: the file "
            "does not number its lines there; if another field does, give --iline-byte and "
            "--xline-byte (segyio's iline= and xline=)";
  if (offsets.size() > 1)
    hint += ". The traces have " + std::to_string(offsets.size()) + " different offsets (byte 37: " +
            std::to_string(*offsets.begin()) + " to " + std::to_string(*offsets.rbegin()) +
            "): a pre-stack file; rtm imports a post-stack volume, one trace per (inline, "
            "crossline), as a model";
  if (shot_coordinates || records.size() > 1)
    hint += ". The traces carry " +
            std::string(shot_coordinates ? "source and receiver positions (bytes 73-88)" : "") +
            (shot_coordinates && records.size() > 1 ? " and " : "") +
            (records.size() > 1 ? std::to_string(records.size()) + " field records (byte 9)" : "") +
            ": shot gathers? use `rtm import shots`";
  return hint;
}

// The cell size two ways (from the traces and from an option) must agree: a mistyped --spacing
// would otherwise put the model on another grid than its own coordinates.
void check_spacing_option(const std::string& path, const char* axis, double option, double from_file) {
  if (option > 0 && std::abs(option - from_file) > 0.01 * from_file)
    throw InputError(path + ": --spacing gives d" + std::string(axis) + " = " + number(option) +
                     " m but the trace coordinates give " + number(from_file) +
                     " m; leave --spacing out for a file with coordinates");
}

} // namespace

bool segy_supported() { return true; }

void check_header_byte(int byte, const std::string& option) {
  for (int b : kFourByteFields)
    if (b == byte) return;
  std::string list;
  for (int b : kFourByteFields) list += (list.empty() ? "" : ", ") + std::to_string(b);
  throw InputError(option + " " + std::to_string(byte) + ": not the first byte of a 4-byte field of "
                   "the SEG-Y trace header; expected one of " + list);
}

// ---- volumes ------------------------------------------------------------------------------------

SegyVolume read_segy_survey_volume(const std::string& path, const SegyVolumeReadOptions& options) {
  const SegyHeaderBytes& bytes = options.bytes;
  check_header_byte(bytes.inline_number, "--iline-byte");
  check_header_byte(bytes.crossline_number, "--xline-byte");
  check_header_byte(bytes.cdp_x, "--cdp-x-byte");
  check_header_byte(bytes.cdp_y, "--cdp-y-byte");
  const SegyInput in = open_segy(path);

  std::vector<VolumeTrace> traces(size_t(in.traces));
  bool any_coordinate = false;
  Interval interval;
  double first_depth = 0; // delay recording time (byte 109) with its scalar (215), as metres
  for (int t = 0; t < in.traces; ++t) {
    char h[SEGY_TRACE_HEADER_SIZE];
    read_header(in, t, h);
    VolumeTrace& tr = traces[size_t(t)];
    tr.il = trace_field(h, bytes.inline_number, Type::i32);
    tr.xl = trace_field(h, bytes.crossline_number, Type::i32);
    const int64_t scalar = scalar_field(in, h, 71, t, "coordinate");
    scalar_field(in, h, 69, t, "elevation"); // unused here, but a check that this is a header
    const int64_t cx = trace_field(h, bytes.cdp_x, Type::i32), cy = trace_field(h, bytes.cdp_y, Type::i32);
    any_coordinate = any_coordinate || cx != 0 || cy != 0;
    tr.x = apply_scalar(cx, scalar);
    tr.y = apply_scalar(cy, scalar);
    tr.offset = trace_field(h, 37, Type::i32);
    tr.record = trace_field(h, 9, Type::i32);
    for (int b : {73, 77, 81, 85}) tr.shot_coordinates = tr.shot_coordinates || trace_field(h, b, Type::i32) != 0;
    if (t == 0) {
      interval = sample_interval(in, h);
      first_depth = apply_scalar(trace_field(h, 109, Type::i16), scalar_field(in, h, 215, t, "time"));
    }
  }
  const std::string hint = volume_layout_hint(traces, bytes);

  std::vector<long long> il(traces.size()), xl(traces.size());
  for (size_t t = 0; t < traces.size(); ++t) il[t] = traces[t].il, xl[t] = traces[t].xl;
  const std::vector<long long> inlines = line_numbers(il, path, "inline", bytes.inline_number, hint);
  const std::vector<long long> crosslines =
      line_numbers(xl, path, "crossline", bytes.crossline_number, hint);
  const long long ni = (long long)inlines.size(), nc = (long long)crosslines.size();
  {
    std::map<std::pair<long long, long long>, int> seen;
    for (int t = 0; t < in.traces; ++t) {
      const auto [it, fresh] = seen.try_emplace({il[size_t(t)], xl[size_t(t)]}, t);
      if (!fresh)
        throw InputError(path + ": traces " + std::to_string(it->second + 1) + " and " +
                         std::to_string(t + 1) + " both hold inline " + std::to_string(il[size_t(t)]) +
                         " crossline " + std::to_string(xl[size_t(t)]) + " (bytes " +
                         std::to_string(bytes.inline_number) + " and " +
                         std::to_string(bytes.crossline_number) + "); a 3-D post-stack volume has "
                         "one trace per pair" + hint);
    }
  }
  if (ni * nc != in.traces)
    throw InputError(path + ": inconsistent trace count: " + std::to_string(in.traces) +
                     " traces for " + std::to_string(ni) + " inlines x " + std::to_string(nc) +
                     " crosslines (bytes " + std::to_string(bytes.inline_number) + " and " +
                     std::to_string(bytes.crossline_number) +
                     "); a 3-D post-stack volume has one trace per pair" + hint);
  if (ni > INT32_MAX || nc > INT32_MAX) throw InputError(path + ": too many lines");

  // The file's own axes: a = crossline index (numbers ascending), b = inline index.
  const long long il_step = ni > 1 ? inlines[1] - inlines[0] : 1;
  const long long xl_step = nc > 1 ? crosslines[1] - crosslines[0] : 1;
  std::vector<int> trace_of(size_t(ni * nc), -1); // [b][a] -> trace
  for (int t = 0; t < in.traces; ++t) {
    const long long b = (il[size_t(t)] - inlines[0]) / il_step, a = (xl[size_t(t)] - crosslines[0]) / xl_step;
    trace_of[size_t(b * nc + a)] = t;
  }
  auto at = [&](long long a, long long b) -> const VolumeTrace& { return traces[size_t(trace_of[size_t(b * nc + a)])]; };

  // Directions of the two file axes in the world and the cell size along each, from the corner
  // traces; every trace is checked against the grid they define below.
  using Vec = std::array<double, 2>;
  Vec ua{1, 0}, ub{0, 1};
  double da = 0, db = 0;
  const VolumeTrace& corner = at(0, 0);
  if (any_coordinate) {
    if (nc >= 2) {
      const VolumeTrace& end = at(nc - 1, 0);
      const Vec v{(end.x - corner.x) / double(nc - 1), (end.y - corner.y) / double(nc - 1)};
      da = std::hypot(v[0], v[1]);
      if (!(da > 0))
        throw InputError(path + ": the first and last crosslines of inline " +
                         std::to_string(inlines[0]) + " share one position (CDP_X/CDP_Y, bytes " +
                         std::to_string(bytes.cdp_x) + "/" + std::to_string(bytes.cdp_y) +
                         "); give the spacing with --spacing, or the bytes that hold the "
                         "coordinates with --cdp-x-byte and --cdp-y-byte");
      ua = {v[0] / da, v[1] / da};
    }
    if (ni >= 2) {
      const VolumeTrace& end = at(0, ni - 1);
      const Vec v{(end.x - corner.x) / double(ni - 1), (end.y - corner.y) / double(ni - 1)};
      db = std::hypot(v[0], v[1]);
      if (!(db > 0))
        throw InputError(path + ": the first and last inlines of crossline " +
                         std::to_string(crosslines[0]) + " share one position (CDP_X/CDP_Y, bytes " +
                         std::to_string(bytes.cdp_x) + "/" + std::to_string(bytes.cdp_y) +
                         "); give the spacing with --spacing, or the bytes that hold the "
                         "coordinates with --cdp-x-byte and --cdp-y-byte");
      ub = {v[0] / db, v[1] / db};
    }
    if (nc >= 2 && ni < 2) ub = {-ua[1], ua[0]}; // a single line: the other axis at right angles
    if (ni >= 2 && nc < 2) ua = {ub[1], -ub[0]};
  } else if (!(options.dx > 0 && options.dy > 0)) {
    throw InputError(path + ": the trace headers carry no coordinates (CDP_X and CDP_Y, bytes " +
                     std::to_string(bytes.cdp_x) + " and " + std::to_string(bytes.cdp_y) +
                     ", are 0 in every trace); give the spacing with --spacing, or the bytes that "
                     "hold the coordinates with --cdp-x-byte and --cdp-y-byte");
  }

  // rtm's x runs along one file axis (in one direction), y along the other at right angles,
  // counterclockwise as the world's Y from its X: of the four such choices, the one whose x is
  // nearest the world's X. A survey whose lines run along X and Y is then in the world's own
  // coordinates, whichever of its numbers increase along which; any other is turned by less than
  // 45 degrees.
  bool x_is_a = true;
  int sx = 1, sy = 1;
  Vec d{1, 0};
  if (any_coordinate) {
    double best_x = -2, best_y = -2;
    for (int axis = 0; axis < 2; ++axis)
      for (int sign : {1, -1}) {
        const Vec u = axis == 0 ? ua : ub;
        const Vec c{sign * u[0], sign * u[1]};
        if (c[0] > best_x + 1e-9 || (std::abs(c[0] - best_x) <= 1e-9 && c[1] > best_y)) {
          best_x = c[0], best_y = c[1];
          x_is_a = axis == 0;
          sx = sign;
          d = c;
        }
      }
    const Vec other = x_is_a ? ub : ua, y_dir{-d[1], d[0]};
    sy = other[0] * y_dir[0] + other[1] * y_dir[1] >= 0 ? 1 : -1;
  }
  const long long nx = x_is_a ? nc : ni, ny = x_is_a ? ni : nc;
  auto file_index = [&](long long i, long long j) -> std::pair<long long, long long> { // (a, b)
    const long long p = sx > 0 ? i : nx - 1 - i, q = sy > 0 ? j : ny - 1 - j;
    return x_is_a ? std::make_pair(p, q) : std::make_pair(q, p);
  };

  SegyVolume out;
  VelocityModel& grid = out.grid;
  SurveyFrame& frame = out.frame;
  frame.known = true;
  frame.georeferenced = any_coordinate;
  grid.nx = int(nx);
  grid.ny = int(ny);
  grid.nz = int(std::min<long long>(in.samples, INT32_MAX));
  const double from_file_x = x_is_a ? da : db, from_file_y = x_is_a ? db : da;
  grid.dx = from_file_x > 0 ? from_file_x : options.dx;
  grid.dy = from_file_y > 0 ? from_file_y : options.dy;
  if (from_file_x > 0) check_spacing_option(path, "x", options.dx, from_file_x);
  if (from_file_y > 0) check_spacing_option(path, "y", options.dy, from_file_y);
  if (!(grid.dx > 0 && grid.dy > 0))
    throw InputError(path + ": a single " + std::string(ni < 2 ? "inline" : "crossline") +
                     " does not define the grid spacing across it; give it with --spacing");

  // The turn from the world's X, 0 when the survey's lines run along X and Y to within a hundredth
  // of a cell over the whole grid (then the file's coordinates stay exactly as they are).
  const double tolerance = 0.01 * std::min(grid.dx, grid.dy);
  const double extent = double(nx - 1) * grid.dx + double(ny - 1) * grid.dy;
  frame.rotation_deg = std::abs(d[1]) * extent <= 0.5 * tolerance ? 0.0 : std::atan2(d[1], d[0]) * 180.0 / M_PI;
  if (any_coordinate) {
    const auto [a0, b0] = file_index(0, 0);
    const std::array<double, 2> p = frame.from_world(at(a0, b0).x, at(a0, b0).y);
    grid.ox = p[0];
    grid.oy = p[1];
    const double cosine = ua[0] * ub[0] + ua[1] * ub[1];
    for (long long j = 0; j < ny; ++j)
      for (long long i = 0; i < nx; ++i) {
        const auto [a, b] = file_index(i, j);
        const int t = trace_of[size_t(b * nc + a)];
        const VolumeTrace& tr = traces[size_t(t)];
        const std::array<double, 2> q = frame.from_world(tr.x, tr.y);
        const double ex = grid.ox + double(i) * grid.dx, ey = grid.oy + double(j) * grid.dy;
        if (std::hypot(q[0] - ex, q[1] - ey) > tolerance) {
          const std::array<double, 2> w = frame.to_world(ex, ey);
          throw InputError(path + ": trace " + std::to_string(t + 1) + " (inline " +
                           std::to_string(tr.il) + ", crossline " + std::to_string(tr.xl) +
                           ") sits at (" + number(tr.x) + ", " + number(tr.y) + ") m (CDP_X, CDP_Y), "
                           "off the regular grid the corner traces define (expected (" +
                           number(w[0]) + ", " + number(w[1]) + ") m)" +
                           (std::abs(cosine) > 1e-3
                                ? "; the inline and crossline directions meet at " +
                                      number(std::acos(std::clamp(cosine, -1.0, 1.0)) * 180 / M_PI) +
                                      " degrees, and rtm's grid is rectangular"
                                : std::string()));
        }
      }
  }

  // rtm's own exact record (files rtm wrote): the spacing and origin as they were, not as rounded
  // into the headers' integers, provided they agree with the traces.
  const std::map<std::string, double> exact = rtm_text_fields(in.text_header);
  auto exact_or = [&](const char* key, double fallback) {
    const auto it = exact.find(key);
    return it != exact.end() ? it->second : fallback;
  };
  if (exact.count("dx") && exact.count("dy")) {
    const double rot = exact_or("rot", 0.0);
    const bool agrees = !any_coordinate ||
        (std::abs(exact.at("dx") - grid.dx) <= tolerance && std::abs(exact.at("dy") - grid.dy) <= tolerance &&
         std::abs(exact_or("ox", 0) - grid.ox) <= tolerance && std::abs(exact_or("oy", 0) - grid.oy) <= tolerance &&
         std::abs(rot - frame.rotation_deg) * M_PI / 180 * std::max(extent, 1.0) <= tolerance);
    if (!agrees)
      throw InputError(path + ": text header line 40 (written by rtm) gives dx=" + number(exact.at("dx")) +
                       " dy=" + number(exact.at("dy")) + " ox=" + number(exact_or("ox", 0)) +
                       " oy=" + number(exact_or("oy", 0)) + " rot=" + number(rot) +
                       " but the trace coordinates give dx=" + number(grid.dx) + " dy=" +
                       number(grid.dy) + " ox=" + number(grid.ox) + " oy=" + number(grid.oy) +
                       " rot=" + number(frame.rotation_deg) +
                       ": the file was changed after rtm wrote it; remove that line to go by the traces");
    grid.dx = exact.at("dx");
    grid.dy = exact.at("dy");
    grid.ox = exact_or("ox", any_coordinate ? grid.ox : 0.0);
    grid.oy = exact_or("oy", any_coordinate ? grid.oy : 0.0);
    frame.rotation_deg = rot;
  }
  const double dz_field = interval.value / 1000.0;
  grid.dz = options.dz > 0 ? options.dz : exact_or("dz", dz_field);
  if (!(grid.dz > 0))
    throw InputError(path + ": no sample interval: " + interval.fields() +
                     " (a negative or zero interval is none); give the depth step with --dz");
  grid.oz = exact_or("oz", first_depth);

  // The survey's numbering along rtm's axes.
  if (x_is_a) {
    frame.inline_axis = 'y';
    frame.crossline_first = sx > 0 ? crosslines.front() : crosslines.back();
    frame.crossline_step = sx * xl_step;
    frame.inline_first = sy > 0 ? inlines.front() : inlines.back();
    frame.inline_step = sy * il_step;
  } else {
    frame.inline_axis = 'x';
    frame.inline_first = sx > 0 ? inlines.front() : inlines.back();
    frame.inline_step = sx * il_step;
    frame.crossline_first = sy > 0 ? crosslines.front() : crosslines.back();
    frame.crossline_step = sy * xl_step;
  }
  if (any_coordinate && (!x_is_a || sx < 0 || sy < 0 || frame.rotation_deg != 0)) {
    auto along = [&](char axis) {
      const bool inl = frame.inline_axis == axis;
      const long long first = inl ? frame.inline_first : frame.crossline_first;
      const long long step = inl ? frame.inline_step : frame.crossline_step;
      const long long n = axis == 'x' ? nx : ny;
      return std::string(inl ? "inlines " : "crosslines ") + std::to_string(first) + " to " +
             std::to_string(first + step * (n - 1));
    };
    frame.note = "re-framed for rtm's grid: x runs along " + along('x') + ", y along " + along('y') +
                 (frame.rotation_deg == 0
                      ? "; x and y are the file's CDP_X and CDP_Y"
                      : "; the survey is turned " + number(frame.rotation_deg) +
                            " degrees from CDP_X, and x, y are its own frame (survey_rotation)");
  }

  grid.vp.assign(size_t(grid.cells()), 0.0f);
  std::vector<float> trace(size_t(in.samples));
  for (long long j = 0; j < ny; ++j)
    for (long long i = 0; i < nx; ++i) {
      const auto [a, b] = file_index(i, j);
      read_trace(in, trace_of[size_t(b * nc + a)], trace.data());
      for (int k = 0; k < grid.nz; ++k) grid.at(int(i), int(j), k) = trace[size_t(k)];
    }
  return out;
}

VelocityModel read_segy_volume(const std::string& path, const SegyVolumeReadOptions& options) {
  return read_segy_survey_volume(path, options).grid;
}

void write_segy_gathers(const std::string& path, const ArrayInfo& info,
                        const std::vector<float>& values, const std::string& description) {
  if (info.dims.size() != 4 || info.spacing.size() != 4 || info.origin.size() != 4 ||
      info.axes.size() != 4 || info.axis_units.size() != 4)
    throw std::invalid_argument("write_segy_gathers: expected [gather y][gather x][z][lag or angle]");
  const long long ngy = info.dims[0], ngx = info.dims[1], nz = info.dims[2], nc = info.dims[3];
  if (values.size() != size_t(ngy * ngx * nz * nc))
    throw std::invalid_argument("write_segy_gathers: the values do not fill the dimensions");
  const int interval = int(std::lround(info.spacing[2] * 1000.0));
  if (interval < 1 || interval > 32767)
    throw InputError(path + ": the depth step " + number(info.spacing[2]) +
                     " m does not fit SEG-Y's sample-interval field as millimetres (1 to 32767 mm)");
  const long long traces = ngy * ngx * nc;
  if (traces > INT32_MAX)
    throw InputError(path + ": " + std::to_string(traces) + " traces are more than a SEG-Y file can count");
  std::vector<double> coordinates;
  for (long long gx : {0LL, ngx - 1})
    for (long long gy : {0LL, ngy - 1})
      coordinates.insert(coordinates.end(), {info.origin[1] + gx * info.spacing[1],
                                             info.origin[0] + gy * info.spacing[0]});
  const int32_t divisor = coordinate_divisor(coordinates);
  const std::string axis = info.axes[3] + " (" + info.axis_units[3] + ")";
  const std::string text = text_header(
      {"rtm " + description + ", common-image gathers",
       "one trace per (gather y, gather x, " + info.axes[3] + "), in that order",
       "inline (byte 189) = gather y + 1, crossline (byte 193) = gather x + 1",
       "CDP_X/CDP_Y (bytes 181/185) = the gather's position in metres, scalar in byte 71",
       "offset (byte 37) = " + axis + ", rounded; exact axes below",
       "sample interval field = depth step in millimetres; IEEE float samples",
       "gathers: " + std::to_string(ngx) + " x " + std::to_string(ngy) + " positions (x, y), " +
           std::to_string(nz) + " depths, " + std::to_string(nc) + " " + info.axes[3] + " values"},
      "dx=" + exact_number(info.spacing[1]) + " dy=" + exact_number(info.spacing[0]) +
          " dz=" + exact_number(info.spacing[2]) + " ox=" + exact_number(info.origin[1]) +
          " oy=" + exact_number(info.origin[0]) + " oz=" + exact_number(info.origin[2]) + " d" +
          info.axes[3] + "=" + exact_number(info.spacing[3]) + " o" + info.axes[3] + "=" +
          exact_number(info.origin[3]));
  write_segy(
      path, text, int(nz), int(traces), interval, SEGY_UNKNOWN_SORTING,
      [&](int t, char* h) {
        const long long c = t % nc, gx = (t / nc) % ngx, gy = t / nc / ngx;
        segy_set_field(h, SEGY_TR_INLINE, int32_t(gy + 1));
        segy_set_field(h, SEGY_TR_CROSSLINE, int32_t(gx + 1));
        segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, -divisor);
        segy_set_field(h, SEGY_TR_CDP_X, scaled(info.origin[1] + gx * info.spacing[1], divisor));
        segy_set_field(h, SEGY_TR_CDP_Y, scaled(info.origin[0] + gy * info.spacing[0], divisor));
        segy_set_field(h, SEGY_TR_OFFSET,
                       int32_t(std::lround(info.origin[3] + c * info.spacing[3])));
      },
      [&](int t, float* samples) {
        const long long c = t % nc, position = t / nc;
        for (long long k = 0; k < nz; ++k) samples[k] = values[size_t((position * nz + k) * nc + c)];
      });
}

void write_segy_volume(const std::string& path, const VelocityModel& grid,
                       const std::vector<float>& values, const std::string& description,
                       const SurveyFrame& frame_in) {
  if (values.size() != size_t(grid.cells()))
    throw std::invalid_argument("write_segy_volume: " + std::to_string(values.size()) +
                                " values for a grid of " + std::to_string(grid.cells()) + " cells");
  const int interval = int(std::lround(grid.dz * 1000.0));
  if (interval < 1 || interval > 32767)
    throw InputError(path + ": the depth step " + number(grid.dz) +
                     " m does not fit SEG-Y's sample-interval field as millimetres (1 to 32767 mm)");
  // Without a recorded survey: inline = j + 1, crossline = i + 1, coordinates as they are.
  SurveyFrame frame = frame_in;
  if (!frame.known) frame = SurveyFrame{};
  const int n_il = frame.inline_axis == 'x' ? grid.nx : grid.ny;
  const int n_xl = frame.inline_axis == 'x' ? grid.ny : grid.nx;
  for (long long v : {frame.inline_at(0, 0), frame.inline_at(grid.nx - 1, grid.ny - 1),
                      frame.crossline_at(0, 0), frame.crossline_at(grid.nx - 1, grid.ny - 1)})
    if (v < INT32_MIN || v > INT32_MAX)
      throw InputError(path + ": line number " + std::to_string(v) +
                       " does not fit SEG-Y's 4-byte inline/crossline fields");
  // Traces in inline order (inline numbers ascending, crosslines ascending within each), as
  // segyio expects of an inline-sorted file; (i, j) of each.
  auto cell_of = [&](int t) {
    const int r_il = t / n_xl, r_xl = t % n_xl;
    const int q_il = frame.inline_step > 0 ? r_il : n_il - 1 - r_il;
    const int q_xl = frame.crossline_step > 0 ? r_xl : n_xl - 1 - r_xl;
    return frame.inline_axis == 'x' ? std::make_pair(q_il, q_xl) : std::make_pair(q_xl, q_il);
  };
  std::vector<double> coordinates;
  for (int i : {0, grid.nx - 1})
    for (int j : {0, grid.ny - 1}) {
      const std::array<double, 2> w = frame.to_world(grid.ox + i * grid.dx, grid.oy + j * grid.dy);
      coordinates.insert(coordinates.end(), {w[0], w[1]});
    }
  const int32_t divisor = coordinate_divisor(coordinates);
  // The depth of the first sample in the delay field (byte 109, "ms" read as metres, as the
  // interval's "microseconds" are millimetres), with the finest scalar (byte 215) that keeps it
  // exact in the signed 2-byte field; 0 when no such scalar exists (the text header has it).
  int delay = 0, delay_scalar = 1;
  for (int s = 1; s <= 10000; s *= 10)
    if (std::abs(grid.oz * s) <= 32767 && grid.oz * s == std::round(grid.oz * s)) {
      delay = int(std::lround(grid.oz * s));
      delay_scalar = s;
      break;
    }
  const std::string exact = "dx=" + exact_number(grid.dx) + " dy=" + exact_number(grid.dy) +
                            " dz=" + exact_number(grid.dz) + " ox=" + exact_number(grid.ox) +
                            " oy=" + exact_number(grid.oy) + " oz=" + exact_number(grid.oz) +
                            " rot=" + exact_number(frame.rotation_deg);
  const std::string numbering =
      frame.known ? "inline/crossline numbers and CDP_X/CDP_Y are the survey's (imported)"
                  : "inline (byte 189) = y index + 1, crossline (byte 193) = x index + 1";
  const std::string text = text_header(
      {"rtm " + description + ", 3-D post-stack depth volume",
       numbering,
       "CDP_X/CDP_Y (bytes 181/185) in metres, scalar in byte 71",
       "sample interval field = depth step in millimetres; IEEE float samples",
       "delay (byte 109, scalar 215) = depth of the first sample in metres",
       "grid: " + std::to_string(grid.nx) + " x " + std::to_string(grid.ny) + " x " +
           std::to_string(grid.nz) + " (x, y, z) cells",
       "rtm's x, y: the survey's CDP_X, CDP_Y turned by rot degrees (line 40)"},
      exact);
  write_segy(
      path, text, grid.nz, grid.nx * grid.ny, interval, SEGY_INLINE_SORTING,
      [&](int t, char* h) {
        const auto [i, j] = cell_of(t);
        const std::array<double, 2> w = frame.to_world(grid.ox + i * grid.dx, grid.oy + j * grid.dy);
        segy_set_field(h, SEGY_TR_INLINE, int32_t(frame.inline_at(i, j)));
        segy_set_field(h, SEGY_TR_CROSSLINE, int32_t(frame.crossline_at(i, j)));
        segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, -divisor);
        segy_set_field(h, SEGY_TR_CDP_X, scaled(w[0], divisor));
        segy_set_field(h, SEGY_TR_CDP_Y, scaled(w[1], divisor));
        segy_set_field(h, SEGY_TR_DELAY_REC_TIME, delay);
        segy_set_field(h, SEGY_TR_SCALAR_TRACE_HEADER, delay_scalar == 1 ? 1 : -delay_scalar);
      },
      [&](int t, float* samples) {
        const auto [i, j] = cell_of(t);
        for (int k = 0; k < grid.nz; ++k) samples[k] = values[(size_t(k) * grid.ny + j) * grid.nx + i];
      });
}

// ---- shot gathers -------------------------------------------------------------------------------

ShotFile read_segy_shots(const std::string& path, const SegyShotReadOptions& options) {
  const SegyHeaderBytes& bytes = options.bytes;
  check_header_byte(bytes.field_record, "--record-byte");
  check_header_byte(bytes.source_x, "--source-x-byte");
  check_header_byte(bytes.source_y, "--source-y-byte");
  check_header_byte(bytes.group_x, "--group-x-byte");
  check_header_byte(bytes.group_y, "--group-y-byte");
  const SegyInput in = open_segy(path);
  const std::map<std::string, double> exact = rtm_text_fields(in.text_header);
  ShotFile file;
  file.nt = int(in.samples);

  struct Trace {
    long long record;
    Position source, receiver;
  };
  std::vector<Trace> traces(size_t(in.traces));
  bool any_coordinate = false, volume_like = false;
  std::set<long long> inline_numbers;
  Interval interval;
  const SurveyFrame& frame = options.frame;
  for (int t = 0; t < in.traces; ++t) {
    char h[SEGY_TRACE_HEADER_SIZE];
    read_header(in, t, h);
    if (t == 0) interval = sample_interval(in, h);
    const int64_t scalar = scalar_field(in, h, 71, t, "coordinate");
    const int64_t elevation_scalar = scalar_field(in, h, 69, t, "elevation");
    const int64_t sx = trace_field(h, bytes.source_x, Type::i32), sy = trace_field(h, bytes.source_y, Type::i32);
    const int64_t gx = trace_field(h, bytes.group_x, Type::i32), gy = trace_field(h, bytes.group_y, Type::i32);
    any_coordinate = any_coordinate || sx != 0 || sy != 0 || gx != 0 || gy != 0;
    volume_like = volume_like || trace_field(h, 181, Type::i32) != 0 || trace_field(h, 185, Type::i32) != 0;
    if (inline_numbers.size() < 2) inline_numbers.insert(trace_field(h, 189, Type::i32));
    Trace& tr = traces[size_t(t)];
    tr.record = trace_field(h, bytes.field_record, Type::i32);
    // World coordinates, or the frame of a rotated model the shots are imported for.
    const std::array<double, 2> s = frame.from_world(apply_scalar(sx, scalar), apply_scalar(sy, scalar));
    const std::array<double, 2> g = frame.from_world(apply_scalar(gx, scalar), apply_scalar(gy, scalar));
    tr.source = {apply_scalar(trace_field(h, 49, Type::i32), elevation_scalar), s[1], s[0]};
    tr.receiver = {-apply_scalar(trace_field(h, 41, Type::i32), elevation_scalar), g[1], g[0]};
  }
  const double dt_field = interval.value * 1e-6;
  file.dt = options.dt > 0 ? options.dt : exact.count("dt") ? exact.at("dt") : dt_field;
  if (!(file.dt > 0))
    throw InputError(path + ": no sample interval: " + interval.fields() +
                     " (microseconds; a negative or zero interval is none); give the time step "
                     "with --dt");
  if (!any_coordinate)
    throw InputError(path + ": the trace headers carry no source or receiver coordinates (bytes " +
                     std::to_string(bytes.source_x) + "/" + std::to_string(bytes.source_y) + " and " +
                     std::to_string(bytes.group_x) + "/" + std::to_string(bytes.group_y) +
                     " are 0 in every trace); rtm needs them to place the shots" +
                     (volume_like ? ". The traces carry CDP positions (bytes 181/185) instead: a "
                                    "post-stack volume? use `rtm import model`"
                                  : ". If the file keeps them in other fields, give "
                                    "--source-x-byte, --source-y-byte, --group-x-byte, --group-y-byte"));

  // Shots by field record, in order of first appearance, each with its own receivers (any
  // number); when every shot has the same ones they become the file's shared spread.
  std::map<long long, std::vector<int>> by_record;
  std::vector<long long> order;
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
    shot.field_record = order[s];
    shot.source = traces[size_t(members.front())].source;
    const size_t nrec = members.size();
    shot.data.resize(nrec * size_t(file.nt));
    for (size_t r = 0; r < nrec; ++r) {
      const Trace& tr = traces[size_t(members[r])];
      if (tr.source != shot.source)
        throw InputError(path + ": trace " + std::to_string(members[r] + 1) + " of field record " +
                         std::to_string(order[s]) + " (byte " + std::to_string(bytes.field_record) +
                         ") has its source at " + describe(tr.source) + ", the record's first trace (" +
                         std::to_string(members.front() + 1) + ") at " + describe(shot.source) +
                         ". rtm takes the traces of one field record as one shot, fired from one "
                         "place; if the file numbers its shots in another field, give it with "
                         "--record-byte (e.g. 17, energy source point), else renumber the records "
                         "so that each holds one source position" +
                         (volume_like && inline_numbers.size() > 1
                              ? std::string(". The traces also carry inline numbers (byte 189) and "
                                            "CDP positions (bytes 181/185): a post-stack volume? "
                                            "use `rtm import model`")
                              : std::string()));
      shot.receivers.push_back(tr.receiver);
      read_trace(in, members[r], samples.data());
      std::copy(samples.begin(), samples.end(), shot.data.begin() + std::ptrdiff_t(r * size_t(file.nt)));
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
  file.survey_rotation = frame.known ? frame.rotation_deg : 0.0;
  return file;
}

void write_segy_shots(const std::string& path, const ShotFile& shots) {
  const int interval = int(std::lround(shots.dt * 1e6));
  SurveyFrame frame; // positions back to world coordinates
  frame.rotation_deg = shots.survey_rotation;
  std::vector<double> coordinates, depths;
  // One trace per (shot, receiver), shot by shot; each shot with its own receivers or the shared.
  std::vector<std::pair<size_t, size_t>> trace_of; // (shot index, receiver index)
  auto world = [&](const Position& p) { return frame.to_world(p[2], p[1]); }; // (X, Y)
  for (size_t s = 0; s < shots.shots.size(); ++s) {
    const ShotGather& shot = shots.shots[s];
    const std::array<double, 2> w = world(shot.source);
    coordinates.insert(coordinates.end(), {w[0], w[1]});
    depths.push_back(shot.source[0]);
    if (shot.field_record && (*shot.field_record < INT32_MIN || *shot.field_record > INT32_MAX))
      throw std::invalid_argument("write_segy_shots: field record " +
                                  std::to_string(*shot.field_record) + " does not fit 4 bytes");
    for (size_t r = 0; r < shots.receivers_of(shot).size(); ++r) trace_of.emplace_back(s, r);
  }
  auto add_receivers = [&](const std::vector<Position>& receivers) {
    for (const Position& r : receivers) {
      const std::array<double, 2> w = world(r);
      coordinates.insert(coordinates.end(), {w[0], w[1]});
      depths.push_back(r[0]);
    }
  };
  add_receivers(shots.receivers);
  for (const ShotGather& shot : shots.shots) add_receivers(shot.receivers);
  const int32_t divisor = coordinate_divisor(coordinates);
  const int32_t depth_divisor = coordinate_divisor(depths);
  const std::string text = text_header(
      {"rtm shot gathers, pre-stack, one trace per (shot, receiver)",
       "field record (byte 9) = the shot's own (imported) or shot number + 1",
       "trace in record (byte 13) = receiver + 1",
       "source x/y bytes 73/77, depth 49; receiver x/y 81/85, elevation 41 (= -depth)",
       "CDP_X/CDP_Y (bytes 181/185) = the source-receiver midpoint",
       "coordinate scalar byte 71, depth/elevation scalar byte 69; metres",
       "sample interval in microseconds (rounded); exact dt below; IEEE float samples",
       "wavelet: Ricker f0 = " + number(shots.f0) + " Hz, t0 = " + number(shots.t0) + " s",
       shots.has_per_shot_receivers() ? "each shot has its own receivers (per-shot spreads)"
                                      : "every shot has the same receivers"},
      "dt=" + exact_number(shots.dt) + " f0=" + exact_number(shots.f0) + " t0=" + exact_number(shots.t0));
  if (trace_of.size() > size_t(INT32_MAX))
    throw InputError(path + ": " + std::to_string(trace_of.size()) +
                     " traces are more than a SEG-Y file can count");
  write_segy(
      path, text, shots.nt, int(trace_of.size()), interval, SEGY_UNKNOWN_SORTING,
      [&](int t, char* h) {
        const auto [shot, receiver] = trace_of[size_t(t)];
        const ShotGather& s = shots.shots[shot];
        const Position& r = shots.receivers_of(s)[receiver];
        const std::array<double, 2> ws = world(s.source), wr = world(r);
        segy_set_field(h, SEGY_TR_FIELD_RECORD, int32_t(s.field_record.value_or(s.id + 1)));
        segy_set_field(h, SEGY_TR_NUMBER_ORIG_FIELD, int(receiver) + 1);
        segy_set_field(h, SEGY_TR_ELEV_SCALAR, -depth_divisor);
        segy_set_field(h, SEGY_TR_SOURCE_GROUP_SCALAR, -divisor);
        segy_set_field(h, SEGY_TR_SOURCE_DEPTH, scaled(s.source[0], depth_divisor));
        segy_set_field(h, SEGY_TR_SOURCE_X, scaled(ws[0], divisor));
        segy_set_field(h, SEGY_TR_SOURCE_Y, scaled(ws[1], divisor));
        segy_set_field(h, SEGY_TR_RECV_GROUP_ELEV, scaled(-r[0], depth_divisor));
        segy_set_field(h, SEGY_TR_GROUP_X, scaled(wr[0], divisor));
        segy_set_field(h, SEGY_TR_GROUP_Y, scaled(wr[1], divisor));
        // The midpoint, where processing bins the trace (the CDP).
        segy_set_field(h, SEGY_TR_CDP_X, scaled(0.5 * (ws[0] + wr[0]), divisor));
        segy_set_field(h, SEGY_TR_CDP_Y, scaled(0.5 * (ws[1] + wr[1]), divisor));
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
