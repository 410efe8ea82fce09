// `rtm bench`: steps the wavefield with one, several or all CUDA variants and prints how fast each
// runs against the GPU's streaming limit measured in the same run (docs/variants.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <mpi.h>
#include <omp.h>

#include "app/bench_tti.h"
#include "app/commands.h"
#include "app/options.h"
#include "solvers/contracts/errors.h"
#include "io/figure.h"
#include "io/host_memory.h"
#include "io/result_table.h"
#include "solvers/contracts/median.h"
#include "solvers/drivers/bench_workloads.h"
#include "solvers/drivers/cpu_bench.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/scaling_bench.h"
#include "solvers/drivers/shot_parallel.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/bench.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/error_vs_steps.h"
#endif

namespace rtm::app {
namespace {

struct BenchOptions {
  std::vector<std::string> variants{"all"};
  std::vector<int> grid{512, 512, 512};
  int steps = 100;
  int repeats = 5;
  std::string workload = "both";
  int point_steps = 0; // 0: until the wavefront reaches the nearest face
  bool compressible = false;
  bool l2_persist = false;
  int cpml_width = 0; // random workload also with C-PML layers of this many cells (0: not)
  FormatFlags format;
  std::string per_step_csv;
  std::string plot;
  // --error-vs-steps: the point workload's error against float32, sampled every error_every steps
  std::string error_vs_steps;
  int error_every = 10;
  std::string error_plot;
  std::string error_plot_from; // replot such a CSV, no GPU needed
  int device = 0;
  bool list = false;
  // --scaling: one grid over the launcher's ranks (solvers/drivers/scaling_bench.h)
  std::string scaling;
  std::vector<int> ranks;
  std::string backend = "auto";
  std::string halo_transport = "auto";
  std::string physics = "iso"; // tti: the TTI kernels (app/bench_tti.h)
};

// The checks of --grid, --steps and --repeats every timed benchmark makes.
void check_grid_steps_repeats(const std::vector<int>& grid, int steps, int repeats) {
  if (grid.size() != 3 || grid[0] < 1 || grid[1] < 1 || grid[2] < 1)
    throw InputError("--grid: expected three positive sizes NX,NY,NZ");
  if (steps < 1) throw InputError("--steps: expected a positive number of steps");
  if (repeats < 1) throw InputError("--repeats: expected a positive number of repeats");
}

// "NXxNYxNZ", as the context lines, the PERFORMANCE lines and the plot titles name the grid.
std::string grid_text(const std::vector<int>& grid) {
  return std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]);
}

// Machine-readable output owns stdout; context lines go to stderr then.
std::ostream& context_stream(OutputFormat format) {
  return format == OutputFormat::text ? std::cout : std::cerr;
}

// `rtm bench --scaling weak|strong` under the MPI launcher: one row per rank count.
void run_scaling(const BenchOptions& o) {
  if (o.scaling != "weak" && o.scaling != "strong")
    throw InputError("--scaling: expected weak or strong, got '" + o.scaling + "'");
  // A plain `rtm` does not start MPI (kernels/mpi/mpi_context.h); the benchmark needs it even on one
  // rank, so it starts it itself when nobody has.
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  {
    const ParallelContext parallel(1);
    ScalingOptions s;
    s.weak = o.scaling == "weak";
    s.nx = o.grid[0];
    s.ny = o.grid[1];
    s.nz = o.grid[2];
    s.steps = o.steps;
    s.repeats = o.repeats;
    s.rank_counts = o.ranks;
    s.backend.backend = o.backend;
    s.backend.halo_transport = o.halo_transport;
    s.backend.compressible = o.compressible;
    s.backend.l2_persist = o.l2_persist;
    if (o.variants.size() == 1 && o.variants[0] != "all") s.backend.variant = o.variants[0];
    // The backend, and one GPU per rank of a node, by the rule every parallel run follows.
    std::ostringstream quiet;
    place_on_device(s.backend, parallel, ParallelOptions{}, parallel.is_root() ? std::cerr : quiet);
    const std::vector<ScalingRow> rows = run_scaling_bench(s, MPI_COMM_WORLD, std::cerr);
    if (parallel.is_root()) {
      if (o.format.format() == OutputFormat::text)
        std::cout << (s.weak ? "weak" : "strong") << " scaling, " << (s.weak ? "per rank " : "grid ")
                  << s.nx << "x" << s.ny << "x" << s.nz << ", median of " << s.repeats << " x "
                  << s.steps << " steps\n";
      print_table(std::cout, scaling_table(rows), o.format.format());
    }
  } // the context's communicators are freed before MPI ends
  if (!initialised) MPI_Finalize();
}

// The CPU step's ideal traffic: p[n], p[n-1] and v2dt2 read, p[n+1] written, 4 bytes each.
constexpr double kCpuStepBytesPerCell = 16;

