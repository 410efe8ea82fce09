// rtm migrate: reverse time migration of shot gathers into an image (HDF5 + PNG slices).
#include <algorithm>
#include <future>
#include <cstdio>
#include <string>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "app/commands.h"
#include "app/migration_options.h"
#include "app/options.h"
#include "app/physics_option.h"
#include "app/stop_signals.h"
#include "io/atomic_file.h"
#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/path_checks.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "io/write_rate.h"
#include "solvers/drivers/checkpoint_policy.h"
#include "solvers/drivers/gather_datasets.h"
#include "solvers/drivers/image_datasets.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/run_profile.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/slab_image.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/smoothing.h"

namespace rtm::app {
namespace {

// The options migrate shares with lsrtm (app/migration_options.h), and its own.
struct MigrateArgs : MigrationOptions {
  std::string physics = "iso"; // --physics iso|tti
  std::string data_phase_filter = "auto";
  std::string imaging_condition = "cross";
  bool no_laplacian = false;
  bool no_shot_overlap = false;
  std::string datasets = kDefaultImageDatasets; // --datasets, parsed into `written`
  std::string gather_stride = "10";             // --gather-stride SX[,SY]
  ImageDatasets written;
  std::string checkpoint_every = "auto"; // --checkpoint-every: auto or K >= 0
  MigrationParams params;
};

// --gather-stride: "SX" (both axes) or "SX,SY", whole numbers of cells >= 1.
void parse_gather_stride(const std::string& text, OffsetGatherSpec& spec) {
  const size_t comma = text.find(',');
  auto cells = [&](const std::string& part) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < 1)
      throw InputError("--gather-stride: expected SX or SX,SY, whole numbers of cells >= 1, got '" +
                       text + "'");
    return v;
  };
  spec.stride_x = cells(text.substr(0, comma));
  spec.stride_y = comma == std::string::npos ? spec.stride_x : cells(text.substr(comma + 1));
}

// The figures --png-dir draws: of the image and the illumination, those the output holds.
std::vector<std::string> figure_names(const MigrateArgs& a) {
  std::vector<std::string> names;
  if (a.written.image) names.push_back("image");
  if (a.written.illumination) names.push_back("illumination");
  return names;
}

// Every file the run writes, named by the option that names it.
std::vector<NamedPath> migrate_outputs(const MigrateArgs& a) {
  std::vector<NamedPath> outputs = {{"-o", a.output}};
  if (!a.png_dir.empty())
    for (const std::string& figure : figure_names(a))
      outputs.push_back({"--png-dir", a.png_dir + "/" + figure + ".png"});
  return outputs;
}

// The shots' records must reach past the wavelet (and, with the mute, past the muted part):
// otherwise every trace migrated is zero and the image is empty.
void check_record_length(const ShotFile& shots, const std::string& path, bool mute) {
  const double end = (shots.nt - 1) * shots.dt;
  if (end > shots.t0 && (!mute || end > shots.t0 + 1.0 / shots.f0)) return;
  std::string message = path + ": the records end at " + format_number(end, 4) + " s (" +
                        std::to_string(shots.nt) + " samples of " + format_number(shots.dt, 4) +
                        " s), ";
  if (end <= shots.t0)
    message += "before the wavelet's delay t0 = " + format_number(shots.t0, 4) +
               " s: they hold no reflection";
  else
    message += "and the direct-wave mute zeroes every sample up to at least t0 + 1/f0 = " +
               format_number(shots.t0 + 1.0 / shots.f0, 4) + " s (t0 " +
               format_number(shots.t0, 4) + " s, f0 " + format_number(shots.f0, 4) +
               " Hz); --direct-wave none keeps them";
  throw InputError(message + "; the image would be all zero. Model the shots with a longer "
                             "--record-time");
}

// The figures of the written image and illumination (those --datasets wrote), drawn by world
// rank 0 from the whole arrays.
void draw_figures(const MigrateArgs& a, const VelocityModel& grid, const std::vector<float>& image,
                  const std::vector<float>& illumination) {
  std::filesystem::create_directories(a.png_dir);
  FigureOptions options;
  options.clip_percentile = a.clip_percentile;
  options.signed_colours = a.colors == "grey" ? ColourMap::grey : ColourMap::seismic;
  const SliceCells middle = locate_slices({}, grid);
  const struct {
    const char* name;
    const std::vector<float>& values;
    const char* units;
  } figures_to_draw[] = {{"image", image, "relative amplitude"}, {"illumination", illumination, ""}};
  for (const auto& f : figures_to_draw) {
    if (f.values.empty()) continue; // not written
    const std::string png = a.png_dir + "/" + f.name + ".png";
    write_figure(png, volume_figure(grid, f.values, volume_kind_of(f.name), f.name, f.units,
                                    a.output, middle, options));
    std::printf("wrote %s\n", png.c_str());
  }
}

