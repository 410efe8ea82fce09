// `rtm micro fma` (docs/micro.md, "fma"): the model's figures, the measurement where there is a
// GPU, its table and its rows in `rtm micro all`.
#include <string>
#include <vector>

#include "app/micro/experiment.h"
#include "solvers/contracts/errors.h"

namespace rtm::app::micro_cmd {
namespace {

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

} // namespace

Experiment fma_experiment() {
  auto o = std::make_shared<FmaOptions>();
  return {"fma", "y[i] += x[i] * a[o] for o < OP, grid-stride: time, GFLOP/s, GB/s, modelled counters",
          [o](CLI::App& cmd) {
            CLI::Option* elements = cmd.add_option("--elements", o->elements, "Elements of x and of y")
                                        ->check(CLI::PositiveNumber)
                                        ->capture_default_str();
            cmd.add_option("--bytes", o->bytes, "x and y together instead (e.g. 8MiB: 1Mi elements)")
                ->transform(CLI::AsSizeValue(false))
                ->excludes(elements);
            cmd.add_option("--blocks", o->blocks, "Blocks (list; 0: fill the GPU)")
                ->delimiter(',')
                ->check(CLI::Range(0, 1 << 30))
                ->capture_default_str();
            cmd.add_option("--threads", o->threads, "Threads per block (list)")
                ->delimiter(',')
                ->check(CLI::Range(1, 1024))
                ->capture_default_str();
            cmd.add_option("--op", o->ops, "FFMA per element, OP (list)")
                ->delimiter(',')
                ->check(CLI::Range(1, 1 << 20))
                ->capture_default_str();
          },
          [o](Session& s) {
            const int64_t n = o->bytes > 0 ? o->bytes / 8 : o->elements;
            if (n < 1) throw InputError("--bytes: need at least 8 bytes (one element of x and of y)");
            return fma_table(fma_cases(s, n, o->blocks, o->threads, o->ops));
          },
          [](Session& s, SummaryTable& all) {
            const FmaOptions single_block;
            add_fma_summary(all, fma_cases(s, single_block.elements, single_block.blocks,
                                           single_block.threads, single_block.ops));
            // The whole GPU on 256 MiB: memory-bound at OP=1, limited by L1 (4 memory
            // instructions per FFMA) as OP grows.
            add_fma_summary(all, fma_cases(s, 32 * kMiB, {0}, {256}, {1, 16, 64}));
          }};
}

} // namespace rtm::app::micro_cmd