// `rtm bench --backend cpu`: the CPU step against the triad bandwidth of the same cores, measured
// in the same run (solvers/drivers/cpu_bench.h, docs/variants.md "The CPU backend"). `grid_given` and
// `steps_given`: whether the user chose them (the GPU defaults would take minutes on a CPU).
void run_cpu_bench(const BenchOptions& o, bool grid_given, bool steps_given, bool repeats_given) {
  const std::vector<int> grid = grid_given ? o.grid : std::vector<int>{256, 256, 256};
  const int steps = steps_given ? o.steps : 10;
  const int repeats = repeats_given ? o.repeats : 5;
  check_grid_steps_repeats(grid, steps, repeats);
  if (o.workload != "random" && o.workload != "both")
    throw InputError("--workload: the CPU bench has the random workload only, got '" + o.workload + "'");
  if (o.cpml_width != 0)
    throw InputError("--cpml-width: the CPU bench times the undamped step only (the C-PML run is the "
                     "GPU bench's)");
  // The baseline instruction set first: the speed-up baseline and the reference of the comparison.
  std::vector<CpuStepIsa> isas;
  for (const std::string& v : o.variants) {
    const bool all = v == "all";
    if (!all && v != "baseline" && v != "avx2")
      throw InputError("--variant: with --backend cpu, expected all, baseline or avx2, got '" + v + "'");
    for (const CpuStepIsa isa : {CpuStepIsa::baseline, CpuStepIsa::avx2}) {
      if (!all && v != cpu_step_isa_name(isa)) continue;
      if (!cpu_step_isa_available(isa)) {
        if (all) continue;
        throw InputError("--variant " + v + ": this CPU does not have it");
      }
      if (std::find(isas.begin(), isas.end(), isa) == isas.end()) isas.push_back(isa);
    }
  }
  std::sort(isas.begin(), isas.end());
  const int threads = omp_get_max_threads();
  const int64_t cells = int64_t(grid[0]) * grid[1] * grid[2];
  // Refused before anything is allocated when it cannot fit: the step's six padded float32 grids
  // (the model term, two starting fields, the two fields stepped, the first kernel's result), or
  // the triad's three arrays before them, whichever is more (solvers/drivers/cpu_bench.cpp).
  {
    const uint64_t padded = uint64_t(make_layout(grid[0], grid[1], grid[2]).size);
    const uint64_t need =
        std::max(6 * padded, 3 * uint64_t(cpu_triad_elements(cells))) * sizeof(float);
    const uint64_t available = host_available_bytes();
    if (available > 0 && double(need) > 0.95 * double(available))
      throw InputError("rtm bench --backend cpu --grid " + grid_text(grid) + ": the benchmark needs " +
                       format_bytes(need) + " of host memory (six padded float32 grids of " +
                       std::to_string(padded) + " values) but " + format_bytes(available) +
                       " are available (" + host_available_source() +
                       "; a run may use 95% of it). To fit: a smaller --grid");
  }
  const std::string grid_name = grid_text(grid);
  const OutputFormat format = o.format.format();
  std::ostream& context = context_stream(format);
  const std::string cpu = cpu_model_name();
  context << "CPU: " << cpu << ", " << threads << " OpenMP thread(s) (OMP_NUM_THREADS)\n";
  context << "grid " << grid_name << ", random workload " << repeats << " x " << steps << " steps\n";

  const CpuTriad triad = measure_cpu_triad(cpu_triad_elements(cells), std::max(repeats, 10));
  const double limit_gcells = triad.gbs / kCpuStepBytesPerCell; // docs/variants.md
  char line[512];
  std::snprintf(line, sizeof line,
                "triad a = b + s c over 3 x %.0f MiB (STREAM convention, 12 B/element): %.1f GB/s; "
                "at the step's %.0f B/cell: %.2f Gcells/s\n",
                double(triad.elements) * 4.0 / 1048576.0, triad.gbs, kCpuStepBytesPerCell, limit_gcells);
  context << line;

  ResultTable table({{"workload"}, {"kernel"}, {"Gcells/s", "%.3f"}, {"GB/s", "%.1f"},
                     {"of_triad", "%.3f"}, {"speedup_vs_baseline", "%.2f"},
                     {"maxdiff_vs_first", "%.1e"}, {"ms/step", "%.3f"}});
  table.add_row({std::string("stream"), std::string("triad"), limit_gcells, triad.gbs, 1.0,
                 std::nan(""), std::nan(""), std::nan("")});
  const std::vector<CpuStepRun> runs =
      run_cpu_step_bench(grid[0], grid[1], grid[2], steps, repeats, 2, isas, std::cerr);
  double reference_ms = std::nan("");
  for (const CpuStepRun& r : runs)
    if (r.isa == CpuStepIsa::baseline) reference_ms = r.ms_per_step_median;
  double best_gcells = 0;
  std::string best_kernel;
  for (const CpuStepRun& r : runs) {
    const double gcells = double(cells) / (r.ms_per_step_median * 1e-3) / 1e9;
    const std::string kernel = std::string("step_") + cpu_step_isa_name(r.isa);
    const double gbs = gcells * kCpuStepBytesPerCell;
    table.add_row({std::string("random"), kernel, gcells, gbs, gbs / triad.gbs,
                   reference_ms / r.ms_per_step_median, double(r.max_abs_diff), r.ms_per_step_median});
    if (gcells > best_gcells) {
      best_gcells = gcells;
      best_kernel = kernel;
    }
  }
  print_table(std::cout, table, format);
  std::snprintf(line, sizeof line,
                "PERFORMANCE rtm-bench-cpu cpu=\"%s\" threads=%d grid=%s triad_gbs=%.2f "
                "limit_gcells=%.3f best=%s gcells=%.3f of_triad=%.3f\n",
                cpu.c_str(), threads, grid_name.c_str(), triad.gbs, limit_gcells, best_kernel.c_str(),
                best_gcells, best_gcells * kCpuStepBytesPerCell / triad.gbs);
  (format == OutputFormat::text ? std::cout : std::cerr) << line;
}