// What both paths (one rank per shot, or slabs) check before reading the model: the records reach
// past the wavelet, and the velocity bounds the run accepts.
VelocityCheck check_inputs(const MigrateArgs& a, const ShotFile& shots) {
  if (shots.f0 > 0)
    check_record_length(shots, a.shots_path, a.params.direct_wave == DirectWaveRemoval::mute);
  return velocity_check(a.allow_unusual_velocities);
}

// Says which migration velocity --model and --smooth gave (`holders`: who holds it, if not one rank).
void report_smoothed_velocity(const MigrateArgs& a, double vmin, double vmax,
                              const std::string& holders, std::ostream& info) {
  info << "rtm: migration velocity: " << a.model_path;
  if (a.smooth > 0) info << " smoothed over " << a.smooth << " m";
  else info << " as is (--smooth 0)";
  info << ", " << format_number(vmin) << " to " << format_number(vmax) << " m/s" << holders << "\n";
}

// --checkpoint-every's value: kAutomaticCheckpoints for auto, else K >= 0; false for anything else.
bool parse_checkpoint_every(const std::string& value, int& every) {
  if (value == "auto") {
    every = kAutomaticCheckpoints;
    return true;
  }
  std::size_t used = 0;
  long k = -1;
  try {
    k = std::stol(value, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != value.size() || k < 0 || k > 1000000000) return false;
  every = int(k);
  return true;
}

const char* const kCheckpointEveryExpected = "expected auto or a whole number of shots >= 0";

int checkpoint_interval_option(const std::string& value) {
  int every = 0;
  if (!parse_checkpoint_every(value, every))
    throw InputError(std::string("--checkpoint-every: ") + kCheckpointEveryExpected + ", got '" +
                     value + "'");
  return every;
}

// Whether the run may write checkpoints before it is stopped (their staging memory, their disk).
bool periodic_checkpoints(const MigrateArgs& a, const ShotFile& shots, const ParallelContext& parallel) {
  return CheckpointPolicy(checkpoint_interval_option(a.checkpoint_every), int(shots.shots.size()),
                          parallel.group_count(), 0, true)
      .periodic();
}

// The run's checkpoints, progress line and parallel context from the options; the caller adds
// the stop handling (its StopOnSignals must outlive the run) and what a shot's start says.
MigrationControl migration_control(const MigrateArgs& a, const ParallelContext& parallel,
                                   CheckpointIdentity identity) {
  MigrationControl control;
  control.parallel = &parallel;
  control.checkpoint_output = a.output;
  control.checkpoint_every = checkpoint_interval_option(a.checkpoint_every);
  control.resume = a.resume;
  control.identity = std::move(identity);
  control.progress.interval_s = a.progress_s;
  control.progress.in_place = stderr_is_terminal();
  control.progress.width = stderr_terminal_width();
  control.stop_requested = &StopOnSignals::requested;
  return control;
}

// A run stopped by SIGINT/SIGTERM ends here, saying what was saved and how to continue.
void throw_if_stopped(const MigrationResult& result, const std::string& output) {
  if (result.stop_signal == 0) return;
  const std::vector<std::string> saved = find_checkpoints(output);
  throw RunStopped(result.stop_signal,
                   std::string("stopped by ") + signal_name(result.stop_signal) + "; " +
                       (saved.empty() ? "no shot had finished, so nothing was saved"
                                      : "the finished shots are saved in " +
                                            std::to_string(saved.size()) + " checkpoint file(s) " +
                                            output + ".checkpoint-*.h5; run the same command "
                                            "with --resume (any number of ranks) to continue"));
}

// Once the image is written, the partial sums are not needed any more.
void remove_checkpoints(const std::string& output) {
  for (const std::string& checkpoint : find_checkpoints(output)) std::remove(checkpoint.c_str());
}

// --profile's table of the whole run (solvers/drivers/run_profile.h), filled as the run goes; the
// clock starts when the command starts its work.
struct WholeRun {
  double start = steady_seconds();
  RunProfile phases;
};

// The bytes of the traces a shot file holds (what reading it moves, the headers aside).
uint64_t trace_bytes(const ShotFile& shots) {
  uint64_t values = 0;
  for (const ShotGather& gather : shots.shots) values += gather.data.size();
  return values * sizeof(float);
}

// The bytes of a model's values in memory: vp and, TTI, its four anisotropy arrays.
uint64_t model_bytes(const VelocityModel& model) {
  const Anisotropy& a = model.anisotropy;
  return uint64_t(model.vp.size() + a.epsilon.size() + a.delta.size() + a.theta.size() +
                  a.phi.size()) *
         sizeof(float);
}

uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : uint64_t(bytes);
}

