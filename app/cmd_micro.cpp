// `rtm micro`: microkernels that show why the RTM variants behave as they do (docs/micro.md).
// Every experiment prints what it measured next to what the analytic model of
// kernels/micro/memory_model.h predicts. Without a CUDA build or a GPU it prints the model alone.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "solvers/contracts/errors.h"
#include "io/result_table.h"
#include "kernels/micro/memory_model.h"
#ifdef RTM_HAVE_CUDA
#include "kernels/micro/micro.h"
#endif

namespace rtm::app {
namespace {

namespace model = micro::model;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kMiB = int64_t(1) << 20;

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// ---- The run: device, output format, timing, verification ---------------------------------------

struct CommonOptions {
  bool csv = false;
  bool json = false;
  bool model_only = false;
  int repeats = 20;
};

class Session {
public:
  explicit Session(const CommonOptions& options) : options_(options) {
    device_ = model::assumed_h200();
#ifdef RTM_HAVE_CUDA
    std::string why;
    if (options.model_only) {
      why_model_only_ = "--model-only";
    } else if (!micro::gpu_available(&why)) {
      why_model_only_ = why;
    } else {
      const micro::DeviceProperties d = micro::query_device();
      device_ = d.model();
      peak_gb_per_s_ = d.theoretical_peak_gb_per_s();
      persisting_note_ =
          d.persisting_l2_max_bytes > 0
              ? fixed(double(d.persisting_l2_max_bytes) / kMiB, 1) + " MiB persisting L2"
              : "no persisting L2";
      measuring_ = true;
    }
#else
    why_model_only_ = "this build of rtm has no CUDA kernels";
#endif
  }

  bool measuring() const { return measuring_; }
  const model::DeviceModel& device() const { return device_; }
  double peak_gb_per_s() const { return peak_gb_per_s_; }
  OutputFormat format() const {
    return options_.csv    ? OutputFormat::csv
           : options_.json ? OutputFormat::json
                           : OutputFormat::text;
  }

#ifdef RTM_HAVE_CUDA
  micro::TimingOptions timing() const {
    micro::TimingOptions t;
    t.repeats = options_.repeats;
    return t;
  }
#endif

  // The coalesced-copy bandwidth of this device, measured once in this run (NaN when not
  // measuring): the "dram" floor of fma and the reference of double3 in `all`.
  double copy_gb_per_s() {
#ifdef RTM_HAVE_CUDA
    if (measuring_ && std::isnan(copy_gb_per_s_)) {
      const int64_t n = 64 * kMiB; // 256 MiB per buffer, well beyond L2
      const micro::CopyRun run = micro::run_copy(n, timing());
      copy_gb_per_s_ = model::gb_per_s(model::copy_bytes(n), run.coalesced.time.median_ms);
    }
#endif
    return copy_gb_per_s_;
  }
  void set_copy_gb_per_s(double v) { copy_gb_per_s_ = v; }

#ifdef RTM_HAVE_CUDA
  // "yes" or "NO" for the table; failures are reported again after the table.
  std::string verified(const micro::Verification& v, const std::string& what) {
    if (v.passed) return "yes";
    failures_.push_back(what + ": " + std::to_string(v.mismatches) + " of " +
                        std::to_string(v.checked) + " checked elements wrong, first " +
                        v.first_mismatch);
    return "NO";
  }
#endif

  // Says what the numbers are for: on stdout above a text table, on stderr otherwise (CSV and JSON
  // stay machine-readable).
  void describe() const {
    std::ostream& out = format() == OutputFormat::text ? std::cout : std::cerr;
    const model::DeviceModel& d = device_;
    if (measuring_) {
      out << "# " << d.name << ": " << d.sm_count << " SMs, " << fixed(double(d.l2_bytes) / kMiB, 1)
          << " MiB L2, " << persisting_note_ << ", theoretical peak "
          << (std::isnan(peak_gb_per_s_) ? std::string("n/a") : fixed(peak_gb_per_s_, 0) + " GB/s")
          << ", SM clock "
          << (d.sm_clock_ghz > 0 ? fixed(d.sm_clock_ghz, 2) + " GHz" : std::string("n/a")) << "\n";
    } else {
      std::cerr << "rtm micro: model only (" << why_model_only_
                << "); measurements need a CUDA build and a GPU\n";
      out << "# model for an " << d.name << " (" << d.sm_count << " SMs, "
          << fixed(double(d.l2_bytes) / kMiB, 1) << " MiB L2, "
          << fixed(double(d.persisting_l2_bytes) / kMiB, 1) << " MiB persisting L2, "
          << fixed(d.sm_clock_ghz, 2) << " GHz); measured columns are empty\n";
    }
  }

  void print(const ResultTable& table) const { print_table(std::cout, table, format()); }