// log10 of each variant's error against step (points where it is 0 or NaN left out).
void write_error_plot(const std::string& path, const std::string& title,
                      const std::vector<std::string>& variants, const std::vector<int>& steps,
                      const std::vector<std::vector<double>>& error) {
  std::vector<PlotSeries> series;
  for (size_t v = 0; v < variants.size(); ++v) {
    PlotSeries s;
    s.label = variants[v];
    for (size_t n = 0; n < steps.size(); ++n) {
      if (!(error[v][n] > 0)) continue;
      s.x.push_back(steps[n]);
      s.y.push_back(std::log10(error[v][n]));
    }
    series.push_back(std::move(s));
  }
  write_line_plot(path, title, "step", "log10 relative L2 error", series);
}

// `rtm bench --error-plot OUT.png --error-plot-from FILE.csv`: the plot of a CSV that
// --error-vs-steps wrote (on the GPU machine, whose build has no Cairo), on any build with Cairo.
void replot_error_vs_steps(const std::string& csv, const std::string& png) {
  if (png.empty()) throw InputError("--error-plot-from " + csv + ": give the PNG to write with --error-plot");
  if (!figures_supported())
    throw std::runtime_error("--error-plot: no plot: " + no_figure_support_message());
  std::ifstream in(csv);
  if (!in) throw InputError("--error-plot-from: cannot read '" + csv + "'");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream cells(line); std::getline(cells, line, ',');) header.push_back(line);
  if (header.size() < 2 || header[0] != "step")
    throw InputError("--error-plot-from " + csv + ": expected a header step,<variant>,... as "
                     "--error-vs-steps writes it");
  const std::vector<std::string> variants(header.begin() + 1, header.end());
  std::vector<int> steps;
  std::vector<std::vector<double>> error(variants.size());
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    for (std::stringstream fields(line); std::getline(fields, line, ',');) cells.push_back(line);
    if (cells.size() != header.size())
      throw InputError("--error-plot-from " + csv + ": line " + std::to_string(row) + " has " +
                       std::to_string(cells.size()) + " fields, the header " +
                       std::to_string(header.size()));
    try {
      steps.push_back(std::stoi(cells[0]));
      for (size_t v = 0; v < variants.size(); ++v) error[v].push_back(std::stod(cells[v + 1]));
    } catch (const std::logic_error&) {
      throw InputError("--error-plot-from " + csv + ": line " + std::to_string(row) +
                       ": expected numbers");
    }
  }
  if (steps.empty()) throw InputError("--error-plot-from " + csv + ": no rows");
  write_error_plot(png, "error against float32, point source (" + csv + ")", variants, steps, error);
  std::cout << "error plot written to " << png << "\n";
}

#ifdef RTM_HAVE_CUDA

// The one variant lookup (cuda::find_variant), its refusal as bad input of --variant.
cuda::VariantSelection find_variant(const std::string& name) {
  try {
    return cuda::find_variant(name, {"all"});
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--variant: ") + e.what());
  }
}

// The speed-up baseline and the error reference: the table's baseline kernel.
const std::string& baseline_name() {
  const cuda::VariantInfo* baseline = cuda::variant_with_role(cuda::VariantRole::baseline);
  if (!baseline) throw std::logic_error("the variant table has no baseline kernel");
  return baseline->name;
}

// The point workload's length: --point-steps, or until the wavefront reaches the nearest face.
int point_steps(const BenchOptions& o) {
  return o.point_steps > 0 ? o.point_steps : default_point_steps(o.grid[0], o.grid[1], o.grid[2]);
}

// The memory options and device every variant of the run gets.
cuda::BenchConfig bench_config(const BenchOptions& o) {
  cuda::BenchConfig config;
  config.memory = {o.compressible, o.l2_persist};
  config.device = o.device;
  return config;
}

// Median over steps [begin, end) of the run.
double median_range(const std::vector<double>& v, size_t begin, size_t end) {
  end = std::min(end, v.size());
  if (begin >= end) return std::nan("");
  return median(std::vector<double>(v.begin() + long(begin), v.begin() + long(end)));
}