// The driver's share of the whole run (MigrationProfile, measured with --profile): set-up less the
// fields, the fields (--variant auto's timing), the loop, the image's finish, the checkpoint files.
// `slabs`: the model split over a group, whose ranks write their checkpoint planes on the loop's
// thread (inside the loop) rather than beside it.
void add_migration_phases(const MigrationProfile& p, bool slabs, RunProfile& phases) {
  phases.add("set-up", std::max(0.0, p.setup_s - p.fields_s), 0,
             "smoothing, grid, stores, receivers, resume state");
  char what[128];
  if (p.autotune_choices > 0) {
    std::snprintf(what, sizeof what, "--variant auto: %s",
                  p.autotune_from_cache == p.autotune_choices ? "from the tuning cache"
                                                               : "the kernels timed");
    phases.add("autotune", p.autotune_s, 0, what);
  }
  phases.add("fields", std::max(0.0, p.fields_s - p.autotune_s), 0,
             "the propagators made (allocation, the model term)");
  std::snprintf(what, sizeof what, "%d shot(s) x %d steps x %d sweeps", p.shots, p.nt, p.sweeps);
  phases.add("loop", p.loop_s, 0, what);
  std::snprintf(what, sizeof what, "image download (%.3f s), sums, normalisation, filter",
                p.download_s);
  phases.add("finish", p.finish_s, 0, what);
  phases.add("release", p.release_s, 0, "the fields and stores freed (device and pinned memory)");
  if (p.checkpoint_files > 0) {
    if (slabs)
      std::snprintf(what, sizeof what, "%d checkpoint file(s), this rank's planes, written inside "
                    "the loop", p.checkpoint_files);
    else
      std::snprintf(what, sizeof what, "%d checkpoint file(s) beside the loop; %.3f s of the "
                    "loop's thread", p.checkpoint_files, p.checkpoint_s);
    phases.add("checkpoints", p.checkpoint_write_s, p.checkpoint_bytes, what, true);
  }
}

// --profile: the whole run's table, on world rank 0, after the last write.
void print_whole_run(const MigrateArgs& a, const ParallelContext& parallel, const WholeRun& whole) {
  if (!a.params.profile || !parallel.is_root()) return;
  std::fflush(stdout); // the "wrote" lines first
  const RunPhase* probe = whole.phases.find("write probe"); // measured after the run, apart
  print_run_profile(whole.phases, steady_seconds() - whole.start - (probe ? probe->seconds : 0.0),
                    "rtm-migrate-run", std::cerr);
}

// The whole model read on another thread (run_migrate: beside the checks), with its time.
struct ReadModel {
  VelocityModel model;
  double seconds = 0;
};
ReadModel read_model_timed(const std::string& path, VelocityCheck check) {
  const double start = steady_seconds();
  ReadModel read;
  read.model = read_velocity_model(path, "vp", check);
  read.seconds = std::max(1e-9, steady_seconds() - start);
  return read;
}

// --profile: the output's rate set against a plain sequential write of as many bytes beside it
// (io/write_rate.h), a phase of its own ("write probe") so that the wall's sum stays whole.
void add_write_rate_probe(const std::string& output, WholeRun& whole) {
  const RunPhase* written = whole.phases.find("output");
  if (!written || written->bytes == 0) return;
  const WriteRate plain = measure_plain_write(output, written->bytes);
  char what[256];
  if (plain.measured)
    std::snprintf(what, sizeof what,
                  "a plain write of the output's bytes beside it: %.2f GB/s; the output reached "
                  "%.2f of it", plain.gigabytes_per_second(),
                  written->gigabytes_per_second() / plain.gigabytes_per_second());
  else
    std::snprintf(what, sizeof what, "no plain write measured (%s)", plain.failure.c_str());
  // Apart from the run (after its last write): not in the wall the table shares out.
  whole.phases.add("write probe", plain.seconds, plain.bytes, what, true);
}

// --profile under MPI (collective: every rank calls it after its loop and the image's finish):
// each rank's shots and times, printed by world rank 0 before the whole run's table.
void print_ranks(const ParallelContext& parallel, const WholeRun& whole, const MigrationProfile& p) {
  RankTimes mine;
  mine.rank = parallel.rank();
  mine.group = parallel.group_index();
  mine.shots = p.shots;
  mine.loop_s = p.loop_s;
  mine.after_loop_s = p.finish_s + p.release_s;
  mine.before_loop_s = std::max(0.0, steady_seconds() - whole.start - mine.loop_s - mine.after_loop_s);
  const std::vector<RankTimes> ranks = gather_rank_times(mine, parallel.world_comm());
  if (parallel.is_root()) print_rank_profile(ranks, "rtm-migrate-ranks", std::cerr);
}

