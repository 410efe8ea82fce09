#include "kernels/micro/memory_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace rtm::micro::model {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Distinct `granule`-byte pieces touched by a set of [address, address + bytes) ranges.
int64_t distinct_granules(const std::vector<uint64_t>& addresses, int bytes, int granule) {
  std::set<uint64_t> pieces;
  for (uint64_t a : addresses)
    for (uint64_t p = a / granule; p <= (a + bytes - 1) / granule; ++p) pieces.insert(p);
  return static_cast<int64_t>(pieces.size());
}

} // namespace

// ---- Building blocks -------------------------------------------------------------------------

int64_t sectors_touched(const std::vector<uint64_t>& lane_addresses, int bytes_per_lane) {
  return distinct_granules(lane_addresses, bytes_per_lane, kSectorBytes);
}

int64_t lines_touched(const std::vector<uint64_t>& lane_addresses, int bytes_per_lane) {
  return distinct_granules(lane_addresses, bytes_per_lane, kLineBytes);
}

int64_t granules_in_range(uint64_t first_byte, uint64_t last_byte, int granule) {
  if (last_byte < first_byte) return 0;
  return static_cast<int64_t>(last_byte / granule - first_byte / granule + 1);
}

int bank_conflict_degree(const std::vector<uint64_t>& lane_word_indices) {
  std::map<int, std::set<uint64_t>> words_per_bank;
  for (uint64_t w : lane_word_indices) words_per_bank[static_cast<int>(w % kBanks)].insert(w);
  size_t degree = 0;
  for (const auto& [bank, words] : words_per_bank) degree = std::max(degree, words.size());
  return static_cast<int>(degree);
}

std::vector<uint64_t> lane_addresses(uint64_t base, uint64_t stride_bytes, int lanes) {
  std::vector<uint64_t> addresses(lanes);
  for (int lane = 0; lane < lanes; ++lane) addresses[lane] = base + lane * stride_bytes;
  return addresses;
}

double gb_per_s(double bytes, double ms) { return ms > 0 ? bytes / ms / 1e6 : kNaN; }

// ---- The device --------------------------------------------------------------------------------

double DeviceModel::fp32_peak_gflops() const {
  if (sm_clock_ghz <= 0 || fp32_lanes_per_sm <= 0 || sm_count <= 0) return kNaN;
  return 2.0 * sm_count * fp32_lanes_per_sm * sm_clock_ghz; // an FFMA is 2 FLOPs
}

DeviceModel assumed_h200() {
  DeviceModel d;
  d.name = "assumed H200";
  d.sm_count = 132;
  d.l2_bytes = 60LL << 20;
  d.persisting_l2_bytes = (75LL << 20) / 2; // 37.5 MiB
  d.sm_clock_ghz = 1.98;
  d.fp32_lanes_per_sm = 128;
  return d;
}

int fp32_lanes_per_sm(int cc_major, int cc_minor) {
  switch (cc_major) {
  case 7: return 64;                       // Volta, Turing
  case 8: return cc_minor == 0 ? 64 : 128; // A100: 64; GA10x, Ada: 128
  case 9: return 128;                      // Hopper
  case 10:
  case 12: return 128; // Blackwell
  default: return 0;
  }
}

// ---- fma ---------------------------------------------------------------------------------------

double FmaCounts::l1_hit_pct() const {
  const double sectors = static_cast<double>(l1_ld_sectors + l1_st_sectors);
  return sectors > 0 ? 100.0 * (1.0 - l2_ld_sectors / sectors) : kNaN;
}