// The variants to run (every kernel, then every preset, for "all"), baseline first (it is the
// reference every error is measured against).
std::vector<std::string> resolve_variants(const std::vector<std::string>& requested) {
  std::vector<std::string> chosen;
  for (const std::string& name : requested) {
    if (name == "all") {
      chosen = cuda::variant_names();
      break;
    }
    find_variant(name); // refuses an unknown name
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.push_back(name);
  }
  const std::string& baseline = baseline_name();
  chosen.erase(std::remove(chosen.begin(), chosen.end(), baseline), chosen.end());
  chosen.insert(chosen.begin(), baseline);
  return chosen;
}

// The variants of `chosen` that run on `device`. Those it is too old for are refused by name when
// the user named them, and left out with a note when they came with "all".
std::vector<std::string> runnable_variants(const std::vector<std::string>& chosen,
                                           const std::vector<std::string>& requested,
                                           const cuda::DeviceInfo& device) {
  const bool all = std::find(requested.begin(), requested.end(), "all") != requested.end();
  std::vector<std::string> runnable;
  for (const std::string& name : chosen) {
    const cuda::VariantInfo& kernel = *find_variant(name).kernel;
    const std::string why = cuda::why_not_on(kernel, device);
    if (why.empty()) {
      runnable.push_back(name);
    } else if (all) {
      std::cerr << "rtm bench: " << name << " left out: " << why << "\n";
    } else {
      cuda::check_runs_on(kernel, device, name); // throws InputError
    }
  }
  return runnable;
}

void write_per_step_csv(const std::string& path, const std::vector<cuda::PointRun>& runs) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) throw InputError("--per-step-csv: cannot write '" + path + "'");
    out << "step";
    for (const auto& run : runs) out << ',' << run.variant << "_ms";
    out << '\n';
    const size_t steps = runs.front().step_ms.size();
    char buf[32];
    for (size_t s = 0; s < steps; ++s) {
      out << s;
      for (const auto& run : runs) {
        std::snprintf(buf, sizeof buf, ",%.6f", run.step_ms[s]);
        out << buf;
      }
      out << '\n';
    }
    if (!out) throw InputError("--per-step-csv: writing '" + path + "' failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw InputError("--per-step-csv: cannot rename the finished file to '" + path + "'");
}

void write_plot(const std::string& path, const std::vector<cuda::PointRun>& runs,
                const std::string& grid_text, const std::string& gpu) {
  std::vector<PlotSeries> series;
  for (const auto& run : runs) {
    PlotSeries s;
    s.label = run.variant;
    for (size_t n = 0; n < run.step_ms.size(); ++n) {
      s.x.push_back(double(n));
      s.y.push_back(run.step_ms[n]);
    }
    series.push_back(std::move(s));
  }
  write_line_plot(path, "time per step, point source, " + grid_text + ", " + gpu, "step",
                  "ms per step", series);
}

// `rtm bench --error-vs-steps FILE.csv`: every variant asked for (not the reference itself)
// against the baseline float32 kernel, side by side on the point workload; CSV
// `step,<variant>,...` of relative L2 errors, and log10 of them against step as a plot.
void run_error_vs_steps(const BenchOptions& o, const std::vector<std::string>& variants,
                        const std::string& gpu) {
  const int steps = point_steps(o);
  const std::string& reference = baseline_name();
  std::vector<std::string> compared;
  for (const std::string& v : variants)
    if (v != reference) compared.push_back(v);
  if (compared.empty())
    throw InputError("--error-vs-steps: --variant names only the reference " + reference +
                     "; name the variants to compare with it");
  const PointBenchWorkload point = point_bench_workload(o.grid[0], o.grid[1], o.grid[2], steps);
  const std::string grid_name = grid_text(o.grid);
  std::cerr << "error against " << reference << " on the point workload, " << grid_name << ", "
            << steps << " steps, sampled every " << o.error_every << "\n";
  const cuda::ErrorVsSteps result = cuda::run_error_vs_steps(
      bench_config(o), point.setup, point.source, point.series, point.scale, reference, compared,
      o.error_every, std::cerr);

  const std::string temporary = o.error_vs_steps + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) throw InputError("--error-vs-steps: cannot write '" + o.error_vs_steps + "'");
    out << "step";
    for (const std::string& v : result.variants) out << ',' << v;
    out << '\n';
    char buf[32];
    for (size_t n = 0; n < result.steps.size(); ++n) {
      out << result.steps[n];
      for (const auto& e : result.error) {
        std::snprintf(buf, sizeof buf, ",%.4e", e[n]);
        out << buf;
      }
      out << '\n';
    }
    if (!out) throw InputError("--error-vs-steps: writing '" + o.error_vs_steps + "' failed");
  }
  if (std::rename(temporary.c_str(), o.error_vs_steps.c_str()) != 0)
    throw InputError("--error-vs-steps: cannot rename the finished file to '" + o.error_vs_steps + "'");
  std::cout << "relative L2 error against " << reference << " written to " << o.error_vs_steps << "\n";
  for (size_t v = 0; v < result.variants.size(); ++v) {
    char line[160];
    std::snprintf(line, sizeof line, "ERROR rtm-bench gpu=\"%s\" grid=%s variant=%s steps=%d error=%.3e\n",
                  gpu.c_str(), grid_name.c_str(), result.variants[v].c_str(), result.steps.back(),
                  result.error[v].back());
    std::cout << line;
  }
  if (o.error_plot.empty() || !figures_supported()) return;
  write_error_plot(o.error_plot, "error against " + reference + ", point source, " + grid_name + ", " + gpu,
                   result.variants, result.steps, result.error);
  std::cout << "error plot written to " << o.error_plot << "\n";
}