  // A line on stderr as each experiment of `all` starts: the whole run takes half a minute.
  void progress(const char* experiment) const {
    if (measuring_) std::cerr << "rtm micro all: " << experiment << "\n";
  }

  // Throws (after the table is out) when any result failed its check.
  void finish() const {
    if (failures_.empty()) return;
    std::string message = std::to_string(failures_.size()) + " result(s) failed verification:";
    for (const auto& f : failures_) message += "\n  " + f;
    throw std::runtime_error(message);
  }

private:
  CommonOptions options_;
  bool measuring_ = false;
  std::string why_model_only_;
  std::string persisting_note_;
  model::DeviceModel device_;
  double peak_gb_per_s_ = kNaN;
  double copy_gb_per_s_ = kNaN;
  std::vector<std::string> failures_;
};

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNaN; }

// One table for `rtm micro all`: the fields every experiment shares, and the one model-versus-
// measurement comparison that says most about it.
class SummaryTable {
public:
  SummaryTable()
      : table_({{"experiment", ""},
                {"case", ""},
                {"time_ms", "%.4f"},
                {"gbps", "%.1f"},
                {"gflops", "%.1f"},
                {"pct", "%.1f"},
                {"pct_of", ""},
                {"quantity", ""},
                {"model", "%.4g"},
                {"measured", "%.4g"},
                {"verified", ""}}) {}
  void add(const std::string& experiment, const std::string& what, double ms, double gbps,
           double gflops, double percent, const std::string& percent_of,
           const std::string& quantity, double model_value, double measured_value,
           const std::string& verified) {
    table_.add_row({experiment, what, ms, gbps, gflops, percent, percent_of, quantity, model_value,
                    measured_value, verified});
  }
  const ResultTable& table() const { return table_; }

private:
  ResultTable table_;
};

// ---- fma ---------------------------------------------------------------------------------------

struct FmaOptions {
  int64_t elements = 1 << 20; // 8 MiB for x and y together: the blog's single-block runs
  int64_t bytes = 0;          // x and y together, instead of --elements
  std::vector<int> blocks{1};
  std::vector<int> threads{1, 8, 32, 64};
  std::vector<int> ops{1};
};

struct FmaCase {
  int blocks = 1, threads = 1, op = 1;
  int64_t n = 0;
  model::FmaCounts counts;
  model::TimeFloor floor;
  double ms = kNaN;
  std::string verified = "-";
  double gbps() const { return model::gb_per_s(counts.useful_bytes, ms); }
  double gflops() const { return ms > 0 ? counts.flops / ms / 1e6 : kNaN; }
  std::string name() const {
    return "blocks=" + std::to_string(blocks) + " threads=" + std::to_string(threads) +
           " op=" + std::to_string(op) + " n=" + std::to_string(n);
  }
};

std::vector<FmaCase> fma_cases(Session& s, int64_t n, const std::vector<int>& blocks,
                               const std::vector<int>& threads, const std::vector<int>& ops) {
  std::vector<FmaCase> cases;
  for (int b : blocks)
    for (int t : threads)
      for (int op : ops) {
        FmaCase c;
        c.blocks = b > 0 ? b : model::fma_blocks_to_fill(s.device(), t);
        c.threads = t;
        c.op = op;
        c.n = n;
        c.counts = model::fma_counts(n, c.blocks, t, op);
#ifdef RTM_HAVE_CUDA
        if (s.measuring()) {
          const micro::TimedKernel k = micro::run_fma({n, c.blocks, t, op}, s.timing());
          c.ms = k.time.median_ms;
          c.verified = s.verified(k.check, "fma " + c.name());
        }
#endif
        c.floor = model::fma_time_floor(c.counts, c.blocks, s.device(), s.copy_gb_per_s());
        cases.push_back(c);
      }
  return cases;
}

ResultTable fma_table(const std::vector<FmaCase>& cases) {
  ResultTable t(
      {{"blocks", ""},      {"threads", ""},        {"op", ""},           {"elements", ""},
       {"time_ms", "%.4f"}, {"gflops", "%.1f"},     {"gbps", "%.1f"},     {"floor_ms", "%.4f"},
       {"bound", ""},       {"ffma_warp", ""},      {"ffma_thread", ""},  {"l1_ld_req", ""},
       {"l1_st_req", ""},   {"l1_hit_pct", "%.2f"}, {"l2_ld_req", ""},    {"l2_ld_sect", ""},
       {"l2_st_sect", ""},  {"dram_rd_sect", ""},   {"dram_wr_sect", ""}, {"verified", ""}});
  for (const FmaCase& c : cases) {
    const model::FmaCounts& k = c.counts;
    t.add_row({(long long)c.blocks,
               (long long)c.threads,
               (long long)c.op,
               (long long)c.n,
               c.ms,
               c.gflops(),
               c.gbps(),
               c.floor.ms,
               c.floor.bound,
               (long long)k.ffma_warp,
               (long long)k.ffma_thread,
               (long long)k.l1_ld_requests,
               (long long)k.l1_st_requests,
               k.l1_hit_pct(),
               (long long)k.l2_ld_requests,
               (long long)k.l2_ld_sectors,
               (long long)k.l2_st_sectors,
               (long long)k.dram_rd_sectors,
               (long long)k.dram_wr_sectors,
               c.verified});
  }
  return t;
}

void add_fma_summary(SummaryTable& all, const std::vector<FmaCase>& cases) {
  for (const FmaCase& c : cases)
    all.add("fma", c.name(), c.ms, c.gbps(), c.gflops(), kNaN, "",
            "floor_ms (" + c.floor.bound + ")", c.floor.ms, c.ms, c.verified);
}

// ---- copy --------------------------------------------------------------------------------------

struct CopyOptions {
  int64_t bytes = 256 * kMiB;        // each of source and destination
  int64_t strided_bytes = 64 * kMiB; // written by the strided copy (it reads up to 32 x more)
  std::vector<int> strides{1, 2, 4, 8, 16, 32};
};

struct CopyRow {
  std::string kernel;
  int stride = 1;
  double bytes = 0; // useful bytes: read + written
  double ms = kNaN;
  double sectors_per_request = kNaN;
  double rel_model = kNaN;
  double rel_measured = kNaN;
  std::string verified = "-";
  double gbps() const { return model::gb_per_s(bytes, ms); }
};

std::vector<CopyRow> copy_rows([[maybe_unused]] Session& s, const CopyOptions& o) {
  const int64_t n = o.bytes / 4, n_out = o.strided_bytes / 4;
  if (n < 1 || n_out < 1) throw InputError("--bytes and --strided-bytes: need at least 4 bytes");
  std::vector<CopyRow> rows;
  CopyRow memcpy_row{"cudaMemcpy D2D", 1, model::copy_bytes(n)};
  CopyRow coalesced{"coalesced float4", 1, model::copy_bytes(n)};
  coalesced.sectors_per_request = double(model::sectors_touched(model::lane_addresses(0, 16), 16));
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    const micro::CopyRun run = micro::run_copy(n, s.timing());
    memcpy_row.ms = run.memcpy.median_ms;
    coalesced.ms = run.coalesced.time.median_ms;
    coalesced.verified = s.verified(run.coalesced.check, "coalesced copy");
    s.set_copy_gb_per_s(coalesced.gbps());
  }
#endif
  rows.push_back(memcpy_row);
  rows.push_back(coalesced);
  std::vector<CopyRow> strided;
  for (int stride : o.strides) {
    const model::StridedCopyModel m = model::strided_copy(stride);
    CopyRow r{"strided", stride, model::copy_bytes(n_out)};
    r.sectors_per_request = double(m.ld_sectors_per_request);
    r.rel_model = m.relative_bandwidth;
    strided.push_back(r);
  }
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    const auto runs = micro::run_strided_copies(n_out, o.strides, s.timing());
    for (size_t i = 0; i < runs.size(); ++i) {
      strided[i].ms = runs[i].kernel.time.median_ms;
      strided[i].verified = s.verified(runs[i].kernel.check,
                                       "strided copy, stride " + std::to_string(runs[i].stride));
    }
  }