FmaCounts fma_counts(int64_t n, int blocks, int threads_per_block, int op) {
  if (n < 0 || blocks < 1 || threads_per_block < 1 || threads_per_block > 1024 || op < 1)
    throw std::invalid_argument(
        "fma model: need n >= 0, blocks >= 1, 1 <= threads <= 1024, op >= 1");
  constexpr int64_t kFloat = 4;
  constexpr int64_t per_sector = kSectorBytes / kFloat; // 8 floats
  constexpr int64_t per_line = kLineBytes / kFloat;     // 32 floats
  const int64_t grid_threads = int64_t(blocks) * threads_per_block;
  const int warps_per_block = (threads_per_block + kWarpSize - 1) / kWarpSize;
  const int64_t a_sectors = ceil_div(op, per_sector);

  FmaCounts c;
  for (int64_t block = 0; block < blocks; ++block) {
    // A block's x (and y) accesses go up through memory: iteration k, then warp 0, 1, ... So the
    // sectors it has already brought into its L1 are exactly those up to the last one it touched.
    int64_t last_sector = -1;
    for (int64_t base = block * threads_per_block; base < n; base += grid_threads) {
      for (int w = 0; w < warps_per_block; ++w) {
        const int64_t first = base + int64_t(w) * kWarpSize;
        if (first >= n) break;
        const int64_t lanes =
            std::min<int64_t>({kWarpSize, threads_per_block - int64_t(w) * kWarpSize, n - first});
        const int64_t last = first + lanes - 1;
        ++c.warp_iterations;
        const int64_t s0 = first / per_sector, s1 = last / per_sector;
        const int64_t sectors = s1 - s0 + 1;
        const int64_t lines = last / per_line - first / per_line + 1;
        c.l1_ld_sectors += op * (2 * sectors + 1); // x, y, and one sector for a[o]
        c.l1_st_sectors += op * sectors;
        c.l2_st_sectors += op * sectors; // write-through: every store reaches L2
        c.l2_st_requests += op * lines;
        const int64_t miss_from = std::max(s0, last_sector + 1);
        if (miss_from <= s1) { // x and y miss alike
          c.l2_ld_sectors += 2 * (s1 - miss_from + 1);
          c.l2_ld_requests += 2 * (s1 / 4 - miss_from / 4 + 1); // 4 sectors per line
          last_sector = s1;
        }
      }
    }
    if (last_sector >= 0) { // the block ran: a[0..op) comes in once, one sector per request
      c.l2_ld_sectors += a_sectors;
      c.l2_ld_requests += a_sectors;
    }
  }
  c.ffma_warp = op * c.warp_iterations;
  c.ffma_thread = n * op;
  c.l1_ld_requests = 3 * op * c.warp_iterations;
  c.l1_st_requests = op * c.warp_iterations;
  const int64_t sectors_per_fetch = kDramFetchBytes / kSectorBytes;
  const int64_t array_fetches = n > 0 ? granules_in_range(0, kFloat * n - 1, kDramFetchBytes) : 0;
  const int64_t a_fetches = granules_in_range(0, kFloat * op - 1, kDramFetchBytes);
  c.dram_rd_sectors = sectors_per_fetch * (2 * array_fetches + a_fetches);
  c.dram_wr_sectors = ceil_div(kFloat * n, kSectorBytes);
  c.useful_bytes = 3.0 * kFloat * n;
  c.flops = 2.0 * n * op;
  return c;
}

int fma_blocks_to_fill(const DeviceModel& device, int threads_per_block) {
  constexpr int kMaxThreadsPerSm = 2048;
  const int per_sm = std::max(1, kMaxThreadsPerSm / std::max(1, threads_per_block));
  return std::max(1, device.sm_count) * per_sm;
}

TimeFloor fma_time_floor(const FmaCounts& c, int blocks, const DeviceModel& device,
                         double copy_gb_per_s) {
  TimeFloor floor{0, "-"};
  auto consider = [&](double ms, const char* bound) {
    if (std::isfinite(ms) && ms > floor.ms) floor = {ms, bound};
  };
  if (copy_gb_per_s > 0)
    consider(double(c.dram_rd_sectors + c.dram_wr_sectors) * kSectorBytes / copy_gb_per_s / 1e6,
             "dram");
  const int active_sms = device.sm_count > 0 ? std::min(blocks, device.sm_count) : blocks;
  if (device.sm_clock_ghz > 0) {
    const double clocks_per_ms = device.sm_clock_ghz * 1e6;
    if (device.fp32_lanes_per_sm > 0) {
      const double warp_ffma_per_clock = active_sms * device.fp32_lanes_per_sm / double(kWarpSize);
      consider(c.ffma_warp / warp_ffma_per_clock / clocks_per_ms, "fp32");
    }
    const double l1_clocks = std::max(double(c.l1_ld_requests + c.l1_st_requests),
                                      double(c.l1_ld_sectors + c.l1_st_sectors) / 4.0);
    consider(l1_clocks / active_sms / clocks_per_ms, "l1");
  }
  if (floor.bound == std::string("-")) floor.ms = kNaN;
  return floor;
}

