// `rtm micro double3` (docs/micro.md, "double3"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <string>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment double3_experiment() {
  auto o = std::make_shared<Double3Options>();
  return {"double3", "Add a constant to double3 (24-byte stride) and to the same bytes as doubles",
          [o](CLI::App& cmd) {
            cmd.add_option("--elements", o->elements, "double3 elements")
                ->check(CLI::PositiveNumber)
                ->capture_default_str();
          },
          [o](Session& s) { return double3_table(double3_rows(s, *o)); },
          [](Session& s, SummaryTable& all) {
            add_double3_summary(all, s, double3_rows(s, Double3Options{}));
          }};
}

} // namespace rtm::app::micro_cmd