#endif
  // Measured bandwidth relative to stride 1, where stride 1 is among those run.
  double stride1_gbps = kNaN;
  for (const CopyRow& r : strided)
    if (r.stride == 1) stride1_gbps = r.gbps();
  for (CopyRow& r : strided) r.rel_measured = r.gbps() / stride1_gbps;
  rows.insert(rows.end(), strided.begin(), strided.end());
  return rows;
}

ResultTable copy_table(const Session& s, const std::vector<CopyRow>& rows) {
  ResultTable t({{"kernel", ""},
                 {"stride", ""},
                 {"MiB", "%.0f"},
                 {"time_ms", "%.4f"},
                 {"gbps", "%.1f"},
                 {"pct_peak", "%.1f"},
                 {"pct_memcpy", "%.1f"},
                 {"sect_per_req", "%.0f"},
                 {"rel_model", "%.3f"},
                 {"rel_measured", "%.3f"},
                 {"verified", ""}});
  const double memcpy_gbps = rows.front().gbps();
  for (const CopyRow& r : rows)
    t.add_row({r.kernel, (long long)r.stride, r.bytes / kMiB, r.ms, r.gbps(),
               pct(r.gbps(), s.peak_gb_per_s()), pct(r.gbps(), memcpy_gbps), r.sectors_per_request,
               r.rel_model, r.rel_measured, r.verified});
  return t;
}

