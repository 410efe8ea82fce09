// `rtm micro l2-window` (docs/micro.md, "l2-window"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment l2_experiment() {
  auto o = std::make_shared<L2Options>();
  return {"l2-window",
          "A reused buffer next to a streaming one, with and without an L2 persisting window",
          [o](CLI::App& cmd) {
            cmd.add_option("--stream-mib", o->stream_mib, "Streaming buffer (MiB)")->capture_default_str();
            cmd.add_option("--freq-mib", o->freq_mib, "Reused buffer sizes (MiB, list)")
                ->delimiter(',')
                ->capture_default_str();
          },
          [o](Session& s) { return l2_table(l2_rows(s, *o)); },
          [](Session& s, SummaryTable& all) { add_l2_summary(all, l2_rows(s, L2Options{})); }};
}

} // namespace rtm::app::micro_cmd