// --ranks-per-shot R > 1: each rank reads, smooths and holds only the model planes of its slab,
// and the image is finished and written slab by slab (docs/decomposition.md, "What each rank reads
// and holds"): no rank holds the whole model or the whole image.
void run_migrate_on_slabs(MigrateArgs& a, const CLI::App* cmd, Physics physics, const ShotFile& shots,
                          const ParallelContext& parallel, std::ostream& info, bool figures,
                          WholeRun& whole) {
  const VelocityCheck check = check_inputs(a, shots);
  const bool smoothing = a.migration_model_path.empty();
  const std::string model_path = smoothing ? a.model_path : a.migration_model_path;
  apply_physics_options(physics, cmd, model_path, a.params.boundary, a.parallel.ranks_per_shot,
                        a.params.reconstruction == Reconstruction::snapshots, info);
  // TTI: each rank reads its planes of /epsilon, /delta, /theta, /phi too (as given: only vp is
  // smoothed).
  double start = steady_seconds();
  const SlabModel part = read_slab_model(model_path, "vp", check, smoothing ? a.smooth : 0.0,
                                         a.params.boundary, parallel.group_comm(), physics);
  whole.phases.add("read", steady_seconds() - start, model_bytes(part.planes),
                   "world rank 0's model planes, smoothed as they are read");
  if (smoothing)
    report_smoothed_velocity(a, part.extremes.vmin, part.extremes.vmax,
                             " (each of the " + std::to_string(parallel.ranks_per_shot()) +
                                 " ranks of a shot group holding its slab's planes)",
                             info);
  place_on_device(a.params.backend, parallel, a.parallel, info);

  MigrationControl control = migration_control(
      a, parallel, migration_identity(part, parallel.group_comm(), shots, a.shots_path, a.params));
  const StopOnSignals signals(parallel.is_root());
  control.shot_started = [&](int, int, int) {
    StopOnSignals::set_activity("finishing the shots in progress, then a checkpoint",
                                "lose the shots since the last checkpoint");
  };
  RunStats stats;
  MigrationResult result = migrate_shots(part, shots, a.params, std::cerr, &stats, control);
  throw_if_stopped(result, a.output);
  if (a.params.profile) add_migration_phases(result.profile, true, whole.phases);
  start = steady_seconds();
  SlabImage mine;
  mine.z_first = result.image_z_first;
  mine.planes = int(result.image.size() / (size_t(part.shape.nx) * size_t(part.shape.ny)));
  mine.image = std::move(result.image);
  mine.illumination = std::move(result.illumination);
  mine.raw_image = std::move(result.raw_image);
  write_slab_image(a.output, part.shape, mine, a.written,
                   {{"data_phase_filter", describe_data_phase_filter(result.data_phase_filter, result.data_phase_order)}}, parallel);
  if (!parallel.is_root()) return;
  whole.phases.add("output", steady_seconds() - start, file_bytes(a.output),
                   "-o " + a.output + " (every rank of group 0 its planes, in turn)");
  remove_checkpoints(a.output);
  std::printf("wrote %s: %s %dx%dx%d by slabs of %d ranks; %zu "
              "shot(s) (%d migrated now), %.2f s, %.3f Gcells/s\n",
              a.output.c_str(), describe(a.written).c_str(), part.shape.nx, part.shape.ny, part.shape.nz,
              parallel.ranks_per_shot(), shots.shots.size(), result.shots_migrated, stats.seconds,
              stats.gcells_per_second());
  if (figures) {
    // The figures read the written volumes back: the one time rank 0 holds a whole image.
    start = steady_seconds();
    VelocityModel grid;
    const std::vector<float> image =
        a.written.image ? read_volume(a.output, "image", grid) : std::vector<float>();
    const std::vector<float> illumination =
        a.written.illumination ? read_volume(a.output, "illumination", grid) : std::vector<float>();
    draw_figures(a, grid, image, illumination);
    whole.phases.add("figures", steady_seconds() - start, 0, "--png-dir " + a.png_dir);
  }
}