void add_copy_summary(SummaryTable& all, const Session& s, const std::vector<CopyRow>& rows) {
  const double memcpy_gbps = rows.front().gbps();
  for (size_t i = 0; i < rows.size(); ++i) {
    const CopyRow& r = rows[i];
    const std::string what =
        r.kernel == "strided" ? "stride " + std::to_string(r.stride) : r.kernel;
    if (i == 0) // cudaMemcpy itself, against the theoretical peak
      all.add("copy", what, r.ms, r.gbps(), kNaN, pct(r.gbps(), s.peak_gb_per_s()), "peak", "",
              kNaN, kNaN, r.verified);
    else if (r.kernel == "strided")
      all.add("copy", what, r.ms, r.gbps(), kNaN, pct(r.gbps(), memcpy_gbps), "cudaMemcpy",
              "bw / stride-1 bw", r.rel_model, r.rel_measured, r.verified);
    else
      all.add("copy", what, r.ms, r.gbps(), kNaN, pct(r.gbps(), memcpy_gbps), "cudaMemcpy",
              "sectors/request", r.sectors_per_request, kNaN, r.verified);
  }
}

// ---- transpose ---------------------------------------------------------------------------------

struct TransposeOptions {
  std::vector<std::string> shapes{"8192x8192", "4096x16384"};
};

std::pair<int64_t, int64_t> parse_shape(const std::string& shape) {
  const size_t x = shape.find_first_of("xX");
  try {
    size_t used_rows = 0, used_cols = 0;
    if (x == std::string::npos) throw std::invalid_argument("no x");
    const std::string rows_text = shape.substr(0, x), cols_text = shape.substr(x + 1);
    const long long rows = std::stoll(rows_text, &used_rows),
                    cols = std::stoll(cols_text, &used_cols);
    if (used_rows != rows_text.size() || used_cols != cols_text.size() || rows < 1 || cols < 1)
      throw std::invalid_argument("bad numbers");
    return {rows, cols};
  } catch (const std::exception&) {
    throw InputError("--shapes: expected ROWSxCOLS with positive integers (e.g. 8192x8192), got '" +
                     shape + "'");
  }
}

struct TransposeRow {
  std::string shape, kernel;
  double bytes = 0;
  double ms = kNaN, copy_ms = kNaN, naive_ms = kNaN;
  double ld_sectors = kNaN, st_sectors = kNaN, smem_degree = kNaN;
  std::string quantity = ""; // the model figure `all` shows for this kernel
  double quantity_value = kNaN;
  std::string verified = "-";
  double gbps() const { return model::gb_per_s(bytes, ms); }
};

std::vector<TransposeRow> transpose_rows([[maybe_unused]] Session& s, const TransposeOptions& o) {
  std::vector<TransposeRow> rows;
  for (const std::string& shape : o.shapes) {
    const auto [r, c] = parse_shape(shape);
    TransposeRow copy{shape, "copy", model::copy_bytes(r * c)};
    copy.ld_sectors = copy.st_sectors =
        double(model::sectors_touched(model::lane_addresses(0, 16), 16));
    std::vector<TransposeRow> group{copy};
    for (auto kind :
         {model::TransposeKind::naive, model::TransposeKind::tiled, model::TransposeKind::padded}) {
      const model::TransposeModel m = model::transpose_model(kind, r);
      TransposeRow row{shape, model::transpose_name(kind), model::copy_bytes(r * c)};
      row.ld_sectors = double(m.ld_sectors_per_request);
      row.st_sectors = double(m.st_sectors_per_request);
      if (kind == model::TransposeKind::naive) {
        row.quantity = "st sectors/request";
        row.quantity_value = row.st_sectors;
      } else {
        row.smem_degree = m.smem_load_degree;
        row.quantity = "smem conflict degree";
        row.quantity_value = row.smem_degree;
      }
      group.push_back(row);
    }
#ifdef RTM_HAVE_CUDA
    if (s.measuring()) {
      const micro::TransposeRun run = micro::run_transpose(r, c, s.timing());
      group[0].ms = run.copy.median_ms;
      const model::TransposeKind kinds[] = {
          model::TransposeKind::naive, model::TransposeKind::tiled, model::TransposeKind::padded};
      for (int i = 0; i < 3; ++i) {
        const micro::TimedKernel& k = run.kernel(kinds[i]);
        group[i + 1].ms = k.time.median_ms;
        group[i + 1].verified =
            s.verified(k.check, "transpose " + group[i + 1].kernel + " " + shape);
      }
    }
#endif
    for (TransposeRow& row : group) {
      row.copy_ms = group[0].ms;
      row.naive_ms = group[1].ms;
    }
    rows.insert(rows.end(), group.begin(), group.end());
  }
  return rows;
}

