// A simple analytic model of the GPU memory system, for `rtm micro` (docs/micro.md).
//
// Plain C++: it builds and is tested without CUDA. It counts what the hardware counters of Nsight
// Compute count, from the addresses a warp's threads touch:
//   - a warp-level global load or store instruction is one L1 request;
//   - a request touches the distinct 32-byte sectors (and 128-byte lines) of its active lanes;
//   - L1 is write-through: every stored sector goes on to L2; loaded sectors stay in L1 until
//     their last use by the same thread block (blocks do not share an L1), so a sector comes from
//     L2 once per block that reads it;
//   - L2 reads device memory in 64-byte pieces (2 sectors) and writes back every dirty sector once;
//   - shared memory has 32 banks of 4-byte words; a warp's access takes as many passes
//     (wavefronts) as the most distinct words that fall in one bank.
// Where the hardware differs, the measurement next to the model shows it: that is the point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rtm::micro::model {

constexpr int kWarpSize = 32;
constexpr int kSectorBytes = 32;
constexpr int kLineBytes = 128;
constexpr int kDramFetchBytes = 64; // L2 <- device memory granularity (2 sectors) since Volta
constexpr int kBanks = 32;
constexpr int kBankWordBytes = 4;

// ---- Building blocks -------------------------------------------------------------------------

// Distinct 32-byte sectors touched by one warp-level access: lane i reads or writes
// `bytes_per_lane` bytes at lane_addresses[i] (byte addresses; inactive lanes are left out).
int64_t sectors_touched(const std::vector<uint64_t>& lane_addresses, int bytes_per_lane);
// Distinct 128-byte lines touched by the same access.
int64_t lines_touched(const std::vector<uint64_t>& lane_addresses, int bytes_per_lane);
// Distinct `granule`-byte pieces touched by the byte range [first, last].
int64_t granules_in_range(uint64_t first_byte, uint64_t last_byte, int granule);

// Shared-memory bank-conflict degree of one warp-level access to 4-byte words (word indices, one
// per active lane): the most distinct words any one bank must deliver. Lanes reading the same word
// share it (broadcast). 1 means conflict-free; ncu counts this many wavefronts for the request.
int bank_conflict_degree(const std::vector<uint64_t>& lane_word_indices);

// Lane addresses base + lane * stride_bytes for `lanes` lanes.
std::vector<uint64_t> lane_addresses(uint64_t base, uint64_t stride_bytes, int lanes = kWarpSize);

// Bytes per second expressed in GB/s (1e9 bytes) from bytes and milliseconds; NaN if ms <= 0.
double gb_per_s(double bytes, double ms);

// ---- The device the model runs for -------------------------------------------------------------

struct DeviceModel {
  std::string name;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t persisting_l2_bytes = 0; // most L2 an access-policy window may set aside
  double sm_clock_ghz = 0;         // 0 when unknown
  int fp32_lanes_per_sm = 0;       // 0 when unknown
  double fp32_peak_gflops() const; // NaN when clock or lanes are unknown
};

// What the model assumes when there is no GPU to ask: an H200 as measured in this project
// (132 SMs, 60 MiB L2, 37.5 MiB persisting L2, 1.98 GHz, 128 FP32 lanes per SM).
DeviceModel assumed_h200();

// FP32 lanes (FFMA per clock) per SM for a compute capability; 0 where this table does not know.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// ---- fma: y[i] += x[i] * a[o] for o < op, in a grid-stride loop over n floats ----------------
// Per element and per o the kernel executes 3 loads (x[i], y[i], a[o]), one FFMA and one store of
// y[i] (fma.cu keeps the compiler from merging them, as in the blog's SASS).

