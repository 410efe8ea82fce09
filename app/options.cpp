#include "app/options.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <string>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm::app {
namespace {

// A validator accepting numbers for which `accept` holds; `expected` completes "expected a ...".
CLI::Validator number_check(bool (*accept)(double), const std::string& expected,
                            const std::string& description) {
  return CLI::Validator(
      [accept, expected](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(begin, &end);
        const bool whole = end != begin && *end == '\0';
        if (!whole || errno == ERANGE || !accept(value))
          return "expected " + expected + ", got '" + text + "'";
        return std::string();
      },
      description);
}

// A validator accepting whole numbers in [minimum, INT_MAX] (CLI11 2.1's range checks print the
// upper end as a 300-digit number).
CLI::Validator integer_check(long long minimum, const std::string& expected,
                             const std::string& description) {
  return CLI::Validator(
      [minimum, expected](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(begin, &end, 10);
        const bool whole = end != begin && *end == '\0';
        if (!whole || errno == ERANGE || value < minimum || value > INT_MAX)
          return "expected " + expected + ", got '" + text + "'";
        return std::string();
      },
      description);
}

} // namespace

const CLI::Validator& positive_count() {
  static const CLI::Validator check = integer_check(1, "a whole number >= 1", "POSITIVE");
  return check;
}

const CLI::Validator& non_negative_count() {
  static const CLI::Validator check = integer_check(0, "a whole number >= 0", "NON-NEGATIVE");
  return check;
}

const CLI::Validator& positive_finite() {
  static const CLI::Validator check = number_check(
      [](double v) { return std::isfinite(v) && v > 0; }, "a finite number > 0", "POSITIVE");
  return check;
}

const CLI::Validator& non_negative_finite() {
  static const CLI::Validator check = number_check(
      [](double v) { return std::isfinite(v) && v >= 0; }, "a finite number >= 0", "NON-NEGATIVE");
  return check;
}

const CLI::Validator& finite_number() {
  static const CLI::Validator check =
      number_check([](double v) { return std::isfinite(v); }, "a finite number", "FINITE");
  return check;
}

void add_backend_options(CLI::App* cmd, BackendOptions& o) {
  cmd->add_option("--backend", o.backend, "Where the wave steps run: auto (GPU if present), cpu, cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--variant", o.variant,
                  "CUDA propagator variant (see `rtm bench --list`), or auto: time the candidates "
                  "briefly on this grid and use the fastest")
      ->capture_default_str();
  cmd->add_flag("--compressible", o.compressible, "CUDA: allocate wavefields as compressible memory");
  cmd->add_flag("--l2-persist", o.l2_persist, "CUDA: keep v2dt2 (read every step, never written) in persisting L2");
  cmd->add_option("--halo-transport", o.halo_transport,
                  "With --ranks-per-shot > 1: how slabs trade halo planes: auto (the fastest "
                  "available), mpi (CPU backend), nccl, mpi-cuda-aware, mpi-staged (GPUs); "
                  "docs/decomposition.md")
      ->check(CLI::IsMember({"auto", "mpi", "nccl", "mpi-cuda-aware", "mpi-staged"}))
      ->capture_default_str();
}

void add_parallel_options(CLI::App* cmd, ParallelOptions& o) {
  cmd->add_option("--ranks-per-shot", o.ranks_per_shot,
                  "MPI: ranks computing each shot together (one model split over their GPUs); must "
                  "divide the number of ranks. Shots are shared out over the groups")
      ->check(positive_count())
      ->capture_default_str();
  cmd->add_flag("--allow-gpu-sharing", o.allow_gpu_sharing,
                "MPI: let more ranks run on a node than it has GPUs (rank i uses GPU i mod count); "
                "refused otherwise");
}

void add_boundary_options(CLI::App* cmd, BoundaryConfig& b) {
  cmd->add_option("--boundary-width", b.width, "Absorbing-layer thickness in cells on each face")
      ->check(non_negative_count())
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--absorber", [&b](const std::string& name) { b.absorber = parse_absorber(name); },
         "Absorbing layers: cpml (convolutional PML, default) or sponge (damping term; its step is "
         "its own adjoint)")
      ->check(CLI::IsMember({"cpml", "sponge"}))
      ->default_str("cpml");
  cmd->add_flag("--free-surface", b.free_surface,
                "Pressure-release (reflecting) surface at z = 0 instead of an absorbing layer");
}

void add_point_interpolation_option(CLI::App* cmd, PointInterpolation& kind) {
  cmd->add_option_function<std::string>(
         "--point-interpolation",
         [&kind](const std::string& name) { kind = parse_point_interpolation(name); },
         "How sources and receivers between grid nodes are spread over them: sinc (Hicks' "
         "Kaiser-windowed sinc, 8 nodes per axis; accurate to 4 points per wavelength) or "
         "trilinear (8 nodes in all; loses amplitude between nodes)")
      ->check(CLI::IsMember({"sinc", "trilinear"}))
      ->default_str(point_interpolation_name(kind));
}

void add_time_options(CLI::App* cmd, ModelingParams& p) {
  cmd->add_option("--f0", p.wavelet.f0, "Ricker wavelet peak frequency (Hz)")
      ->check(positive_finite())
      ->capture_default_str();
  cmd->add_option("--t0", p.wavelet.t0, "Wavelet delay (s); default 1.2/f0")
      ->check(non_negative_finite());
  // Left out, dt comes from CFL (p.dt stays 0); given, it must be a usable step: 0 is refused.
  cmd->add_option("--dt", p.dt, "Time step (s); default: 0.88 x the CFL limit")
      ->check(positive_finite());
  cmd->add_option("--record-time", p.record_time, "Seconds recorded per shot")
      ->check(positive_finite())
      ->capture_default_str();
  add_time_dispersion_option(cmd, p.time_dispersion_transform);
}

void add_time_dispersion_option(CLI::App* cmd, bool& enabled) {
  cmd->add_option("--time-dispersion-transform", enabled,
                  "on (default): remove the 2nd-order time stepping's dispersion exactly (forward "
                  "transform on the wavelet, inverse on the traces; the shot file records it); off: "
                  "traces as the time stepping makes them")
      ->check(CLI::IsMember({"on", "off"}));
}

void add_velocity_check_flag(CLI::App* cmd, bool& allow_unusual) {
  cmd->add_flag("--allow-unusual-velocities", allow_unusual,
                "Accept velocities outside 300 to 10000 m/s (the plausible range for seismic "
                "media; outside it is nearly always a units mistake)");
}

NamedPath config_input(const CLI::App* cmd) {
  const CLI::App* root = cmd;
  while (root->get_parent()) root = root->get_parent();
  const CLI::Option* config = root->get_option_no_throw("--config");
  if (!config || config->empty()) return {"--config", ""};
  return {"--config", config->results().front()};
}

void add_progress_option(CLI::App* cmd, double& interval_s) {
  cmd->add_option("--progress", interval_s,
                  "Seconds between progress updates inside a shot (steps, Gcells/s, time left), "
                  "on stderr; 0: only one line per shot")
      ->check(non_negative_finite())
      ->capture_default_str();
}

void add_format_flags(CLI::App* cmd, FormatFlags& f) {
  auto* csv = cmd->add_flag("--csv", f.csv, "Print results as CSV");
  cmd->add_flag("--json", f.json, "Print results as JSON")->excludes(csv);
}

CLI::Option* add_shape_option(CLI::App* cmd, const std::string& name, std::vector<int>& shape,
                              const std::string& description) {
  return cmd->add_option(name, shape, description)
      ->delimiter(',')
      ->expected(3)
      ->check(positive_count());
}

} // namespace rtm::app