ResultTable transpose_table(const std::vector<TransposeRow>& rows) {
  ResultTable t({{"shape", ""},
                 {"kernel", ""},
                 {"time_ms", "%.4f"},
                 {"gbps", "%.1f"},
                 {"pct_copy", "%.1f"},
                 {"x_naive", "%.2f"},
                 {"ld_sect_req", "%.0f"},
                 {"st_sect_req", "%.0f"},
                 {"smem_degree", "%.0f"},
                 {"verified", ""}});
  for (const TransposeRow& r : rows)
    t.add_row({r.shape, r.kernel, r.ms, r.gbps(), pct(r.copy_ms, r.ms), r.naive_ms / r.ms,
               r.ld_sectors, r.st_sectors, r.smem_degree, r.verified});
  return t;
}

void add_transpose_summary(SummaryTable& all, const std::vector<TransposeRow>& rows) {
  for (const TransposeRow& r : rows)
    all.add("transpose", r.kernel + " " + r.shape, r.ms, r.gbps(), kNaN,
            r.kernel == "copy" ? kNaN : pct(r.copy_ms, r.ms), r.kernel == "copy" ? "" : "copy",
            r.quantity, r.quantity_value, kNaN, r.verified);
}

// ---- double3 -----------------------------------------------------------------------------------

struct Double3Options {
  int64_t elements = 16 * kMiB; // double3 elements: 384 MiB in, 384 MiB out
};

struct Double3Row {
  model::AddLayout layout = model::AddLayout::double3;
  int64_t elements = 0;
  model::AddConstantModel m;
  double ms = kNaN, double3_ms = kNaN;
  std::string verified = "-";
  double bytes() const { return 2.0 * 24.0 * elements; }
  double gbps() const { return model::gb_per_s(bytes(), ms); }
};

std::vector<Double3Row> double3_rows([[maybe_unused]] Session& s, const Double3Options& o) {
  if (o.elements < 1) throw InputError("--elements: need at least one double3 element");
  std::vector<Double3Row> rows;
  for (auto layout : {model::AddLayout::double3, model::AddLayout::doubles})
    rows.push_back({layout, o.elements, model::add_constant_model(layout)});
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    const micro::AddConstantRun run = micro::run_add_constant(o.elements, s.timing());
    for (Double3Row& r : rows) {
      r.ms = run.kernel(r.layout).time.median_ms;
      r.verified = s.verified(run.kernel(r.layout).check,
                              std::string("add constant, ") + model::add_layout_name(r.layout));
    }
  }
#endif
  for (Double3Row& r : rows) r.double3_ms = rows.front().ms;
  return rows;
}

ResultTable double3_table(const std::vector<Double3Row>& rows) {
  ResultTable t({{"layout", ""},
                 {"double3_elements", ""},
                 {"time_ms", "%.4f"},
                 {"gbps", "%.1f"},
                 {"x_double3", "%.2f"},
                 {"ld_sect_req", ""},
                 {"ideal_sect_req", ""},
                 {"l2_ld_sect_768B", ""},
                 {"l2_st_sect_768B", ""},
                 {"verified", ""}});
  for (const Double3Row& r : rows)
    t.add_row({model::add_layout_name(r.layout), (long long)r.elements, r.ms, r.gbps(),
               r.double3_ms / r.ms, (long long)r.m.ld_sectors_per_request,
               (long long)r.m.ideal_sectors_per_request, (long long)r.m.l2_ld_sectors,
               (long long)r.m.l2_st_sectors, r.verified});
  return t;
}

void add_double3_summary(SummaryTable& all, Session& s, const std::vector<Double3Row>& rows) {
  for (const Double3Row& r : rows)
    all.add("double3",
            std::string(model::add_layout_name(r.layout)) + " " + std::to_string(r.elements) +
                " elements",
            r.ms, r.gbps(), kNaN, pct(r.gbps(), s.copy_gb_per_s()), "copy", "sectors/request",
            double(r.m.ld_sectors_per_request), kNaN, r.verified);
}

// ---- smem-stride -------------------------------------------------------------------------------

struct SmemOptions {
  std::vector<int> strides = [] {
    std::vector<int> all(32);
    std::iota(all.begin(), all.end(), 1);
    return all;
  }();
  int iterations = 512;
};

struct SmemRow {
  int stride = 1;
  int model_degree = 1;
  double ms = kNaN;
  double ns_per_access = kNaN; // per warp-wide load, per SM
  double measured_degree = kNaN;
  double shared_bytes = kNaN;
  std::string verified = "-";
};