std::string memory_text(const cuda::MemoryOptions& memory) {
  const std::string name = cuda::memory_options_name(memory);
  return name.empty() ? "-" : name;
}

// The variant table itself (needs no GPU): the kernels, then the presets. Text prints two tables;
// --csv and --json one, with a `kind` column, so that a program reads one table.
// The lowest compute capability a kernel runs on, as NVIDIA writes it: "9.0".
std::string capability_text(const cuda::VariantInfo& kernel) {
  return std::to_string(kernel.min_compute_capability / 10) + "." +
         std::to_string(kernel.min_compute_capability % 10);
}

void list_variants(OutputFormat format) {
  const std::vector<ResultTable::Column> kernel_columns = {
      {"variant"}, {"role"}, {"storage"}, {"bytes/cell", "%.0f"}, {"flops/cell", "%.0f"},
      {"min_cc"}, {"description"}};
  const std::vector<ResultTable::Column> preset_columns = {
      {"variant"}, {"kernel"}, {"memory"}, {"description"}};
  if (format == OutputFormat::text) {
    ResultTable kernels(kernel_columns), presets(preset_columns);
    for (const cuda::VariantInfo& v : cuda::variant_table())
      kernels.add_row({v.name, std::string(cuda::variant_role_name(v.role)), v.storage,
                       v.bytes_per_cell, v.flops_per_cell, capability_text(v), v.description});
    for (const cuda::VariantPreset& p : cuda::variant_presets())
      presets.add_row({p.name, find_variant(p.name).kernel->name, memory_text(p.memory), p.description});
    std::cout << "kernels (" << cuda::variant_table().size() << "):\n";
    print_table(std::cout, kernels, format);
    std::cout << "\npresets (a kernel with memory options; --compressible and --l2-persist, or a "
                 "name+option such as regqueue_vec4+l2_persist, give any kernel the same):\n";
    print_table(std::cout, presets, format);
    return;
  }
  ResultTable table({{"variant"}, {"kind"}, {"kernel"}, {"role"}, {"storage"},
                     {"bytes/cell", "%.0f"}, {"flops/cell", "%.0f"}, {"memory"}, {"description"},
                     {"min_cc"}});
  for (const std::string& name : cuda::variant_names()) {
    const cuda::VariantSelection chosen = find_variant(name);
    const cuda::VariantInfo& k = *chosen.kernel;
    const bool preset = name != k.name;
    std::string description = k.description;
    for (const cuda::VariantPreset& p : cuda::variant_presets())
      if (p.name == name) description = p.description;
    table.add_row({name, std::string(preset ? "preset" : "kernel"), k.name,
                   std::string(cuda::variant_role_name(k.role)), k.storage, k.bytes_per_cell,
                   k.flops_per_cell, memory_text(chosen.memory), description, capability_text(k)});
  }
  print_table(std::cout, table, format);
}

