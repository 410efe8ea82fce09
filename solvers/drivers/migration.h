// Reverse time migration (docs/rtm.md): per shot, the source wavefield forward in time, the
// receiver wavefield backwards from the recorded data, the zero-lag cross-correlation imaging
// condition with source-illumination normalisation; stacking; a Laplacian post-filter.
//
// Written once against the wavefield contracts (solvers/contracts/wavefield.h, solvers/contracts/shot_fields.h), so the
// same driver runs on the CPU, the GPU and a grid split over ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "io/checkpoint_file.h"
#include "io/shot_file.h"
#include "solvers/contracts/imaging_condition.h"
#include "solvers/contracts/offset_gathers.h"
#include "solvers/drivers/angle_gathers.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/checkpoint_policy.h"
#include "solvers/drivers/data_phase_filter.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/shot_loop.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/slab_model.h"

namespace rtm {

// How the source wavefield is made available backwards in time.
enum class Reconstruction {
  automatic, // snapshots where they fit (device memory, else host memory), else boundary
  boundary,  // save the boundary ring of the model region each step, re-propagate backwards
  snapshots, // keep the model region at every imaging step (SnapshotStore), image from them:
             // two sweeps per shot instead of three
};
Reconstruction parse_reconstruction(const std::string& name); // "auto" | "boundary" | "snapshots"
// "float32" | "float16" | "int16"; `option` names the option in the message.
RingPrecision parse_ring_precision(const std::string& name,
                                   const std::string& option = "--ring-precision");
// Where snapshot reconstruction keeps its snapshots: chosen by the memory estimate, or as asked.
enum class SnapshotMemory { automatic, device, host };
SnapshotMemory parse_snapshot_memory(const std::string& name); // "auto" | "device" | "host"
const char* ring_precision_name(RingPrecision p);
const char* reconstruction_name(Reconstruction r);

// How the direct (source-to-receiver) wave is kept out of the image.
enum class DirectWaveRemoval {
  none,
  mute, // zero each trace before the direct arrival has passed (mute_direct_wave)
};
DirectWaveRemoval parse_direct_wave_removal(const std::string& name); // "none" | "mute"

// --imaging-condition `name` (a row of imaging_condition_table()); InputError naming the choices.
ImagingCondition parse_imaging_condition(const std::string& name);
// Refuses (InputError naming --imaging-condition and why) a condition the run cannot compute: on
// the fields of a `physics` its row does not support (TTI), or on a grid split over
// `ranks_per_shot` > 1 ranks.
void check_imaging_condition(ImagingCondition condition, Physics physics, int ranks_per_shot);

// Refuses (InputError naming --offset-lags and why) offset gathers the run cannot make: on the
// fields of a `physics` without them (physics_info(...).supports_offset_gathers), on a grid split over `ranks_per_shot` > 1 ranks, or with `resume` (the checkpoints hold
// the image and the illumination, not the gathers, so a resumed run's gathers would miss the
// shots before the stop); and angle gathers where this build has no FFTW. Nothing without gathers.
struct MigrationParams;
void check_offset_gathers(const MigrationParams& params, Physics physics, int ranks_per_shot,
                          bool resume);

struct MigrationParams {
  Reconstruction reconstruction = Reconstruction::automatic;
  // Snapshot reconstruction: how the snapshots are coded (int16 with a scale per block of 256
  // cells by default, solvers/contracts/ring_codec.h) and where they live.
  RingPrecision snapshot_precision = RingPrecision::fixed16;
  SnapshotMemory snapshot_memory = SnapshotMemory::automatic;
  DirectWaveRemoval direct_wave = DirectWaveRemoval::mute;
  double direct_wave_velocity = 0; // m/s for the mute; 0: the migration velocity at each source
  // Phase correction of the data before back-propagation (solvers/drivers/data_phase_filter.h):
  // automatic chooses its order from the geometry of receivers and sources; `order` takes
  // data_phase_order.
  DataPhaseFilter data_phase_filter = DataPhaseFilter::automatic;
  double data_phase_order = 0;
  // eps of the normalisation I / (illumination + eps), as a fraction of the mean illumination.
  double illumination_eps = 1e-2;
  // The imaging condition (solvers/contracts/imaging_condition.h; docs/rtm.md, section 5c).
  ImagingCondition imaging_condition = ImagingCondition::cross;
  // Subsurface-offset gathers (solvers/contracts/offset_gathers.h; docs/rtm.md, section 5d):
  // none unless offset_gathers.lags > 0; always the cross-correlation S(x - h) R(x + h), whatever
  // the image's condition. With make_angle_gathers also the angle gathers made from them
  // (solvers/drivers/angle_gathers.h).
  OffsetGatherSpec offset_gathers;
  bool make_angle_gathers = false;
  AngleGatherSpec angle_gathers;
  // The Laplacian post-filter, where the imaging condition's row has it (not with ISIC, which
  // weights the image by |k|^2 itself); false: never.
  bool laplacian_filter = true;
  // Whether MigrationResult returns the raw image and the illumination beside the image. false
  // (a run that writes neither): the image is finished in their memory and they come back empty,
  // the same values without two fresh volumes (at 512^3, 0.8 s of page faults on an H200's host).
  bool keep_sums = true;
  // Top mute of the final image (solvers/drivers/image_mute.h): zero down to this depth (m below
  // the model's top; 0: none), then a half-cosine ramp over image_mute_taper metres.
  double image_mute_depth = 0;
  double image_mute_taper = 0;
  // Image every k-th step of the backward sweep with weight k (docs/rtm.md, section 5); 0: k
  // from the data's highest frequency (automatic_imaging_interval). Snapshot reconstruction keeps
  // a snapshot at each of those steps.
  int imaging_interval = 0;
  // Boundary reconstruction: step the source and the receiver field (and image) through
  // ShotFields::step_both, one fused pass where the backend has one; false: the separate calls.
  bool fused_backward = true;
  // Boundary reconstruction: the saved rings in float32 (exact) or in 16 bits (int16 or float16)
  // with a power-of-two scale per block of 256 cells (half the memory; docs/rtm.md, section 4).
  RingPrecision ring_precision = RingPrecision::full;
  // Time every wavefield operation (TimingProbe::enable_timing) and print where the time went
  // at the end (print_migration_profile). Off: no timing events, no extra synchronisation.
  bool profile = false;
  // Many shots (docs/rtm.md, "Many shots"): the next shot's set-up (its traces made ready, its
  // points placed) runs on a thread of its own while this shot steps, and the point sets stay
  // from shot to shot, their new points and data queued behind the running shot where the
  // backend can (PointSet::replace). false: each shot's set-up between the shots. The image is
  // the same bit for bit either way.
  bool overlap_shots = true;
  BoundaryConfig boundary;
  // How sources and receivers between nodes are spread over them (solvers/drivers/point_interpolation.h).
  PointInterpolation point_interpolation = PointInterpolation::sinc;
  BackendOptions backend;
  // TTI: delta blended towards epsilon around every source and receiver (solvers/drivers/shear_taper.h).
  ShearTaperOptions shear_taper;
  // Least-squares RTM's passes (solvers/drivers/lsrtm.h). When set, each shot's data are not the
  // file's traces but the Born data of this perturbation ([nz][ny][nx] over the model), modelled
  // on the run's own fields (born_model_one_shot) and then muted as recorded data are: the raw
  // image is then L'L of the perturbation. Every rank holds it whole; the data phase filter must be
  // none (the pass is an adjoint, not an image), the model whole on each rank, the physics iso.
  const std::vector<float>* born_perturbation = nullptr;
  // Least-squares RTM: model-sized float32 vectors its solver keeps on the host beside the run,
  // for the memory estimate (and, when > 0, the Born perturbation on the device).
  int least_squares_vectors = 0;
};

// Memory each reconstruction strategy needs for one shot, in bytes (float32 values).
struct ReconstructionMemory {
  int64_t ring_cells = 0; // boundary ring of the model region
  int ring_steps = 0;     // slots stored: nt - 1 (the last state is the forward run's own)
  int64_t box_cells = 0;  // model region
  int64_t box_row = 1;    // its cells along x (the snapshots' rows)
  int snapshot_interval = 1; // steps between snapshots: the imaging interval
  int snapshot_count = 0;
  int64_t boundary_bytes() const { return ring_cells * ring_steps * int64_t(sizeof(float)); }
  // The same rings in 16-bit floats with a scale per block (RingPrecision::half16).
  int64_t boundary_half_bytes() const {
    return ring_step_bytes(ring_cells, RingPrecision::half16, 4) * ring_steps;
  }
  int64_t snapshot_bytes(RingPrecision precision = RingPrecision::full) const {
    return coded_rows_bytes(box_row, box_cells / box_row, precision) * snapshot_count;
  }
};

// The Nyquist interval of f_max = 2.5 f0: k = floor(1 / (2 f_max dt)), >= 1.
int snapshot_interval(double dt, double f0);
// The imaging interval of boundary reconstruction: the Nyquist interval of the wavefields' highest
// frequency f_max = 2.5 f0 with a safety factor, k = floor(kImagingIntervalSafety / (2 f_max dt)),
// at least 1 (docs/rtm.md, section 5, says why this factor).
constexpr double kImagingIntervalSafety = 0.5;
int automatic_imaging_interval(double dt, double f0);
// MigrationParams::imaging_interval resolved: the interval boundary reconstruction images at.
int imaging_interval(const MigrationParams& params, double dt, double f0);
// The memory of both strategies, snapshots every `snapshot_interval` steps.
ReconstructionMemory reconstruction_memory(const SimulationGrid& sim, int nt, int snapshot_interval);

// One shot on a shot's fields (solvers/contracts/shot_fields.h): the source point set lives on the source
// field, the receiver set (data uploaded as [t][receiver]) on the receiver field, and the image was
// allocated on the model box beforehand. Accumulates
//   image += sum_n S[n] * R[n+1]   and   illumination += sum_n S[n]^2
// where S[n] is the source wavefield at step n (sources injected as in model_one_shot) and R[n+1]
// the receiver wavefield that the data samples d[m], m >= n+1, produce when injected in reverse
// time. This pairing makes the raw image the exact adjoint of born_model_one_shot (docs/rtm.md).
// Boundary reconstruction needs a boundary store of the source field, made beforehand
// (source().make_boundary_store(box, nt - 1)).
struct ShotSets {
  PointSet* source = nullptr;   // on the source field: one point, the wavelet uploaded
  PointSet* receiver = nullptr; // on the receiver field: the receivers, the (muted) data uploaded
  BoundaryStore* boundary = nullptr; // of the source field, for boundary reconstruction
  // Of the source field, for snapshot reconstruction: a slot per snapshot. Without one,
  // migrate_one_shot keeps float32 snapshots in a store of its own for the shot.
  SnapshotStore* snapshots = nullptr;
  int nt = 0;
  float source_scale = 1; // injection scale of the source (SimulationGrid::injection_scale)
  // Numerical health (solvers/drivers/health.h): when set, the source field is checked while it runs
  // forward and the receiver field while it runs backwards, at the steps HealthCheck::due names,
  // and a failed check throws NumericalInstability naming `label` ("shot 3"), the field and the
  // step. The source field's backward re-propagation (boundary saving) is not checked: outside the
  // box it runs the damping in reverse and grows by design; inside it repeats the checked forward run.
  const HealthCheck* source_health = nullptr;
  const HealthCheck* receiver_health = nullptr;
  std::string label;
  // When set, every wave step of either field is ticked on it: per shot nt forward source steps,
  // then nt receiver steps and (boundary reconstruction) nt - 1 backward source steps.
  ShotProgress* progress = nullptr;
};
//
// `backward` (boundary reconstruction only): image every backward.imaging_interval-th step
// (n = 0, k, 2k, ...) with weight k, and step both fields through ShotFields::step_both when
// backward.fused. The default, every step and separate calls, is the exact adjoint of
// born_model_one_shot.
struct BackwardSweep {
  int imaging_interval = 1;
  bool fused = false;
};
void migrate_one_shot(ShotFields& fields, const ShotSets& shot, const Box& box,
                      Reconstruction reconstruction, int snapshot_interval,
                      const BackwardSweep& backward = {});

// The source half of migrate_one_shot: runs the source field forward over nt steps, saving what
// `reconstruction` needs, then calls visit(n, weight) for n = nt-1 down to 0. With weight > 0 the
// source field's current field holds S[n] inside `box` (exactly for boundary saving, weight 1; a
// snapshot for every `snapshot_interval`-th n, weight = the interval); weight 0: no S at this n.
//
// keep_previous_snapshot (snapshot reconstruction): before each restore the source field's time
// is reversed, so that its previous field holds the snapshot restored before, S[n+k] (S[nt] at the
// first), inside the box: the later level a time derivative needs (ImagingConditionInfo::
// uses_previous_level); no extra memory.
void run_source_backwards(Wavefield& source_field, const ShotSets& shot, const Box& box,
                          Reconstruction reconstruction, int snapshot_interval,
                          const std::function<void(int n, float weight)>& visit,
                          bool keep_previous_snapshot = false);

// Zeroes each trace [nrec][nt] before the direct wave has passed: t < t0 + r / v + 1 / f0, with a
// half-cosine ramp up to full amplitude over the next 0.5 / f0 (r: source-receiver distance).
void mute_direct_wave(std::vector<float>& traces, const Position& source,
                      const std::vector<Position>& receivers, int nt, double dt, double t0, double f0,
                      double velocity);

// image / (illumination + eps), eps = eps_fraction * mean(illumination), by
// solvers/contracts/image_finish.h's arithmetic (the mean summed by rows of nx cells).
std::vector<float> normalise_image(const std::vector<float>& image,
                                   const std::vector<float>& illumination, int nx,
                                   double eps_fraction);
// The same in place: `image` becomes the normalised image.
void normalise_image_in_place(std::vector<float>& image, const std::vector<float>& illumination,
                              int nx, double eps_fraction);
// The same with eps given (the z-slab split sums the illumination over its ranks): threaded.
void normalise_image_with_eps(std::vector<float>& image, const std::vector<float>& illumination,
                              double eps);
// The sum of an illumination of rows of nx cells, in image_finish.h's order (threaded by rows).
double illumination_sum(const std::vector<float>& illumination, int nx);
// -lap of a [nz][ny][nx] volume, 2nd-order 7-point stencil with the grid spacings, edge values
// repeated outside the volume. Suppresses the low-wavenumber backscatter RTM leaves.
std::vector<float> laplacian_filter(const std::vector<float>& volume, int nx, int ny, int nz,
                                    double dx, double dy, double dz);
// The same into `out` (resized to the volume; its memory reused when it is large enough).
void laplacian_filter_into(const std::vector<float>& volume, int nx, int ny, int nz, double dx,
                           double dy, double dz, std::vector<float>& out);

// Where the time of a migration went (MigrationParams::profile). `loop_s` is the loop over the
// shots, the part that scales with shots and steps; the fields' operations inside it are
// in `timing` (both fields together), and what is left is host work, transfers of whole
// series, synchronisation and idle device time.
struct MigrationProfile {
  bool measured = false;
  std::string propagator;  // the source field's name, e.g. cuda/regqueue_vec4
  GridLayout grid;         // the compute grid (absorbing layers included)
  int shots = 0, nt = 0;
  int sweeps = 0;          // wave-step sweeps per shot: 3 with boundary saving, 2 with snapshots
  int imaging_interval = 1; // steps between images of the backward sweep (snapshots: their interval)
  double setup_s = 0;      // before the loop: propagators (variant choice), stores, receivers
  double fields_s = 0;     // of which making the fields, --variant auto's choice included
  double autotune_s = 0;   // of which --variant auto's choice (timing, or the tuning cache)
  int autotune_choices = 0, autotune_from_cache = 0; // how many, and of them from the cache
  double loop_s = 0;       // the shot loop, wall clock
  double finish_s = 0;     // after the loop: image download, normalisation, filter
  double download_s = 0;   // of which the sums copied from the fields to the host
  double release_s = 0;    // after the finish: the fields and stores freed (device, pinned memory)
  PropagatorTiming timing; // inside the loop
  // The shots' set-up (MigrationParams::overlap_shots), summed over the shots: `setup_wait_s` on
  // the loop's own thread before each shot's first step could be queued (waiting for the set-up
  // made ahead, or making it there; the point sets and their data), the host-only time between
  // shots; `prefetch_s` the set-up made ahead on the prefetch thread while the shot before stepped
  // (its time less any wait for it on the loop's thread: the part hidden behind the steps);
  // `prefetched_shots` how many shots took their set-up from the prefetch thread (all but each
  // group's first when the overlap is on, its first included: that one is waited for whole).
  bool overlap_shots = false;
  double setup_wait_s = 0;
  double prefetch_s = 0;
  int prefetched_shots = 0;
  // The loop thread's time in checkpoints (MigrationControl::checkpoint_every): the partial sums'
  // download and any wait for the file before; the file itself is written beside the steps.
  double checkpoint_s = 0;
  // The checkpoint files themselves: how many this rank wrote, the seconds their writing took
  // (on the writer's thread, beside the steps; with the model split over a group, on the loop's
  // thread, inside checkpoint_s) and their bytes.
  int checkpoint_files = 0;
  double checkpoint_write_s = 0;
  uint64_t checkpoint_bytes = 0;