void run_migrate(MigrateArgs& a, const CLI::App* cmd) {
  WholeRun whole;
  const Physics physics = physics_option(a.physics); // decided once, passed on
  apply_migration_options(a, a.params);
  if (parse_data_phase_order(a.data_phase_filter, a.params.data_phase_order))
    a.params.data_phase_filter = DataPhaseFilter::order;
  else
    a.params.data_phase_filter = parse_data_phase_filter(a.data_phase_filter);
  a.params.laplacian_filter = !a.no_laplacian;
  a.params.imaging_condition = parse_imaging_condition(a.imaging_condition);
  check_imaging_condition(a.params.imaging_condition, physics, a.parallel.ranks_per_shot);
  a.params.overlap_shots = !a.no_shot_overlap;
  const bool gathers = a.params.offset_gathers.lags > 0;
  if (gathers) parse_gather_stride(a.gather_stride, a.params.offset_gathers);
  a.written = parse_image_datasets(a.datasets, "--datasets", gathers);
  if (gathers && cmd->count("--datasets") == 0) { // the default list, and the gathers
    a.written.offset_gathers = true;
    a.written.angle_gathers = true;
  }
  if (a.written.gathers() && !gathers)
    throw InputError("--datasets " + a.datasets + " lists gathers, which need --offset-lags N "
                     "(N >= 1 lags each side)");
  if (gathers && !a.written.gathers())
    throw InputError("--offset-lags " + std::to_string(a.params.offset_gathers.lags) +
                     " makes gathers that --datasets " + a.datasets +
                     " does not write; add offset_gathers or angle_gathers");
  if (a.written.count() == 0 && !a.written.gathers())
    throw InputError("--datasets " + a.datasets + " writes nothing");
  a.params.make_angle_gathers = a.written.angle_gathers;
  if (a.written.angle_gathers) check_angle_gather_spec(a.params.angle_gathers, "--gather-angles");
  check_offset_gathers(a.params, physics, a.parallel.ranks_per_shot, a.resume);
  // The sums come back beside the image only when they are written (the figures draw what is).
  a.params.keep_sums = a.written.image_raw || a.written.illumination;
  if (!a.png_dir.empty() && figure_names(a).empty())
    throw InputError("--png-dir " + a.png_dir + " draws the image and the illumination, but "
                     "--datasets " + a.datasets + " writes neither; add image or illumination");

  const ParallelContext parallel(a.parallel.ranks_per_shot);
  std::ostream& info = parallel.is_root() ? std::cerr : null_stream(); // one copy of each message
  // Said before the run, which goes on: the figures are a by-product of the HDF5 image.
  const bool figures = !a.png_dir.empty() && figures_supported();
  if (!a.png_dir.empty() && !figures)
    info << "rtm: warning: --png-dir " << a.png_dir << ": no figures: " << no_figure_support_message()
         << "\n";
  if (parallel.is_root()) { // before the run, not after it
    check_output_path(a.output);
    if (!a.png_dir.empty()) check_output_directory(a.png_dir, "--png-dir");
    check_outputs_are_not_inputs(migrate_outputs(a),
                                 {{"--shots", a.shots_path},
                                  {"--model", a.model_path},
                                  {"--migration-model", a.migration_model_path},
                                  config_input(cmd)});
  }

  // Every rank reads the inputs (a file system all nodes see): first the shot file's header and
  // acquisition and the model's shape (its header and one plane), from which the memory the run
  // needs follows: a run that cannot fit is refused before the traces are read and the model is
  // read and smoothed (minutes for a large model).
  const std::string model_path = a.migration_model_path.empty() ? a.model_path : a.migration_model_path;
  double start = steady_seconds();
  // The whole model's read runs beside the checks below: the memory check's first call starts the
  // GPU (0.24 s on an H200, docs/rtm.md "Profiling a migration"). Only a model of at most
  // kReadBesideChecksBytes, so that a refused run waits little for its read: the future's
  // destructor waits for the read before a refusal leaves this block, and the refusal is what is
  // reported. Nothing else touches HDF5 meanwhile (the library is not thread-safe here): the
  // checks read no file, and the shots are read after the model.
  constexpr uint64_t kReadBesideChecksBytes = uint64_t(8) << 30;
  std::future<ReadModel> model_read;
  {
    const ShotFile geometry = read_shot_geometry(a.shots_path);
    check_inputs(a, geometry);
    const VelocityModel shape = read_model_shape(model_path);
    if (parallel.ranks_per_shot() == 1 && uint64_t(shape.cells()) * sizeof(float) <= kReadBesideChecksBytes) {
      try {
        model_read = std::async(std::launch::async, read_model_timed, model_path,
                                velocity_check(a.allow_unusual_velocities));
      } catch (const std::system_error&) {
        // No thread to be had (a tight `ulimit -v` leaves no room for its stack): the model is
        // read after the checks, on this thread, as the memory check may be about to say why.
      }
    }
    // The shots were modelled on a grid; another grid under them is nearly always a mistake (a
    // different file, x and y swapped), refused before any work unless asked for.
    if (!a.allow_other_grid) check_modeling_grid(geometry, a.shots_path, shape, model_path);
    MigrationParams sizing = a.params;
    if (!physics_info(physics).supports_cpml)
      sizing.boundary.absorber = Absorber::sponge; // as apply_physics makes it
    const bool checkpoints = periodic_checkpoints(a, geometry, parallel);
    check_migration_memory_before_reading(shape, geometry, sizing, parallel, physics,
                                          a.migration_model_path.empty() ? a.smooth : 0.0,
                                          checkpoints);
    // On disk at the end: the volumes --datasets asks for (float32 over the model), and
    // beside them, when the run may checkpoint before a stop, each shot group's checkpoint (raw
    // image and illumination), twice while a new one replaces the old. (A run that checkpoints
    // only when stopped is not refused for that one file: a stop on a full disk says so.)
    const uint64_t volume = uint64_t(shape.cells()) * sizeof(float);
    if (parallel.is_root())
      check_disk_space(a.output,
                       uint64_t(a.written.count()) * volume +
                           gather_bytes(shape, a.params.offset_gathers, a.written.offset_gathers,
                                        a.written.angle_gathers, a.params.angle_gathers) +
                           (checkpoints ? uint64_t(parallel.group_count()) * 2 * 2 * volume : 0),
                       "-o " + a.output + " (" + describe(a.written) + ")" +
                           (checkpoints ? " and its checkpoints" : ""));
  }
  whole.phases.add("checks", steady_seconds() - start, 0,
                   "the inputs' headers, memory and disk space (the device's start included)");
  start = steady_seconds();
  ReadModel beside;
  if (model_read.valid()) beside = model_read.get(); // the read's own error, if any, from here
  const double waited_s = steady_seconds() - start;
  start = steady_seconds();
  const ShotFile shots = read_shot_file(a.shots_path);
  char read_what[192] = "the shots' traces and the model";
  if (beside.seconds > 0)
    std::snprintf(read_what, sizeof read_what,
                  "the shots' traces and the model (read beside the checks in %.3f s, %.3f s of "
                  "it hidden)", beside.seconds, std::max(0.0, beside.seconds - waited_s));
  whole.phases.add("read", waited_s + steady_seconds() - start, trace_bytes(shots), read_what);
  if (parallel.ranks_per_shot() > 1) {
    run_migrate_on_slabs(a, cmd, physics, shots, parallel, info, figures, whole);
    print_whole_run(a, parallel, whole);
    return;
  }
  const VelocityCheck check = check_inputs(a, shots);
  start = steady_seconds();
  VelocityModel read =
      beside.seconds > 0 ? std::move(beside.model) : read_velocity_model(model_path, "vp", check);
  apply_physics(physics, cmd, model_path, read, a.params.boundary, a.parallel.ranks_per_shot,
                a.params.reconstruction == Reconstruction::snapshots, info);
  whole.phases.add("read", steady_seconds() - start, model_bytes(read));
  start = steady_seconds();
  VelocityModel model;
  if (!a.migration_model_path.empty()) {
    model = std::move(read);
  } else {
    model = smooth_model(read, a.smooth);
    model.anisotropy = std::move(read.anisotropy); // TTI parameters as given: only vp is smoothed
    report_smoothed_velocity(a, model.vmin(), model.vmax(), "", info);
  }
  // The model as read is not needed any more: the run holds `model` and its grid's copy, the two
  // copies the memory check counts.
  read = VelocityModel();
  place_on_device(a.params.backend, parallel, a.parallel, info);
  whole.phases.add("set-up", steady_seconds() - start);

  MigrationControl control =
      migration_control(a, parallel, migration_identity(model, shots, a.shots_path, a.params));
  const StopOnSignals signals(parallel.is_root());
  const std::string loses = a.checkpoint_every == "1" ? "lose that shot"
                                                      : "lose the shots since the last checkpoint";
  control.shot_started = [&](int, int ordinal, int total) {
    StopOnSignals::set_activity(
        parallel.group_count() > 1
            ? "finishing the shots in progress, then a checkpoint"
            : "finishing shot " + std::to_string(ordinal) + " of " + std::to_string(total) +
                  ", then a checkpoint",
        loses);
  };

  RunStats stats;
  const MigrationResult result = migrate_shots(model, shots, a.params, std::cerr, &stats, control);
  throw_if_stopped(result, a.output);
  if (a.params.profile && parallel.uses_mpi()) print_ranks(parallel, whole, result.profile);
  if (!parallel.is_root()) return; // world rank 0 alone writes
  if (a.params.profile) add_migration_phases(result.profile, false, whole.phases);
  start = steady_seconds();
  std::vector<NamedVolume> volumes;
  if (a.written.image) volumes.push_back({"image", &result.image, kImageUnits});
  if (a.written.illumination)
    volumes.push_back({"illumination", &result.illumination, kIlluminationUnits});
  if (a.written.image_raw) volumes.push_back({"image_raw", &result.raw_image, kRawImageUnits});
  const GatherArrays gather_output =
      a.written.gathers()
          ? gather_arrays(model, result.gather_layout, result.offset_gathers,
                          a.written.angle_gathers ? result.angle_gathers : std::vector<float>(),
                          a.params.angle_gathers, a.written.offset_gathers)
          : GatherArrays();
  write_volumes(a.output, model, volumes,
                {{"data_phase_filter", describe_data_phase_filter(result.data_phase_filter, result.data_phase_order)}},
                gather_output.arrays);
  whole.phases.add("output", steady_seconds() - start, file_bytes(a.output), "-o " + a.output);
  if (a.params.profile) add_write_rate_probe(a.output, whole);
  remove_checkpoints(a.output); // the image is safe
  std::printf("wrote %s: %s %dx%dx%d; %zu shot(s) (%d migrated now), "
              "%.2f s, %.3f Gcells/s\n",
              a.output.c_str(), describe(a.written).c_str(), model.nx, model.ny, model.nz, shots.shots.size(),
              result.shots_migrated, stats.seconds, stats.gcells_per_second());
  if (figures) {
    start = steady_seconds();
    const std::vector<float> none;
    draw_figures(a, model, a.written.image ? result.image : none,
                 a.written.illumination ? result.illumination : none);
    whole.phases.add("figures", steady_seconds() - start, 0, "--png-dir " + a.png_dir);
  }
  print_whole_run(a, parallel, whole);
}