// ---- copy --------------------------------------------------------------------------------------

StridedCopyModel strided_copy(int stride) {
  if (stride < 1) throw std::invalid_argument("strided copy model: stride must be >= 1");
  StridedCopyModel m;
  m.stride = stride;
  const auto lanes = lane_addresses(0, 4ull * stride);
  m.ld_sectors_per_request = sectors_touched(lanes, 4);
  m.ld_lines_per_request = lines_touched(lanes, 4);
  // Over a long array, each 64-byte piece holds 64 / (4 stride) of the elements read, or one.
  const double read_bytes = std::min(4.0 * stride, double(kDramFetchBytes));
  m.dram_bytes_per_element = read_bytes + 4.0;
  m.relative_bandwidth = 8.0 / m.dram_bytes_per_element; // stride 1 moves 8 bytes per element
  return m;
}

double copy_bytes(int64_t n_floats) { return 2.0 * 4.0 * n_floats; }

// ---- transpose ---------------------------------------------------------------------------------

const char* transpose_name(TransposeKind kind) {
  switch (kind) {
  case TransposeKind::naive: return "naive";
  case TransposeKind::tiled: return "tiled";
  case TransposeKind::padded: return "tiled+pad";
  case TransposeKind::padded32: return "pad32";
  case TransposeKind::padded32_f64: return "pad32-f64";
  }
  return "?";
}

int transpose_element_bytes(TransposeKind kind) {
  return kind == TransposeKind::padded32_f64 ? 8 : 4;
}

TransposeModel transpose_model(TransposeKind kind, int64_t rows) {
  if (rows < 1) throw std::invalid_argument("transpose model: rows must be >= 1");
  TransposeModel m;
  const int e = transpose_element_bytes(kind);
  // Every variant reads 32 consecutive elements of one input row per warp.
  m.ld_sectors_per_request = sectors_touched(lane_addresses(0, e), e);
  m.ideal_sectors_per_request = m.ld_sectors_per_request;
  if (kind == TransposeKind::naive) {
    // Lane i writes output row i: consecutive lanes are a whole output row (rows floats) apart.
    m.st_sectors_per_request = sectors_touched(lane_addresses(0, 4ull * rows), 4);
    return m;
  }
  // Tiled: the warp writes 32 consecutive elements of one output row.
  m.st_sectors_per_request = sectors_touched(lane_addresses(0, e), e);
  // Elements per tile row: only the width modulo 32 words decides the banks.
  const int tile = kind == TransposeKind::tiled || kind == TransposeKind::padded
                       ? kTransposeTile
                       : kTransposeSmallTile;
  const int width = kind == TransposeKind::tiled ? tile : tile + 1;
  const int words = e / kBankWordBytes; // 4-byte words per element
  const int lanes_per_pass = kWarpSize / words; // 8-byte elements: a half-warp per pass
  const int ty = 0; // every row of threads gives the same degree
  for (int first = 0; first < kWarpSize; first += lanes_per_pass) {
    std::vector<uint64_t> store_words, load_words;
    for (int lane = first; lane < first + lanes_per_pass; ++lane)
      for (int w = 0; w < words; ++w) {
        store_words.push_back((uint64_t(ty) * width + lane) * words + w); // tile[ty][lane]
        load_words.push_back((uint64_t(lane) * width + ty) * words + w);  // tile[lane][ty]
      }
    m.smem_store_degree = std::max(m.smem_store_degree, bank_conflict_degree(store_words));
    m.smem_load_degree = std::max(m.smem_load_degree, bank_conflict_degree(load_words));
  }
  m.smem_wavefronts_per_request = m.smem_load_degree * words;
  return m;
}

// ---- double3 -----------------------------------------------------------------------------------

const char* add_layout_name(AddLayout layout) {
  return layout == AddLayout::double3 ? "double3" : "double";
}