void run_bench(const BenchOptions& o) {
  if (o.list) {
    list_variants(o.format.format());
    return;
  }
  check_grid_steps_repeats(o.grid, o.steps, o.repeats);
  if (o.point_steps < 0) throw InputError("--point-steps: expected a positive number (or 0: automatic)");
  if (o.workload != "random" && o.workload != "point" && o.workload != "both")
    throw InputError("--workload: expected random, point or both, got '" + o.workload + "'");
  const bool do_random = o.workload != "point";
  const bool do_point = o.workload != "random";
  if (o.cpml_width < 0) throw InputError("--cpml-width: expected a number of cells (0: no C-PML run)");
  if (o.cpml_width > 0 && !do_random)
    throw InputError("--cpml-width times the random workload: use --workload random or both");
  if (o.cpml_width > 0) check_bench_cpml_width(o.grid[0], o.grid[1], o.grid[2], o.cpml_width);
  if ((!o.per_step_csv.empty() || !o.plot.empty()) && !do_point)
    throw InputError("--per-step-csv and --plot need the point workload (--workload point or both)");
  // Said before the run, which goes on: the plot is a by-product (--per-step-csv has its data).
  if (!o.plot.empty() && !figures_supported())
    std::cerr << "rtm: warning: --plot " << o.plot << ": no plot: " << no_figure_support_message()
              << "\n";
  if (o.error_every < 1) throw InputError("--error-every: expected a positive number of steps");
  if (!o.error_plot.empty() && o.error_vs_steps.empty())
    throw InputError("--error-plot needs --error-vs-steps FILE.csv");
  if (!o.error_plot.empty() && !figures_supported())
    std::cerr << "rtm: warning: --error-plot " << o.error_plot << ": no plot: "
              << no_figure_support_message() << "\n";

  // Names first: a misspelt one is bad input on every machine, with or without a GPU.
  const std::vector<std::string> named = resolve_variants(o.variants);
  const cuda::DeviceInfo device = cuda::query_device(o.device);
  // Not bad input (exit 2) but a missing device (exit 1), with the benchmark that does run here.
  if (!device.available)
    throw std::runtime_error("rtm bench: no usable GPU (" + device.why_unavailable +
                             "); for the CPU benchmark run `rtm bench --backend cpu`");
  const std::vector<std::string> variants = runnable_variants(named, o.variants, device);
  if (!o.error_vs_steps.empty()) {
    run_error_vs_steps(o, variants, device.name);
    return;
  }

  const int nx = o.grid[0], ny = o.grid[1], nz = o.grid[2];
  cuda::BenchConfig config = bench_config(o);
  config.steps = o.steps;
  config.repeats = o.repeats;
  const int64_t cells = int64_t(nx) * ny * nz;
  const std::string grid_name = grid_text(o.grid);
  const OutputFormat format = o.format.format();
  std::ostream& context = context_stream(format);

  context << "GPU " << device.device << ": " << device.name << " (compute capability "
          << device.cc_major << "." << device.cc_minor << ", " << device.sm_count << " SMs, "
          << (device.global_mem_bytes >> 30) << " GiB, L2 " << (device.l2_bytes >> 20)
          << " MiB), CUDA runtime " << device.runtime_version << ", driver "
          << device.driver_version << "\n";
  context << "grid " << grid_name << ", random workload " << o.repeats << " x " << o.steps
          << " steps" << (o.compressible ? ", --compressible" : "")
          << (o.l2_persist ? ", --l2-persist" : "") << "\n";

  const cuda::StreamingLimit limit = cuda::measure_streaming_limit(cells, std::max(o.repeats, 10), o.device);
  char line[512];
  std::snprintf(line, sizeof line,
                "streaming limit (read 3 + write 1 arrays, %.0f B/cell, float4): %.1f GB/s = %.1f "
                "Gcells/s\n",
                limit.gbs / limit.gcells_per_s, limit.gbs, limit.gcells_per_s);
  context << line;

  // Columns by position are read by .ci/gpu-session: new columns go at the end.
  const std::string error_column = "error_vs_" + baseline_name();
  ResultTable table({{"workload"}, {"variant"}, {"Gcells/s", "%.1f"}, {"GB/s", "%.0f"},
                     {"of_streaming", "%.3f"}, {"speedup_vs_naive", "%.2f"},
                     {error_column, "%.2e"}, {"ms/step", "%.4f"}, {"ms/step_early", "%.4f"},
                     {"ms/step_late", "%.4f"}, {"kernel"}, {"memory"}});
  table.add_row({std::string("streaming"), std::string("streaming_limit"), limit.gcells_per_s,
                 limit.gbs, 1.0, std::nan(""), std::nan(""), limit.ms_median, std::nan(""),
                 std::nan(""), std::string("-"), std::string("-")});

  struct Summary {
    std::string variant;
    cuda::VariantSelection chosen;
    double gcells = 0, fraction = 0, error = 0, early_ms = 0;
  };
  std::vector<Summary> random_rows, point_rows;
  auto add = [&](const std::string& workload, const std::string& variant, double ms,
                 double baseline_ms, double error, double early, double late,
                 std::vector<Summary>& summary) {
    const cuda::VariantSelection chosen = find_variant(variant);
    const double gcells = double(cells) / (ms * 1e-3) / 1e9;
    const double gbs = gcells * chosen.kernel->bytes_per_cell;
    table.add_row({workload, variant, gcells, gbs, gbs / limit.gbs, baseline_ms / ms, error, ms,
                   early, late, chosen.kernel->name,
                   memory_text(cuda::combined(chosen.memory, config.memory))});
    summary.push_back({variant, chosen, gcells, gbs / limit.gbs, error, early});
  };

  if (do_random) {
    PropagatorSetup damped;
    if (o.cpml_width > 0) {
      damped = random_bench_setup(nx, ny, nz);
      add_bench_cpml(damped, o.cpml_width);
    }
    const auto runs =
        cuda::run_random_workload(config, random_bench_setup(nx, ny, nz), variants, std::cerr);
    for (const auto& run : runs) {
      if (!run.memory_note.empty()) context << "note: " << run.variant << ": " << run.memory_note << "\n";
      add("random", run.variant, run.ms_per_step_median, runs.front().ms_per_step_median,
          run.error, std::nan(""), std::nan(""), random_rows);
    }
    if (o.cpml_width > 0) {
      // The same steps with the C-PML's update after each: its own time is the difference.
      std::vector<Summary> cpml_rows;
      const auto damped_runs = cuda::run_random_workload(config, damped, variants, std::cerr);
      const CpmlBenchSize size = cpml_bench_size(nx, ny, nz, o.cpml_width);
      for (size_t r = 0; r < damped_runs.size(); ++r) {
        const auto& run = damped_runs[r];
        add("random+cpml", run.variant, run.ms_per_step_median,
            damped_runs.front().ms_per_step_median, run.error, std::nan(""), std::nan(""), cpml_rows);
        const double own_ms = run.ms_per_step_median - runs[r].ms_per_step_median;
        const double bytes = size.ideal_bytes(find_variant(run.variant).kernel->element_bytes);
        std::snprintf(line, sizeof line,
                      "C-PML %s: %.4f ms/step with %d-cell layers, %.4f without: the C-PML's update "
                      "%.4f ms/step (%.1f M layer cells, %.2f GB ideal traffic: %.0f GB/s)\n",
                      run.variant.c_str(), run.ms_per_step_median, o.cpml_width,
                      runs[r].ms_per_step_median, own_ms, double(size.layer_cells) * 1e-6,
                      bytes * 1e-9, bytes / (own_ms * 1e-3) * 1e-9);
        context << line;
      }
    }
  }
  if (do_point) {
    const int steps = point_steps(o);
    context << "point workload: Ricker source in the centre, " << steps
            << " steps (early = first quarter, late = last quarter of the steps)\n";
    const PointBenchWorkload point = point_bench_workload(nx, ny, nz, steps);
    const auto runs = cuda::run_point_workload(config, point.setup, point.source, point.series,
                                               point.scale, variants, std::cerr);
    const size_t quarter = std::max<size_t>(1, size_t(steps) / 4);
    const double baseline_ms = median(runs.front().step_ms);
    for (const auto& run : runs) {
      if (!run.memory_note.empty()) context << "note: " << run.variant << ": " << run.memory_note << "\n";
      add("point", run.variant, median(run.step_ms), baseline_ms, run.error,
          median_range(run.step_ms, 0, quarter),
          median_range(run.step_ms, run.step_ms.size() - quarter, run.step_ms.size()), point_rows);
    }
    if (!o.per_step_csv.empty()) {
      write_per_step_csv(o.per_step_csv, runs);
      context << "per-step times written to " << o.per_step_csv << "\n";
    }
    if (!o.plot.empty() && figures_supported()) {
      write_plot(o.plot, runs, grid_name, device.name);
      context << "per-step plot written to " << o.plot << "\n";
    }
  }

  print_table(std::cout, table, format);

  // One greppable line with the figures the goals are stated in (docs/variants.md).
  std::ostringstream summary;
  summary << "PERFORMANCE rtm-bench gpu=\"" << device.name << "\" grid=" << grid_name;
  std::snprintf(line, sizeof line, " streaming_gcells=%.1f", limit.gcells_per_s);
  summary << line;
  // The best float32 run (presets included: they run float32 kernels too).
  const Summary* best = nullptr;
  for (const Summary& s : random_rows)
    if (s.chosen.kernel->storage == "float32" && (!best || s.gcells > best->gcells)) best = &s;
  if (best) {
    std::snprintf(line, sizeof line, " best_fp32=%s gcells=%.1f of_streaming=%.3f",
                  best->variant.c_str(), best->gcells, best->fraction);
    summary << line;
  }
  // Every other kernel run by its own name, its fraction of the limit; the half-storage kernel
  // also against the best float32 run, with its error.
  for (const Summary& s : random_rows) {
    if (s.variant != s.chosen.kernel->name) continue; // presets and names with options
    if (s.chosen.kernel->role != cuda::VariantRole::best_fp32) {
      std::snprintf(line, sizeof line, " %s_of_streaming=%.3f", s.variant.c_str(), s.fraction);
      summary << line;
    }
    if (s.chosen.kernel->role == cuda::VariantRole::half_storage && best) {
      std::snprintf(line, sizeof line, " fp16_vs_best_fp32=%.2f fp16_error=%.2e", s.gcells / best->gcells,
                    s.error);
      summary << line;
    } else if (s.chosen.kernel->storage != "float32" && best) {
      // Other storage schemes (half_v2dt2): the same two figures under their own names.
      std::snprintf(line, sizeof line, " %s_vs_best_fp32=%.2f %s_error=%.2e", s.variant.c_str(),
                    s.gcells / best->gcells, s.variant.c_str(), s.error);
      summary << line;
    }
  }
  // Each preset against the same kernel without its memory options, early in the point run
  // (mostly zeros, where compression pays).
  for (const cuda::VariantPreset& p : cuda::variant_presets()) {
    for (const Summary& s : point_rows) {
      if (s.variant != p.name) continue;
      for (const Summary& base : point_rows)
        if (base.variant == s.chosen.kernel->name) {
          std::snprintf(line, sizeof line, " %s_early_speedup=%.2f", p.name.c_str(),
                        base.early_ms / s.early_ms);
          summary << line;
        }
    }
  }
  (format == OutputFormat::text ? std::cout : std::cerr) << summary.str() << "\n";
}