std::vector<SmemRow> smem_rows([[maybe_unused]] Session& s, const SmemOptions& o) {
  std::vector<SmemRow> rows;
  for (int stride : o.strides) {
    if (stride < 1 || stride > 32) throw InputError("--strides: each stride must be 1..32");
    rows.push_back({stride, model::smem_stride_degree(stride)});
  }
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    const auto runs = micro::run_smem_stride(o.strides, o.iterations, s.timing());
    for (size_t i = 0; i < runs.size(); ++i) {
      const micro::SmemStrideRun& run = runs[i];
      rows[i].ms = run.kernel.time.median_ms;
      rows[i].ns_per_access = rows[i].ms * 1e6 * run.sm_count / double(run.warp_loads);
      rows[i].shared_bytes = 128.0 * double(run.warp_loads);
      rows[i].verified = s.verified(run.kernel.check, "smem stride " + std::to_string(run.stride));
    }
  }
#endif
  double stride1_ns = kNaN;
  for (const SmemRow& r : rows)
    if (r.stride == 1) stride1_ns = r.ns_per_access;
  for (SmemRow& r : rows) r.measured_degree = r.ns_per_access / stride1_ns;
  return rows;
}

ResultTable smem_table(const Session& s, const std::vector<SmemRow>& rows) {
  ResultTable t({{"stride", ""},
                 {"time_ms", "%.4f"},
                 {"ns_per_access", "%.3f"},
                 {"clk_per_access", "%.2f"},
                 {"degree_model", ""},
                 {"degree_measured", "%.2f"},
                 {"verified", ""}});
  const double ghz = s.device().sm_clock_ghz > 0 ? s.device().sm_clock_ghz : kNaN;
  for (const SmemRow& r : rows)
    t.add_row({(long long)r.stride, r.ms, r.ns_per_access, r.ns_per_access * ghz,
               (long long)r.model_degree, r.measured_degree, r.verified});
  return t;
}

void add_smem_summary(SummaryTable& all, const std::vector<SmemRow>& rows) {
  for (const SmemRow& r : rows)
    all.add("smem-stride", "stride " + std::to_string(r.stride), r.ms,
            model::gb_per_s(r.shared_bytes, r.ms), kNaN, kNaN, "", "conflict degree",
            r.model_degree, r.measured_degree, r.verified);
}

// ---- l2-window ---------------------------------------------------------------------------------

struct L2Options {
  double stream_mib = 1024;
  std::vector<double> freq_mib{10, 20, 25, 30, 35, 40, 50, 60}; // around L2 / 2 and the set-aside
};

struct L2Row {
  double freq_mib = 0;
  std::string mode;
  double hit_ratio = 0;
  double ms = kNaN, none_ms = kNaN;
  double model_hit = kNaN, model_speedup = kNaN;
  double useful_bytes = 0;
  std::string verified = "-";
  double gbps() const { return model::gb_per_s(useful_bytes, ms); }
  double speedup() const { return none_ms / ms; }
};

int64_t mib_to_bytes(double mib, const char* option) {
  const int64_t bytes = static_cast<int64_t>(mib * kMiB) / 16 * 16;
  if (!(mib > 0) || bytes < 16)
    throw InputError(std::string(option) + ": sizes must be positive MiB (got " + fixed(mib, 3) +
                     ")");
  return bytes;
}

std::vector<L2Row> l2_rows(Session& s, const L2Options& o) {
  const int64_t stream_bytes = mib_to_bytes(o.stream_mib, "--stream-mib");
  std::vector<int64_t> freq_bytes;
  for (double f : o.freq_mib) {
    freq_bytes.push_back(mib_to_bytes(f, "--freq-mib"));
    if (freq_bytes.back() > stream_bytes)
      throw InputError("--freq-mib: " + fixed(f, 1) + " MiB is larger than the stream");
  }
  const model::DeviceModel& d = s.device();
  std::vector<L2Row> rows;
  for (size_t i = 0; i < freq_bytes.size(); ++i) {
    const int64_t f = freq_bytes[i];
    const model::L2WindowModel none = model::l2_window(stream_bytes, f, d.l2_bytes, 0, 0);
    const double fitted =
        d.persisting_l2_bytes > 0 ? std::min(1.0, double(d.persisting_l2_bytes) / f) : 0;
    const std::pair<const char*, double> modes[] = {
        {"none", 0.0}, {"hitRatio=1", 1.0}, {"hitRatio=fit", fitted}};
    for (const auto& [mode, ratio] : modes) {
      L2Row r;
      r.freq_mib = o.freq_mib[i];
      r.mode = mode;
      r.hit_ratio = ratio;
      r.useful_bytes = 3.0 * stream_bytes;
      if (ratio > 0 || r.mode == "none") {
        const model::L2WindowModel m = model::l2_window(
            stream_bytes, f, d.l2_bytes, ratio > 0 ? d.persisting_l2_bytes : 0, ratio);
        r.model_hit = m.freq_hit_fraction;
        r.model_speedup = none.dram_bytes / m.dram_bytes;
      }
      rows.push_back(r);
    }
  }
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    const auto runs = micro::run_l2_window(stream_bytes, freq_bytes, s.timing());
    for (size_t i = 0; i < runs.size() && i < rows.size(); ++i) {
      if (!runs[i].supported) {
        rows[i].verified = "n/a";
        continue;
      }
      rows[i].ms = runs[i].pass.time.median_ms;
      rows[i].hit_ratio = runs[i].hit_ratio;
      rows[i].verified = s.verified(runs[i].pass.check, "l2-window " + fixed(rows[i].freq_mib, 1) +
                                                            " MiB " + rows[i].mode);
    }
  }