// The shared options' help in migrate's words (lsrtm's refer to these).
MigrationOptionHelp migrate_option_help() {
  MigrationOptionHelp help;
  help.smooth = "With --model: smoothing length in metres (FWHM of a Gaussian on the slowness); "
                "0: the model as is";
  help.reconstruction =
      "Source wavefield backwards in time: snapshots (the model region kept at every "
      "imaging step: two sweeps per shot), boundary (the model region's boundary ring "
      "saved each step and the source field re-propagated: three sweeps, less memory) "
      "or auto (snapshots where the memory estimate fits them, else boundary; "
      "docs/rtm.md section 4)";
  help.snapshot_precision =
      "Snapshots: float32, or float16 / int16 (16 bits with a power-of-two scale per "
      "256 cells: half the memory; docs/rtm.md section 4 gives their image errors)";
  help.snapshot_memory =
      "Snapshots: device (with the wavefields), host (pinned host memory, copied beside "
      "the steps) or auto (the device where they fit, else the host)";
  help.imaging_interval =
      "Apply the imaging condition every K-th step of the backward sweep with weight K "
      "(snapshots: one kept every K steps); auto: K from the Nyquist interval of 2.5 f0 "
      "with a safety factor of 0.5 (docs/rtm.md, section 5); 1: every step";
  help.backward_step =
      "Boundary reconstruction: fused (the source and receiver fields' steps and the "
      "imaging in one pass where the backend has one: CUDA regqueue_vec4, tma_ring) or "
      "separate";
  help.ring_precision =
      "Boundary reconstruction: the saved boundary rings in float32 (exact), int16 or "
      "float16 (16 bits with a power-of-two scale per 256 cells: half the memory; "
      "int16 images within 2e-4 of float32, float16 within 1.5e-3; docs/rtm.md "
      "section 4)";
  help.direct_wave = "Direct-wave removal: mute (zero each trace until the direct arrival has passed) "
                     "or none";
  help.output = "Output image file (HDF5)";
  help.png_dir =
      "Also write figures (PNG: inline, crossline and depth slices through the middle, in "
      "metres) of the image and the illumination, those --datasets writes, here: "
      "image.png, illumination.png";
  help.clip_percentile = "Image figure: colours clipped symmetrically at this percentile of |image|";
  help.colors =
      "Colour scale of the image figure, symmetric about zero: seismic (blue-white-red) or grey";
  help.resume = "Continue an interrupted run from its checkpoints (<output>.checkpoint-*.h5): "
                "finished shots are not migrated again, and the image equals an uninterrupted "
                "run's. Same inputs and options required; any number of MPI ranks";
  help.allow_other_grid =
      "Migrate on a model grid other than the one the shots were modelled on (shape, "
      "spacing or origin differ): every source and receiver must still lie in it and "
      "the shots' dt must be stable in it";
  return help;
}