#endif // RTM_HAVE_CUDA

} // namespace

void register_bench(CLI::App& rtm) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = rtm.add_subcommand(
      "bench", "Step the wavefield with one, several or all CUDA variants; Gcells/s against the "
               "GPU's streaming limit");
  cmd->add_option("--variant", options->variants,
                  "Variant(s) to run: kernels or presets, optionally with memory options "
                  "(regqueue_vec4+l2_persist); repeat the option or separate with commas; or 'all' "
                  "(every kernel, then every preset). The baseline kernel (naive_32x32) always runs "
                  "first as the speed-up baseline and error reference")
      ->delimiter(',');
  add_shape_option(cmd, "--grid", options->grid, "Grid size NX,NY,NZ (default 512,512,512)");
  cmd->add_option("--steps", options->steps, "Random workload: steps per timed repeat (default 100)");
  cmd->add_option("--repeats", options->repeats, "Random workload: timed repeats, median reported (default 5)");
  cmd->add_option("--workload", options->workload,
                  "random (random wavefields, steady throughput), point (point source from rest, "
                  "time of every step) or both (default)");
  cmd->add_option("--point-steps", options->point_steps,
                  "Point workload steps (default: until the wavefront reaches the nearest face)");
  cmd->add_flag("--compressible", options->compressible,
                "Allocate the wavefields as compressible memory, for every variant");
  cmd->add_flag("--l2-persist", options->l2_persist,
                "Keep v2dt2 in an L2 persisting window, for every variant");
  cmd->add_option("--cpml-width", options->cpml_width,
                  "Random workload: also run every variant with C-PML layers of this many cells on "
                  "every face of the grid, and print the C-PML's own time per step (default 0: no)");
  add_format_flags(cmd, options->format); // with --csv or --json, context lines go to stderr
  cmd->add_option("--per-step-csv", options->per_step_csv,
                  "Point workload: write the time of every step, per variant, to this CSV file");
  cmd->add_option("--plot", options->plot,
                  "Point workload: draw time per step against step, per variant, into this PNG file");
  cmd->add_option("--error-vs-steps", options->error_vs_steps,
                  "Instead of timing: run the point workload with every variant beside the baseline "
                  "(float32) and write their relative L2 errors against it to this CSV, one row per "
                  "sample (--point-steps sets the length)");
  cmd->add_option("--error-every", options->error_every,
                  "--error-vs-steps: steps between samples (default 10)");
  cmd->add_option("--error-plot", options->error_plot,
                  "--error-vs-steps: draw log10 error against step, per variant, into this PNG file");
  cmd->add_option("--error-plot-from", options->error_plot_from,
                  "Draw the --error-plot of a CSV that --error-vs-steps wrote (no GPU needed, a "
                  "build with Cairo)");
  cmd->add_option("--device", options->device, "CUDA device index (default 0)");
  cmd->add_flag("--list", options->list, "List the variant table (the kernels, then the presets) and exit");
  cmd->add_option("--scaling", options->scaling,
                  "weak or strong: step one grid split into z-slabs over the MPI launcher's ranks "
                  "(--grid is per rank for weak, the whole grid for strong); docs/parallel.md");
  cmd->add_option("--ranks", options->ranks,
                  "--scaling: rank counts to run (default 1, 2, 4, ... and all ranks)")
      ->delimiter(',');
  cmd->add_option("--backend", options->backend,
                  "cpu: bench the CPU step against the cores' triad bandwidth (--grid default "
                  "256,256,256, --steps 10; --variant all, baseline or avx2); with --scaling: "
                  "auto (default), cpu or cuda");
  cmd->add_option("--halo-transport", options->halo_transport,
                  "--scaling: auto (default), mpi (cpu), nccl, mpi-cuda-aware, mpi-staged");
  cmd->add_option("--physics", options->physics,
                  "iso (default): the acoustic variants; tti: the TTI kernels (tti-naive, "
                  "tti-pipelined) with the rooflines (uses --grid, --steps, --repeats, --device)")
      ->check(CLI::IsMember({"iso", "tti"}));
  cmd->callback([options, cmd] {
    if (!options->error_plot_from.empty()) {
      replot_error_vs_steps(options->error_plot_from, options->error_plot);
      return;
    }
    if (options->physics == "tti") {
      run_tti_bench_command(options->grid, options->steps, options->repeats, options->device);
      return;
    }
    if (!options->scaling.empty()) {
      run_scaling(*options);
      return;
    }
    if (options->backend == "cpu") {
      run_cpu_bench(*options, cmd->count("--grid") > 0, cmd->count("--steps") > 0,
                    cmd->count("--repeats") > 0);
      return;
    }
#ifdef RTM_HAVE_CUDA
    run_bench(*options);
#else
    // Not bad input (exit 2) but a missing device (exit 1), with the benchmark that does run here.
    throw std::runtime_error("rtm bench runs the CUDA kernels by default, and this build of rtm "
                             "has none (it was configured without a CUDA compiler; rebuild with "
                             "nvcc available); for the CPU benchmark run `rtm bench --backend cpu`");
#endif
  });
}

} // namespace rtm::app