#endif
  for (size_t i = 0; i < rows.size(); ++i) rows[i].none_ms = rows[i - i % 3].ms; // none comes first
  return rows;
}

ResultTable l2_table(const std::vector<L2Row>& rows) {
  ResultTable t({{"freq_MiB", "%.1f"},
                 {"mode", ""},
                 {"hit_ratio", "%.3f"},
                 {"time_ms", "%.4f"},
                 {"gbps", "%.1f"},
                 {"speedup", "%.3f"},
                 {"model_hit", "%.3f"},
                 {"model_speedup", "%.3f"},
                 {"verified", ""}});
  for (const L2Row& r : rows)
    t.add_row({r.freq_mib, r.mode, r.hit_ratio, r.ms, r.gbps(), r.speedup(), r.model_hit,
               r.model_speedup, r.verified});
  return t;
}

void add_l2_summary(SummaryTable& all, const std::vector<L2Row>& rows) {
  for (const L2Row& r : rows)
    all.add("l2-window", "freq " + fixed(r.freq_mib, 1) + " MiB " + r.mode, r.ms, r.gbps(), kNaN,
            kNaN, "", "speedup vs none", r.model_speedup, r.speedup(), r.verified);
}

// ---- the command line --------------------------------------------------------------------------

// Runs a subcommand's work; bad input exits with status 2, any other failure with 1, each after
// one line on stderr (CLI11 prints nothing more for a RuntimeError).
template <class Work>
void guarded(Work&& work) {
  try {
    work();
  } catch (const InputError& e) {
    std::cerr << "rtm micro: " << e.what() << "\n";
    throw CLI::RuntimeError(2);
  } catch (const std::exception& e) {
    std::cerr << "rtm micro: error: " << e.what() << "\n";
    throw CLI::RuntimeError(1);
  }
}

void add_common_options(CLI::App* sub, CommonOptions& c) {
  CLI::Option* csv = sub->add_flag("--csv", c.csv, "Print CSV (the same fields as the table)");
  CLI::Option* json = sub->add_flag("--json", c.json, "Print JSON (the same fields as the table)");
  csv->excludes(json);
  sub->add_option("--repeats", c.repeats, "Timed launches per case; the median is reported")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_flag("--model-only", c.model_only, "Print the model's predictions, run no kernel");
}

} // namespace

