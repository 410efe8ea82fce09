// `rtm micro l2-window` (docs/micro.md, "l2-window"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

struct L2Options {
  double stream_mib = 1024;
  std::vector<double> freq_mib{10, 20, 25, 30, 35, 40, 50, 60}; // the talk's 10-60 MB sweep
  std::vector<std::string> modes; // empty: all
  double set_aside_share = 0.75;  // the talk's 30 MB of an A100's 40 MB
  std::string miss_prop = "streaming";
  std::string access = "read-write";
};

struct L2Row {
  double freq_mib = 0;
  model::WindowMode mode = model::WindowMode::none;
  double set_aside_mib = 0;
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

std::vector<model::WindowMode> parse_modes(const std::vector<std::string>& names) {
  std::vector<model::WindowMode> modes;
  if (names.empty()) return {std::begin(model::kWindowModes), std::end(model::kWindowModes)};
  for (const std::string& name : names) {
    const auto* found = std::find_if(
        std::begin(model::kWindowModes), std::end(model::kWindowModes),
        [&](model::WindowMode m) { return name == model::window_mode_name(m); });
    if (found == std::end(model::kWindowModes)) {
      std::string known;
      for (model::WindowMode m : model::kWindowModes)
        known += std::string(known.empty() ? "" : ", ") + model::window_mode_name(m);
      throw InputError("--modes: unknown mode '" + name + "' (expected some of " + known + ")");
    }
    modes.push_back(*found);
  }
  return modes;
}

std::vector<L2Row> l2_rows(Session& s, const L2Options& o) {
  const int64_t stream_bytes = mib_to_bytes(o.stream_mib, "--stream-mib");
  std::vector<int64_t> freq_bytes;
  for (double f : o.freq_mib) {
    freq_bytes.push_back(mib_to_bytes(f, "--freq-mib"));
    if (freq_bytes.back() > stream_bytes)
      throw InputError("--freq-mib: " + fixed(f, 1) + " MiB is larger than the stream");
    if ((stream_bytes + freq_bytes.back() - 1) / freq_bytes.back() > 65535)
      throw InputError("--freq-mib: " + fixed(f, 3) +
                       " MiB is too small: the stream may be at most 65535 times the frequent "
                       "buffer");
  }
  if (!(o.set_aside_share >= 0 && o.set_aside_share <= 1))
    throw InputError("--set-aside-share: expected a share of L2 in [0, 1], got " +
                     fixed(o.set_aside_share, 3));
  if (o.miss_prop != "streaming" && o.miss_prop != "normal")
    throw InputError("--miss-prop: expected streaming or normal, got '" + o.miss_prop + "'");
  if (o.access != "read-write" && o.access != "read" && o.access != "write")
    throw InputError("--access: expected read-write, read or write, got '" + o.access + "'");
  const bool read_write = o.access == "read-write";
  const std::vector<model::WindowMode> modes = parse_modes(o.modes);
  const model::DeviceModel& d = s.device();
  // As micro::l2_set_aside_bytes does on the device: the share of L2, at most the device's most.
  const int64_t set_aside = std::min(static_cast<int64_t>(o.set_aside_share * double(d.l2_bytes)),
                                     d.persisting_l2_bytes);
  std::vector<L2Row> rows;
  for (size_t i = 0; i < freq_bytes.size(); ++i) {
    const int64_t f = freq_bytes[i];
    const model::L2WindowModel none = model::l2_window(stream_bytes, f, d.l2_bytes, 0, 0);
    for (model::WindowMode mode : modes) {
      const model::WindowSetting w = model::window_setting(mode, f, set_aside);
      L2Row r;
      r.freq_mib = o.freq_mib[i];
      r.mode = mode;
      r.set_aside_mib = double(w.set_aside_bytes) / kMiB;
      r.hit_ratio = w.window ? w.hit_ratio : 0;
      // Both buffers read and written: 16 bytes per stream element; read or write alone: 8.
      r.useful_bytes = (read_write ? 4.0 : 2.0) * double(stream_bytes);
      const double ratio = w.persisting_ratio();
      const model::L2WindowModel m =
          model::l2_window(stream_bytes, f, d.l2_bytes, ratio > 0 ? w.set_aside_bytes : 0, ratio);
      if (read_write) { // the model describes the talk's read-and-write pass only
        r.model_hit = m.freq_hit_fraction;
        r.model_speedup = none.dram_bytes / m.dram_bytes;
      }
      rows.push_back(r);
    }
  }
#ifdef RTM_HAVE_CUDA
  if (s.measuring()) {
    micro::L2WindowConfig config;
    config.stream_bytes = stream_bytes;
    config.freq_bytes = freq_bytes;
    config.modes = modes;
    config.set_aside_share = o.set_aside_share;
    config.miss_normal = o.miss_prop == "normal";
    config.access = o.access == "read"    ? micro::L2Access::read
                    : o.access == "write" ? micro::L2Access::write
                                          : micro::L2Access::read_write;
    const auto runs = micro::run_l2_window(config, s.timing());
    for (size_t i = 0; i < runs.size() && i < rows.size(); ++i) {
      if (!runs[i].supported) {
        rows[i].verified = "n/a";
        continue;
      }
      rows[i].ms = runs[i].pass.time.median_ms;
      rows[i].set_aside_mib = double(runs[i].setting.set_aside_bytes) / kMiB;
      rows[i].hit_ratio = runs[i].setting.window ? runs[i].setting.hit_ratio : 0;
      rows[i].verified =
          s.verified(runs[i].pass.check, "l2-window " + fixed(rows[i].freq_mib, 1) + " MiB " +
                                             model::window_mode_name(rows[i].mode) + " " +
                                             o.access);
    }
  }
#endif
  // Speedup over the run without window of the same size (when it was among the modes).
  for (L2Row& r : rows)
    for (const L2Row& n : rows)
      if (n.freq_mib == r.freq_mib && n.mode == model::WindowMode::none) r.none_ms = n.ms;
  return rows;
}

ResultTable l2_table(const std::vector<L2Row>& rows) {
  ResultTable t({{"freq_MiB", "%.1f"},
                 {"mode", ""},
                 {"set_aside_MiB", "%.1f"},
                 {"hit_ratio", "%.3f"},
                 {"time_ms", "%.4f"},
                 {"gbps", "%.1f"},
                 {"speedup", "%.3f"},
                 {"model_hit", "%.3f"},
                 {"model_speedup", "%.3f"},
                 {"verified", ""}});
  for (const L2Row& r : rows)
    t.add_row({r.freq_mib, std::string(model::window_mode_name(r.mode)), r.set_aside_mib,
               r.hit_ratio, r.ms, r.gbps(), r.speedup(), r.model_hit, r.model_speedup,
               r.verified});
  return t;
}

void add_l2_summary(SummaryTable& all, const std::vector<L2Row>& rows) {
  for (const L2Row& r : rows)
    all.add("l2-window", "freq " + fixed(r.freq_mib, 1) + " MiB " + model::window_mode_name(r.mode),
            r.ms, r.gbps(), kNaN, kNaN, "", "speedup vs none", r.model_speedup, r.speedup(),
            r.verified);
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
            cmd.add_option("--modes", o->modes,
                           "Settings to compare (list; default all): none, carveout, elsewhere, "
                           "persist, normal, half, fit (docs/micro.md)")
                ->delimiter(',');
            cmd.add_option("--set-aside-share", o->set_aside_share,
                           "Persisting L2 set aside, as a share of L2 (at most the device's most)")
                ->capture_default_str();
            cmd.add_option("--miss-prop", o->miss_prop,
                           "missProp of the window: streaming or normal")
                ->capture_default_str();
            cmd.add_option("--access", o->access,
                           "What a pass does to both buffers: read-write (the talk's), read (loads "
                           "only) or write (stores only); gbps counts 16 or 8 bytes per element")
                ->capture_default_str();
          },
          [o](Session& s) { return l2_table(l2_rows(s, *o)); },
          [](Session& s, SummaryTable& all) {
            L2Options defaults;
            defaults.modes = {"none", "carveout", "persist", "fit"};
            add_l2_summary(all, l2_rows(s, defaults));
          }};
}

} // namespace rtm::app::micro_cmd