struct FmaCounts {
  int64_t warp_iterations = 0; // passes of a warp through the loop body with >= 1 active lane
  int64_t ffma_warp = 0;       // warp-level FFMA instructions (ncu's "executed instructions")
  int64_t ffma_thread = 0;     // FFMA per thread, summed: n * op
  int64_t l1_ld_requests = 0;  // l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  int64_t l1_st_requests = 0;  // l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  int64_t l1_ld_sectors = 0;   // l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  int64_t l1_st_sectors = 0;   // l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  int64_t l2_ld_requests = 0;  // lts__t_requests_srcunit_tex_op_read.sum
  int64_t l2_ld_sectors = 0;   // lts__t_sectors_srcunit_tex_op_read.sum
  int64_t l2_st_requests = 0;  // lts__t_requests_srcunit_tex_op_write.sum
  int64_t l2_st_sectors = 0;   // lts__t_sectors_srcunit_tex_op_write.sum
  int64_t dram_rd_sectors = 0; // dram__sectors_read.sum (cold caches)
  int64_t dram_wr_sectors = 0; // dram__sectors_write.sum (once y leaves L2; 0 while it fits)
  double useful_bytes = 0;     // x read, y read, y written: 12 bytes per element
  double flops = 0;            // 2 per FFMA

  // L1 sector hit rate over loads and stores, as ncu computes it.
  double l1_hit_pct() const;
};

FmaCounts fma_counts(int64_t n, int blocks, int threads_per_block, int op);

// Blocks that fill the device for a thread count: what `--blocks 0` means.
int fma_blocks_to_fill(const DeviceModel& device, int threads_per_block);

// The fastest the fma kernel could run: the slowest of moving its device-memory bytes at the copy
// bandwidth, its FLOPs at the FP32 peak, and its L1 requests at one per clock per SM in use
// (4 sectors per clock). Terms with unknown inputs (NaN, 0) are left out.
struct TimeFloor {
  double ms = 0;
  std::string bound; // "dram", "fp32" or "l1"; "-" when no term is known
};
TimeFloor fma_time_floor(const FmaCounts& counts, int blocks, const DeviceModel& device,
                         double copy_gb_per_s);

// ---- copy and strided copy: out[i] = in[i * stride], 4-byte elements --------------------------

struct StridedCopyModel {
  int stride = 1;
  int64_t ld_sectors_per_request = 0; // of one warp's read
  int64_t ld_lines_per_request = 0;
  double dram_bytes_per_element = 0; // read (64-byte pieces) + written
  double relative_bandwidth = 0;     // useful GB/s over stride 1's, at equal DRAM throughput
};
StridedCopyModel strided_copy(int stride);

// Bytes a copy of n floats moves (read + written).
double copy_bytes(int64_t n_floats);

// ---- transpose of a rows x cols float matrix through square tiles -----------------------------

constexpr int kTransposeTile = 64;      // floats per tile side of naive, tiled and tiled+pad
constexpr int kTransposeSmallTile = 32; // elements per tile side of pad32 and pad32-f64

// naive, tiled and padded: 64 x 64 tiles, 32 x 8 threads, 16 elements per thread (tiled: a
// [64][64] shared tile, padded: [64][65]). padded32: the classic 32 x 32 tile padded to [32][33],
// 32 x 8 threads, 4 elements per thread. padded32_f64: the same with 8-byte elements (the float
// matrix's bytes read as rows x cols/2 doubles), so every global request moves 256 bytes.
enum class TransposeKind { naive, tiled, padded, padded32, padded32_f64 };
inline constexpr TransposeKind kTransposeKinds[] = {TransposeKind::naive, TransposeKind::tiled,
                                                    TransposeKind::padded, TransposeKind::padded32,
                                                    TransposeKind::padded32_f64};
const char* transpose_name(TransposeKind kind);
int transpose_element_bytes(TransposeKind kind); // 4, or 8 for padded32_f64

struct TransposeModel {
  int64_t ld_sectors_per_request = 0; // global reads
  int64_t st_sectors_per_request = 0; // global writes
  int64_t ideal_sectors_per_request = 0; // 32 lanes x element bytes / 32
  int smem_store_degree = 0;          // bank-conflict degree writing the tile (0: no tile)
  int smem_load_degree = 0;           // reading it transposed (0: no tile)
  int smem_wavefronts_per_request = 0; // reading it: degree x (element bytes / 4); ncu's
                                       // wavefronts / shared-load instructions
};
// For tiles and rows aligned to 128 bytes; `rows` sets the naive kernel's store stride. 8-byte
// elements go through shared memory a half-warp at a time (two wavefronts when conflict-free), so
// their degree is the worst half-warp's.
TransposeModel transpose_model(TransposeKind kind, int64_t rows);