AddConstantModel add_constant_model(AddLayout layout) {
  AddConstantModel m;
  m.ideal_sectors_per_request = sectors_touched(lane_addresses(0, 8), 8);
  m.dram_bytes = 2 * 768; // read once, written once
  if (layout == AddLayout::double3) {
    // One warp: lane i loads the x, y, z of element i, 24 bytes apart, with three 8-byte loads.
    std::vector<uint64_t> all;
    for (int component = 0; component < 3; ++component) {
      const auto lanes = lane_addresses(8ull * component, 24);
      m.ld_sectors_per_request = std::max(m.ld_sectors_per_request, sectors_touched(lanes, 8));
      all.insert(all.end(), lanes.begin(), lanes.end());
    }
    m.ld_requests = 3;
    m.l1_ld_sectors = 3 * m.ld_sectors_per_request;
    m.l2_ld_sectors = sectors_touched(all, 8);
    m.l2_st_sectors = 3 * m.ld_sectors_per_request; // stores touch the same sectors, 3 times
  } else {
    // Three warps, each loading 32 consecutive doubles.
    m.ld_requests = 3;
    m.ld_sectors_per_request = m.ideal_sectors_per_request;
    m.l1_ld_sectors = 3 * m.ld_sectors_per_request;
    m.l2_ld_sectors = m.l1_ld_sectors;
    m.l2_st_sectors = m.l1_ld_sectors;
  }
  return m;
}

// ---- shared memory -----------------------------------------------------------------------------

int smem_stride_degree(int stride_words) {
  if (stride_words < 1) throw std::invalid_argument("smem stride model: stride must be >= 1");
  std::vector<uint64_t> words;
  for (int lane = 0; lane < kWarpSize; ++lane) words.push_back(uint64_t(lane) * stride_words);
  return bank_conflict_degree(words);
}

// ---- L2 persistence ----------------------------------------------------------------------------

L2WindowModel l2_window(int64_t stream_bytes, int64_t freq_bytes, int64_t l2_bytes,
                        int64_t set_aside_bytes, double hit_ratio) {
  if (stream_bytes <= 0 || freq_bytes <= 0 || l2_bytes <= 0 || hit_ratio < 0 || hit_ratio > 1)
    throw std::invalid_argument("l2 window model: sizes must be positive, hit ratio in [0, 1]");
  const double F = double(freq_bytes), S = double(stream_bytes);
  // Between two accesses of the same frequent element a pass touches the rest of the frequent
  // buffer and as many stream bytes (both read and written in place): a reuse distance of about
  // 2 F. An LRU cache of C bytes keeps the element when that distance fits in C, and keeps none
  // of a cyclic sweep that does not fit.
  double hit = 0;
  if (hit_ratio == 0) {
    hit = 2 * F <= double(l2_bytes) ? 1.0 : 0.0;
  } else {
    const double persisting = hit_ratio * F, normal = (1 - hit_ratio) * F;
    if (persisting <= double(set_aside_bytes)) hit += hit_ratio; // else the persisting lines thrash
    // Normal lines may use the part of the set-aside that persisting lines leave free.
    const double normal_capacity = double(l2_bytes) - std::min(persisting, double(set_aside_bytes));
    if (normal > 0 && normal + F <= normal_capacity) hit += 1 - hit_ratio;
  }
  L2WindowModel m;
  m.freq_hit_fraction = hit;
  // The stream read and written once; a frequent access that misses reads its sector and, as the
  // line leaves L2 dirty before its next use, writes it back.
  m.dram_bytes = 2 * S + 2 * (1 - hit) * S;
  m.useful_bytes = 4 * S;
  return m;
}

const char* window_mode_name(WindowMode mode) {
  switch (mode) {
  case WindowMode::none: return "none";
  case WindowMode::carveout: return "carveout";
  case WindowMode::elsewhere: return "elsewhere";
  case WindowMode::persist: return "persist";
  case WindowMode::normal: return "normal";
  case WindowMode::half: return "half";
  case WindowMode::fit: return "fit";
  }
  return "?";
}

WindowSetting window_setting(WindowMode mode, int64_t freq_bytes, int64_t set_aside_bytes) {
  if (freq_bytes <= 0 || set_aside_bytes < 0)
    throw std::invalid_argument("window setting: the frequent size must be positive");
  WindowSetting w;
  if (mode == WindowMode::none) return w;
  w.set_aside_bytes = set_aside_bytes;
  if (mode == WindowMode::carveout) return w;
  w.window = true;
  w.over_frequent = mode != WindowMode::elsewhere;
  w.persisting = mode != WindowMode::normal;
  w.hit_ratio = mode == WindowMode::half  ? 0.5
                : mode == WindowMode::fit ? std::min(1.0, double(set_aside_bytes) / freq_bytes)
                                          : 1.0;
  return w;
}

} // namespace rtm::micro::model
