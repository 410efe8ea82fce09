// What every `rtm micro` experiment runs in (docs/micro.md): the device (or the model's assumed
// one), the output format, the timing options, the verification of results, and the summary table
// of `rtm micro all`.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/options.h"
#include "io/result_table.h"
#include "kernels/micro/memory_model.h"
#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/util/device_info.h"
#include "kernels/micro/micro.h"
#endif

namespace rtm::app::micro_cmd {

namespace model = ::rtm::micro::model;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr int64_t kMiB = int64_t(1) << 20;

inline std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// ---- The run: device, output format, timing, verification ---------------------------------------

struct CommonOptions {
  FormatFlags format; // --csv / --json, as every rtm command
  bool model_only = false;
  int repeats = 20;
};

class Session {
public:
  explicit Session(const CommonOptions& options) : options_(options) {
    device_ = model::assumed_h200();
#ifdef RTM_HAVE_CUDA
    if (options.model_only) {
      why_model_only_ = "--model-only";
    } else if (const cuda::DeviceInfo d = cuda::query_device(0); !d.available) {
      why_model_only_ = d.why_unavailable;
    } else {
      device_ = micro::device_model(d);
      peak_gb_per_s_ = d.theoretical_bandwidth_gbs > 0 ? d.theoretical_bandwidth_gbs : kNaN;
      persisting_note_ =
          d.max_persisting_l2_bytes > 0
              ? fixed(double(d.max_persisting_l2_bytes) / kMiB, 1) + " MiB persisting L2"
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
  OutputFormat format() const { return options_.format.format(); }

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

inline double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNaN; }

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

} // namespace rtm::app::micro_cmd
