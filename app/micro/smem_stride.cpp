// `rtm micro smem-stride` (docs/micro.md, "smem-stride"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <numeric>
#include <string>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment smem_experiment() {
  auto o = std::make_shared<SmemOptions>();
  return {"smem-stride", "Shared-memory reads with a stride: time per access, conflict degree",
          [o](CLI::App& cmd) {
            cmd.add_option("--strides", o->strides, "Strides in 4-byte words, 1..32 (list)")
                ->delimiter(',')
                ->check(CLI::Range(1, 32));
            cmd.add_option("--iterations", o->iterations, "Passes over 32 loads per thread")
                ->check(CLI::Range(1, 1 << 24))
                ->capture_default_str();
          },
          [o](Session& s) { return smem_table(s, smem_rows(s, *o)); },
          [](Session& s, SummaryTable& all) { add_smem_summary(all, smem_rows(s, SmemOptions{})); }};
}

} // namespace rtm::app::micro_cmd
