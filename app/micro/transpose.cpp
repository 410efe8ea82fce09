// `rtm micro transpose` (docs/micro.md, "transpose"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <algorithm>
#include <exception>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

struct TransposeOptions {
  // Two beyond L2, and the transpose notes' size (16 MiB a matrix: in and out fit an H100's L2).
  std::vector<std::string> shapes{"8192x8192", "4096x16384", "2048x2048"};
  std::vector<std::string> kinds; // empty: all
};

std::vector<model::TransposeKind> parse_kinds(const std::vector<std::string>& names) {
  if (names.empty())
    return {std::begin(model::kTransposeKinds), std::end(model::kTransposeKinds)};
  std::vector<model::TransposeKind> kinds;
  for (const std::string& name : names) {
    const auto* found = std::find_if(
        std::begin(model::kTransposeKinds), std::end(model::kTransposeKinds),
        [&](model::TransposeKind k) { return name == model::transpose_name(k); });
    if (found == std::end(model::kTransposeKinds)) {
      std::string known;
      for (model::TransposeKind k : model::kTransposeKinds)
        known += std::string(known.empty() ? "" : ", ") + model::transpose_name(k);
      throw InputError("--kinds: unknown kernel '" + name + "' (expected some of " + known + ")");
    }
    kinds.push_back(*found);
  }
  return kinds;
}

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
  double ms = kNaN, copy_ms = kNaN, copy1_ms = kNaN, naive_ms = kNaN;
  double ld_sectors = kNaN, st_sectors = kNaN, smem_degree = kNaN;
  std::string quantity = ""; // the model figure `all` shows for this kernel
  double quantity_value = kNaN;
  std::string verified = "-";
  double gbps() const { return model::gb_per_s(bytes, ms); }
};

std::vector<TransposeRow> transpose_rows([[maybe_unused]] Session& s, const TransposeOptions& o) {
  const std::vector<model::TransposeKind> wanted = parse_kinds(o.kinds);
  std::vector<TransposeRow> rows;
  for (const std::string& shape : o.shapes) {
    const auto [r, c] = parse_shape(shape);
    if ((r + model::kTransposeSmallTile - 1) / model::kTransposeSmallTile > 65535)
      throw InputError("--shapes: at most 2097120 rows (65535 tiles of 32), got '" + shape + "'");
    // pad32-f64 reads pairs of floats as one element: only for an even number of columns.
    std::vector<model::TransposeKind> kinds;
    for (auto kind : wanted)
      if (kind != model::TransposeKind::padded32_f64 || c % 2 == 0) kinds.push_back(kind);
    TransposeRow copy{shape, "copy", model::copy_bytes(r * c)};
    copy.ld_sectors = copy.st_sectors =
        double(model::sectors_touched(model::lane_addresses(0, 16), 16));
    TransposeRow copy1{shape, "copy1", model::copy_bytes(r * c)};
    copy1.ld_sectors = copy1.st_sectors =
        double(model::sectors_touched(model::lane_addresses(0, 4), 4));
    std::vector<TransposeRow> group{copy, copy1};
    for (auto kind : kinds) {
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
      const micro::TransposeRun run = micro::run_transpose(r, c, s.timing(), kinds);
      group[0].ms = run.copy.median_ms;
      group[1].ms = run.copy_scalar.time.median_ms;
      group[1].verified = s.verified(run.copy_scalar.check, "copy, one float per thread " + shape);
      for (size_t i = 0; i < kinds.size(); ++i) {
        const micro::TimedKernel& k = run.kernel(kinds[i]);
        TransposeRow& row = group[i + 2];
        row.ms = k.time.median_ms;
        row.verified = s.verified(k.check, "transpose " + row.kernel + " " + shape);
      }
    }
#endif
    for (TransposeRow& row : group) {
      row.copy_ms = group[0].ms;
      row.copy1_ms = group[1].ms;
      for (const TransposeRow& other : group)
        if (other.kernel == "naive") row.naive_ms = other.ms;
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
                 {"pct_copy1", "%.1f"},
                 {"x_naive", "%.2f"},
                 {"ld_sect_req", "%.0f"},
                 {"st_sect_req", "%.0f"},
                 {"smem_degree", "%.0f"},
                 {"verified", ""}});
  for (const TransposeRow& r : rows)
    t.add_row({r.shape, r.kernel, r.ms, r.gbps(), pct(r.copy_ms, r.ms), pct(r.copy1_ms, r.ms),
               r.naive_ms / r.ms, r.ld_sectors, r.st_sectors, r.smem_degree, r.verified});
  return t;
}

void add_transpose_summary(SummaryTable& all, const std::vector<TransposeRow>& rows) {
  for (const TransposeRow& r : rows) {
    const bool reference = r.kernel == "copy" || r.kernel == "copy1";
    all.add("transpose", r.kernel + " " + r.shape, r.ms, r.gbps(), kNaN,
            reference ? kNaN : pct(r.copy_ms, r.ms), reference ? "" : "copy", r.quantity,
            r.quantity_value, kNaN, r.verified);
  }
}

} // namespace

Experiment transpose_experiment() {
  auto o = std::make_shared<TransposeOptions>();
  return {"transpose", "Naive, tiled and padded-tile transposes: GB/s, % of copy, verified",
          [o](CLI::App& cmd) {
            cmd.add_option("--shapes", o->shapes, "Matrices ROWSxCOLS (list)")
                ->delimiter(',')
                ->capture_default_str();
            cmd.add_option("--kinds", o->kinds,
                           "Kernels (list; default all): naive, tiled, tiled+pad, pad32, pad32-f64")
                ->delimiter(',');
          },
          [o](Session& s) { return transpose_table(transpose_rows(s, *o)); },
          [](Session& s, SummaryTable& all) {
            add_transpose_summary(all, transpose_rows(s, TransposeOptions{}));
          }};
}

} // namespace rtm::app::micro_cmd