void add_imaging_condition_option(CLI::App* cmd, MigrateArgs& a) {
  std::string conditions;
  std::vector<std::string> choices;
  for (const ImagingConditionInfo& row : imaging_condition_table()) {
    conditions += std::string(conditions.empty() ? "" : "; ") + row.name + ": " + row.description;
    choices.push_back(row.name);
  }
  cmd->add_option("--imaging-condition", a.imaging_condition,
                  "The imaging condition: " + conditions +
                      ". Not with --ranks-per-shot > 1 or --physics tti except cross (docs/rtm.md, "
                      "section 5c)")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

void add_data_phase_filter_option(CLI::App* cmd, MigrateArgs& a) {
  cmd->add_option("--data-phase-filter", a.data_phase_filter,
                  "Phase correction of the data before back-propagation, (-i omega/omega0)^a: auto "
                  "(a = 1 + d/4 for d = 0, 1, 2 directions sampled densely by receivers and "
                  "sources: halfway between a point scatterer's a = 2 and a reflector's d/2), or "
                  "fixed: none, half, full (a = 0, 1/2, 1: a reflector's for isolated receivers, "
                  "a dense line, an areal spread) or a number a from 0 to 3 (docs/rtm.md 6a)")
      ->check([](const std::string& value) -> std::string {
        double order = 0;
        try {
          if (parse_data_phase_order(value, order)) return "";
        } catch (const std::exception&) { // out of range (CLI11 names the option itself)
          return "an order must lie between 0 and 3, got " + value;
        }
        if (value == "auto" || value == "none" || value == "half" || value == "full") return "";
        return "expected auto, none, half, full or an order from 0 to 3, got '" + value + "'";
      })
      ->capture_default_str();
}

// The image's post-processing and the run's profile and overlap.
void add_image_options(CLI::App* cmd, MigrateArgs& a) {
  cmd->add_option("--illumination-eps", a.params.illumination_eps,
                  "Normalisation image / (illumination + eps), eps as a fraction of the mean "
                  "illumination")
      ->capture_default_str();
  cmd->add_flag("--no-laplacian", a.no_laplacian,
                "Skip the Laplacian post-filter (never applied with --imaging-condition isic)");
  cmd->add_option("--image-mute-depth", a.params.image_mute_depth,
                  "Zero the final image down to this depth (m below the model's top), where the "
                  "direct wave and the sources' own fields leave their residue; 0: no mute")
      ->check(non_negative_finite())
      ->capture_default_str();
  cmd->add_option("--image-mute-taper", a.params.image_mute_taper,
                  "Half-cosine ramp (m) from the muted image below --image-mute-depth to the full "
                  "image")
      ->check(non_negative_finite())
      ->capture_default_str();
  cmd->add_flag("--profile", a.params.profile,
                "Time every propagator operation and print where the shot loop's time went (wave "
                "steps, imaging, boundary save/restore, injection, host) with RTM Gcells/s and a "
                "PERFORMANCE line; timed operations are serialised, so the run may be a little slower");
  cmd->add_flag("--no-shot-overlap", a.no_shot_overlap,
                "Make each shot's set-up (its traces, its points) between the shots instead of on a "
                "thread of its own while the shot before steps; the image is the same (docs/rtm.md, "
                "\"Many shots\")");
}

// --datasets and the gathers' options.
void add_dataset_options(CLI::App* cmd, MigrateArgs& a) {
  cmd->add_option("--datasets", a.datasets,
                  "Volumes written into -o, comma-separated: image (the final image), "
                  "illumination (the stacked source illumination), image_raw (the stacked "
                  "unnormalised cross-correlation), each as large as the model, offset_gathers, "
                  "angle_gathers (with --offset-lags), or all (docs/rtm.md, sections 5 and 5d)")
      ->capture_default_str();
  cmd->add_option("--offset-lags", a.params.offset_gathers.lags,
                  "Subsurface-offset gathers: N horizontal lags each side of zero (along x, and along "
                  "y where the model has more than one cell along y), I(x, h) = sum S(x - h) R(x + h); "
                  "0: none. Written as /offset_gathers_x (_y) and the angle gathers made from them as "
                  "/angle_gathers_x (_y) unless --datasets says otherwise. Not with --resume, "
                  "--ranks-per-shot > 1 or --physics tti (docs/rtm.md, section 5d)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--offset-lag-step", a.params.offset_gathers.lag_step,
                  "Offset gathers: cells between lags")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--gather-stride", a.gather_stride,
                  "Offset gathers: cells between gather positions along x and y (SX or SX,SY), from "
                  "the model's first cell; every depth")
      ->capture_default_str();
  cmd->add_option("--gather-angles", a.params.angle_gathers.angles,
                  "Angle gathers: angles from -max to +max (--gather-max-angle) in equal steps")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--gather-max-angle", a.params.angle_gathers.max_degrees,
                  "Angle gathers: the largest reflection angle (degrees, below 90)")
      ->check(CLI::Range(0.0, 90.0))
      ->capture_default_str();
}