  // The wall of the loop less the timed operations: on a GPU the time the device waits for the
  // host (set-up between shots, health-check reads, launch gaps) and untimed transfers; on the
  // CPU the host work between the operations. The profile's idle.
  double host_s() const { return loop_s - timing.total_ms() * 1e-3; }
  double idle_fraction() const { return loop_s > 0 ? host_s() / loop_s : 0.0; }
  // RTM throughput: compute cells x time steps x 2 (forward and backward propagation, each
  // time step counted once per direction) per second of the loop.
  double rtm_gcells_per_s() const;
  // Wave-step throughput: every sweep counted (the reconstruction's backward source sweep too).
  double sweep_gcells_per_s() const;
};
// The profile as lines of text ("rtm: profile: ...") and a closing PERFORMANCE line.
void print_migration_profile(const MigrationProfile& profile, std::ostream& out);

// How a migration is shared among MPI ranks, checkpointed and stopped (docs/parallel.md,
// docs/robustness.md); the stop request, the shot-started call and the progress options are the
// shot loop's (solvers/drivers/shot_loop.h). The default is one rank, no checkpoints, never
// stopped.
struct MigrationControl : ShotLoopControl {
  const ParallelContext* parallel = nullptr; // nullptr: one rank
  // Checkpoints: "" writes none; otherwise the output file whose checkpoints they are
  // (checkpoint_path(output, group)). Each shot group writes its partial sums every
  // `checkpoint_every` shots it finishes, and when the run is stopped; kAutomaticCheckpoints
  // (solvers/drivers/checkpoint_policy.h): as often as costs at most 5% of the loop, none when
  // every group has one shot.
  std::string checkpoint_output;
  int checkpoint_every = 1;
  // Continue from the checkpoints of `checkpoint_output` (any number of them, from any number of
  // ranks): their shots are not migrated again and their sums are carried on. Without resume,
  // existing checkpoints are refused (they hold work that a fresh run would throw away).
  bool resume = false;
  CheckpointIdentity identity; // of this run (migration_identity); checked against checkpoints
  // With MigrationParams::born_perturbation: called on the rank that ran the shot with each
  // shot's Born data [nrec][nt] before the mute (`shot`: its index in the file). For
  // born_shot_file (solvers/drivers/lsrtm.h).
  std::function<void(int shot, const std::vector<float>& traces)> born_data;
  // stop_requested: a signal number stops the run at the next shot boundary (then it checkpoints
  // and returns MigrationResult::stop_signal). shot_started: `shot` is the shot's index in the file.
};

// The identity of a migration for its checkpoints: `shots_path`'s size and a fingerprint of its
// content, the migration velocities, and the parameters that change the raw image.
CheckpointIdentity migration_identity(const VelocityModel& migration_model, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params);
// The same for a model split over `group` (each rank holding its part): equal to the whole model's.
// Collective over the group.
CheckpointIdentity migration_identity(const SlabModel& part, MPI_Comm group, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params);

struct MigrationResult {
  std::vector<float> image;        // final: normalised, filtered; [nz][ny][nx] of the model
  std::vector<float> raw_image;    // stacked sum_n S R, before normalisation and filtering
  std::vector<float> illumination; // stacked sum_n S^2
  ReconstructionMemory memory;
  Reconstruction reconstruction = Reconstruction::boundary; // the one taken (automatic resolved)
  MigrationProfile profile;        // measured when MigrationParams::profile
  DataPhaseFilter data_phase_filter = DataPhaseFilter::none; // as asked (automatic: chosen)
  double data_phase_order = 0;                               // the order applied
  // With params.offset_gathers: the stacked offset gathers (raw sums, like raw_image), dense as
  // gather_layout says, and with params.make_angle_gathers the angle gathers ([axis][gy][gx][z]
  // [angle]); world rank 0 only, like the image.
  std::vector<float> offset_gathers, angle_gathers;
  OffsetGatherLayout gather_layout;
  // With several ranks only world rank 0 holds the image, raw image and illumination (the other
  // ranks' are empty). A run stopped by MigrationControl::stop_requested returns no image and the
  // signal here (every rank the same), its checkpoints written.
  int stop_signal = 0;
  int shots_migrated = 0;          // by this run, over all ranks (resumed shots not counted)
  // The data injected, as least squares weighs them: the sum over the shots migrated by this run
  // of <x, w x>, x a shot's traces before the mute (after the time-dispersion transform; the Born
  // data with MigrationParams::born_perturbation), w the direct-wave mute's weights (1 without a
  // mute). Summed over the shot groups, on world rank 0 (0 elsewhere, and with the model split).
  double data_norm2 = 0;
  // With the model split over the group (migrate_shots on a SlabModel) no rank holds the whole
  // image: each rank of group 0 holds planes image_z_first .. of the model in image, raw_image and
  // illumination (write_slab_image writes them), the other ranks none.
  int image_z_first = 0;
};

// Refuses (InputError with both numbers and what to change) a migration that cannot fit in memory,
// before its model is read or smoothed: from the model's shape alone (read_model_shape reads the
// file's header), the shot file's header and acquisition (`shots` may be read_shot_geometry's,
// without traces) and the options, on one rank per shot or on control.parallel's slabs (with the
// smoothing's reach of `smooth` metres), for a run of `physics` (--physics; params.boundary then
// the absorber apply_physics_options chose for it).
// `checkpoints`: the run writes checkpoints every few shots. The same estimate migrate_shots
// checks again before it allocates.
void check_migration_memory_before_reading(const VelocityModel& shape, const ShotFile& shots,
                                           const MigrationParams& params,
                                           const ParallelContext& parallel, Physics physics,
                                           double smooth, bool checkpoints);

// Migrates every shot of `shots` in `migration_model`. Prints the memory of both reconstruction
// strategies before the run and progress per shot (with time left) to `log`. The data's dt must be
// stable in the migration model (InputError otherwise). stats counts both propagations (and the
// backward source propagation of boundary reconstruction) as cell updates. With params.profile
// the profile is measured, printed to `log` at the end and returned in the result.
//
// With `control`, shots are shared over its ranks (collective: every rank calls it with the same
// arguments; progress lines name the rank; other messages come from world rank 0 only), and the
// run checkpoints, resumes and stops as it says.
MigrationResult migrate_shots(const VelocityModel& migration_model, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log,
                              RunStats* stats = nullptr, const MigrationControl& control = {});

// The same on a group whose ranks each hold only their slab's part of the migration model
// (solvers/drivers/slab_model.h: read_slab_model): control.parallel's groups are the part's
// ranks. Each rank builds its slab alone; what needs the whole model (the stability check, the
// layers' strength, the mute velocity at each source) comes from the part's reduced extremes or a
// reduction over the group. Equal bit for bit to migrate_shots on the whole model on the CPU.
MigrationResult migrate_shots(const SlabModel& part, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log, RunStats* stats,
                              const MigrationControl& control);

} // namespace rtm
