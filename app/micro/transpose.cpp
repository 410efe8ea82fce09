// `rtm micro transpose` (docs/micro.md, "transpose"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment transpose_experiment() {
  auto o = std::make_shared<TransposeOptions>();
  return {"transpose", "Naive, tiled and padded-tile transpose: GB/s, % of copy, verified",
          [o](CLI::App& cmd) {
            cmd.add_option("--shapes", o->shapes, "Matrices ROWSxCOLS (list)")
                ->delimiter(',')
                ->capture_default_str();
          },
          [o](Session& s) { return transpose_table(transpose_rows(s, *o)); },
          [](Session& s, SummaryTable& all) {
            add_transpose_summary(all, transpose_rows(s, TransposeOptions{}));
          }};
}

} // namespace rtm::app::micro_cmd