void register_micro(CLI::App& rtm) {
  CLI::App* micro = rtm.add_subcommand(
      "micro", "Microkernels: measured memory behaviour next to an analytic model (docs/micro.md)");
  micro->require_subcommand(1);
  auto common = std::make_shared<CommonOptions>();

  auto fma = std::make_shared<FmaOptions>();
  CLI::App* fma_cmd = micro->add_subcommand(
      "fma", "y[i] += x[i] * a[o] for o < OP, grid-stride: time, GFLOP/s, GB/s, modelled counters");
  auto* elements = fma_cmd->add_option("--elements", fma->elements, "Elements of x and of y")
                       ->check(CLI::PositiveNumber)
                       ->capture_default_str();
  fma_cmd->add_option("--bytes", fma->bytes, "x and y together instead (e.g. 8MiB: 1Mi elements)")
      ->transform(CLI::AsSizeValue(false))
      ->excludes(elements);
  fma_cmd->add_option("--blocks", fma->blocks, "Blocks (list; 0: fill the GPU)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  fma_cmd->add_option("--threads", fma->threads, "Threads per block (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  fma_cmd->add_option("--op", fma->ops, "FFMA per element, OP (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  add_common_options(fma_cmd, *common);
  fma_cmd->callback([common, fma]() {
    guarded([&]() {
      Session s(*common);
      const int64_t n = fma->bytes > 0 ? fma->bytes / 8 : fma->elements;
      if (n < 1) throw InputError("--bytes: need at least 8 bytes (one element of x and of y)");
      const auto cases = fma_cases(s, n, fma->blocks, fma->threads, fma->ops);
      s.describe();
      s.print(fma_table(cases));
      s.finish();
    });
  });

  auto copy = std::make_shared<CopyOptions>();
  CLI::App* copy_cmd = micro->add_subcommand(
      "copy", "Coalesced and strided copy: GB/s, % of peak and of cudaMemcpy, model vs measured");
  copy_cmd->add_option("--bytes", copy->bytes, "Size of the copy's source (and destination)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  copy_cmd
      ->add_option("--strided-bytes", copy->strided_bytes,
                   "Bytes the strided copy writes (it reads from stride x as wide a range)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  copy_cmd->add_option("--strides", copy->strides, "Strides in floats (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_common_options(copy_cmd, *common);
  copy_cmd->callback([common, copy]() {
    guarded([&]() {
      Session s(*common);
      const auto rows = copy_rows(s, *copy);
      s.describe();
      s.print(copy_table(s, rows));
      s.finish();
    });
  });

  auto transpose = std::make_shared<TransposeOptions>();
  CLI::App* transpose_cmd = micro->add_subcommand(
      "transpose", "Naive, tiled and padded-tile transpose: GB/s, % of copy, verified");
  transpose_cmd->add_option("--shapes", transpose->shapes, "Matrices ROWSxCOLS (list)")
      ->delimiter(',')
      ->capture_default_str();
  add_common_options(transpose_cmd, *common);
  transpose_cmd->callback([common, transpose]() {
    guarded([&]() {
      Session s(*common);
      const auto rows = transpose_rows(s, *transpose);
      s.describe();
      s.print(transpose_table(rows));
      s.finish();
    });
  });

  auto double3 = std::make_shared<Double3Options>();
  CLI::App* double3_cmd = micro->add_subcommand(
      "double3", "Add a constant to double3 (24-byte stride) and to the same bytes as doubles");
  double3_cmd->add_option("--elements", double3->elements, "double3 elements")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_common_options(double3_cmd, *common);
  double3_cmd->callback([common, double3]() {
    guarded([&]() {
      Session s(*common);
      const auto rows = double3_rows(s, *double3);
      s.describe();
      s.print(double3_table(rows));
      s.finish();
    });
  });

  auto smem = std::make_shared<SmemOptions>();
  CLI::App* smem_cmd = micro->add_subcommand(
      "smem-stride", "Shared-memory reads with a stride: time per access, conflict degree");
  smem_cmd->add_option("--strides", smem->strides, "Strides in 4-byte words, 1..32 (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  smem_cmd->add_option("--iterations", smem->iterations, "Passes over 32 loads per thread")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  add_common_options(smem_cmd, *common);
  smem_cmd->callback([common, smem]() {
    guarded([&]() {
      Session s(*common);
      const auto rows = smem_rows(s, *smem);
      s.describe();
      s.print(smem_table(s, rows));
      s.finish();
    });
  });

  auto l2 = std::make_shared<L2Options>();
  CLI::App* l2_cmd = micro->add_subcommand(
      "l2-window",
      "A reused buffer next to a streaming one, with and without an L2 persisting window");
  l2_cmd->add_option("--stream-mib", l2->stream_mib, "Streaming buffer (MiB)")
      ->capture_default_str();
  l2_cmd->add_option("--freq-mib", l2->freq_mib, "Reused buffer sizes (MiB, list)")
      ->delimiter(',')
      ->capture_default_str();
  add_common_options(l2_cmd, *common);
  l2_cmd->callback([common, l2]() {
    guarded([&]() {
      Session s(*common);
      const auto rows = l2_rows(s, *l2);
      s.describe();
      s.print(l2_table(rows));
      s.finish();
    });
  });

  CLI::App* all_cmd = micro->add_subcommand(
      "all", "Every experiment at its default size (under a minute on an H200), one table");
  add_common_options(all_cmd, *common);
  all_cmd->callback([common]() {
    guarded([&]() {
      Session s(*common);
      SummaryTable all;
      s.progress("copy");
      add_copy_summary(all, s, copy_rows(s, CopyOptions{}));
      s.progress("fma");
      const FmaOptions single_block;
      add_fma_summary(all, fma_cases(s, single_block.elements, single_block.blocks,
                                     single_block.threads, single_block.ops));
      // The whole GPU on 256 MiB: memory-bound at OP=1, limited by L1 (4 memory instructions per
      // FFMA) as OP grows.
      add_fma_summary(all, fma_cases(s, 32 * kMiB, {0}, {256}, {1, 16, 64}));
      s.progress("transpose");
      add_transpose_summary(all, transpose_rows(s, TransposeOptions{}));
      s.progress("double3");
      add_double3_summary(all, s, double3_rows(s, Double3Options{}));
      s.progress("smem-stride");
      add_smem_summary(all, smem_rows(s, SmemOptions{}));
      s.progress("l2-window");
      add_l2_summary(all, l2_rows(s, L2Options{}));
      s.describe();
      s.print(all.table());
      s.finish();
    });
  });
}

} // namespace rtm::app