void add_checkpoint_every_option(CLI::App* cmd, MigrateArgs& a) {
  cmd->add_option("--checkpoint-every", a.checkpoint_every,
                  "Save the partial image every K finished shots (per shot group) next to the "
                  "output, for --resume; 0: only when stopped by SIGINT/SIGTERM; auto: as often as "
                  "costs at most 5% of the loop, from a checkpoint's measured time against a "
                  "shot's, none when every shot group has one shot (docs/rtm.md, section 11b)")
      ->check([](const std::string& value) -> std::string {
        int every = 0;
        return parse_checkpoint_every(value, every)
                   ? ""
                   : std::string(kCheckpointEveryExpected) + ", got '" + value + "'";
      })
      ->capture_default_str();
}

} // namespace

void register_migrate(CLI::App& rtm) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* cmd = rtm.add_subcommand("migrate", "Reverse time migration: image into HDF5 (+ figures)");
  MigrateArgs& a = *args;
  add_migration_options(cmd, a, a.params, migrate_option_help(), [cmd, &a](OwnOptionsPlace place) {
    switch (place) {
    case OwnOptionsPlace::after_smooth: break;
    case OwnOptionsPlace::after_imaging_interval: add_imaging_condition_option(cmd, a); break;
    case OwnOptionsPlace::after_direct_wave: add_data_phase_filter_option(cmd, a); break;
    case OwnOptionsPlace::after_direct_wave_velocity: add_image_options(cmd, a); break;
    case OwnOptionsPlace::after_output: add_dataset_options(cmd, a); break;
    case OwnOptionsPlace::after_resume: add_checkpoint_every_option(cmd, a); break;
    case OwnOptionsPlace::after_backend:
      add_physics_option(cmd, a.physics);
      add_shear_taper_options(cmd, a.params.shear_taper);
      break;
    }
  });
  cmd->callback([args, cmd]() { run_migrate(*args, cmd); });
}

} // namespace rtm::app
