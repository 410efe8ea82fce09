// `rtm micro copy` (docs/micro.md, "copy"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <string>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment copy_experiment() {
  auto o = std::make_shared<CopyOptions>();
  return {"copy", "Coalesced and strided copy: GB/s, % of peak and of cudaMemcpy, model vs measured",
          [o](CLI::App& cmd) {
            cmd.add_option("--bytes", o->bytes, "Size of the copy's source (and destination)")
                ->transform(CLI::AsSizeValue(false))
                ->capture_default_str();
            cmd.add_option("--strided-bytes", o->strided_bytes,
                           "Bytes the strided copy writes (it reads from stride x as wide a range)")
                ->transform(CLI::AsSizeValue(false))
                ->capture_default_str();
            cmd.add_option("--strides", o->strides, "Strides in floats (list)")
                ->delimiter(',')
                ->check(CLI::Range(1, 1024))
                ->capture_default_str();
          },
          [o](Session& s) { return copy_table(s, copy_rows(s, *o)); },
          [](Session& s, SummaryTable& all) { add_copy_summary(all, s, copy_rows(s, CopyOptions{})); }};
}

} // namespace rtm::app::micro_cmd