// ---- add a constant to double3 elements, or to the same bytes as doubles -----------------------

enum class AddLayout { double3, doubles };
const char* add_layout_name(AddLayout layout);

// Per 768 bytes of data (32 double3 = 96 doubles), the span of one double3 warp.
struct AddConstantModel {
  int64_t ld_requests = 0;               // warp-level 8-byte loads
  int64_t ld_sectors_per_request = 0;    // 24 for double3 (768 B span), 8 for doubles
  int64_t ideal_sectors_per_request = 0; // 8: 32 lanes x 8 bytes
  int64_t l1_ld_sectors = 0;
  int64_t l2_ld_sectors = 0; // double3: the y and z loads hit what x brought into L1
  int64_t l2_st_sectors = 0; // double3: each sector written 3 times (partial writes)
  int64_t dram_bytes = 0;    // the same for both layouts
};
AddConstantModel add_constant_model(AddLayout layout);

// ---- shared memory read with a stride of `stride` words between lanes --------------------------

int smem_stride_degree(int stride_words);

// ---- a reused buffer next to a streaming one, with and without an L2 persisting window ---------
// Each pass (one thread per stream element, as the A100 talk's sliding-window test) reads and
// writes stream[i] and freq[i % freq_n], so the frequent buffer is reread and rewritten
// stream/freq times a pass.

struct L2WindowModel {
  double freq_hit_fraction = 0; // of the frequent buffer's accesses, served by L2
  double dram_bytes = 0;        // per pass
  double useful_bytes = 0;      // per pass: 4 x stream bytes (both buffers read and written)
};
// hit_ratio 0 means no persisting lines (no window, a window elsewhere, or hitProp normal: the
// set-aside is then open to normal lines, so it changes nothing). Otherwise a window over the
// whole frequent buffer with this hitRatio and `set_aside_bytes` of L2 set aside for persisting
// lines.
L2WindowModel l2_window(int64_t stream_bytes, int64_t freq_bytes, int64_t l2_bytes,
                        int64_t set_aside_bytes, double hit_ratio);

// The settings `rtm micro l2-window` compares, each separating one suspect of the slowdown a
// persisting window showed on Hopper (docs/micro.md, "l2-window"):
//   none       no set-aside, no window (the baseline);
//   carveout   the set-aside, no window: does reserving L2 alone cost anything?
//   elsewhere  the set-aside and a hitRatio-1 persisting window over a buffer no kernel touches:
//              the cost of having a window at all (launch set-up), without persisting lines;
//   persist    the talk's test: a window over the frequent buffer, hitRatio 1, hitProp persisting;
//   normal     the same window with hitProp normal: the window's machinery without persistence;
//   half       hitRatio 0.5: half the frequent lines persist (the rest get missProp);
//   fit        hitRatio min(1, set-aside / frequent size): the persisting lines fit the set-aside.
enum class WindowMode { none, carveout, elsewhere, persist, normal, half, fit };
inline constexpr WindowMode kWindowModes[] = {WindowMode::none,    WindowMode::carveout,
                                              WindowMode::elsewhere, WindowMode::persist,
                                              WindowMode::normal,  WindowMode::half,
                                              WindowMode::fit};
const char* window_mode_name(WindowMode mode);

struct WindowSetting {
  int64_t set_aside_bytes = 0; // cudaLimitPersistingL2CacheSize
  bool window = false;         // an access-policy window is set on the stream
  bool over_frequent = false;  // ...over the frequent buffer (else over an untouched one)
  bool persisting = false;     // hitProp persisting (else normal)
  double hit_ratio = 0;        // of the window
  // The share of the frequent buffer's lines that persist: what the model's l2_window() takes.
  double persisting_ratio() const { return window && over_frequent && persisting ? hit_ratio : 0; }
};
// `set_aside_bytes`: what the experiment sets aside (its share of L2, at most the device's limit).
WindowSetting window_setting(WindowMode mode, int64_t freq_bytes, int64_t set_aside_bytes);

} // namespace rtm::micro::model
