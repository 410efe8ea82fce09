#include "solvers/contracts/tti_ring.h"
#include "solvers/drivers/tti_setup.h"
#include "solvers/drivers/migration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/provenance.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/checkpoint_writer.h"
#include "solvers/drivers/decomposed_backend.h"
#include "solvers/drivers/image_mute.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/shot_loop.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/shot_prefetch.h"
#include "solvers/drivers/slab_checkpoint.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/slab_image.h"
#include "solvers/drivers/smoothing.h"
#include "solvers/drivers/time_dispersion.h"

namespace rtm {

Reconstruction parse_reconstruction(const std::string& name) {
  if (name == "auto") return Reconstruction::automatic;
  if (name == "boundary") return Reconstruction::boundary;
  if (name == "snapshots") return Reconstruction::snapshots;
  throw InputError("--reconstruction: expected auto, boundary or snapshots, got '" + name + "'");
}

SnapshotMemory parse_snapshot_memory(const std::string& name) {
  if (name == "auto") return SnapshotMemory::automatic;
  if (name == "device") return SnapshotMemory::device;
  if (name == "host") return SnapshotMemory::host;
  throw InputError("--snapshot-memory: expected auto, device or host, got '" + name + "'");
}

const char* reconstruction_name(Reconstruction r) {
  return r == Reconstruction::automatic ? "auto" : r == Reconstruction::boundary ? "boundary" : "snapshots";
}

RingPrecision parse_ring_precision(const std::string& name, const std::string& option) {
  if (name == "float32") return RingPrecision::full;
  if (name == "float16") return RingPrecision::half16;
  if (name == "int16") return RingPrecision::fixed16;
  throw InputError(option + ": expected float32, float16 or int16, got '" + name + "'");
}

const char* ring_precision_name(RingPrecision p) {
  return p == RingPrecision::full ? "float32" : p == RingPrecision::half16 ? "float16" : "int16";
}

DirectWaveRemoval parse_direct_wave_removal(const std::string& name) {
  if (name == "none") return DirectWaveRemoval::none;
  if (name == "mute") return DirectWaveRemoval::mute;
  throw InputError("--direct-wave: expected mute or none, got '" + name + "'");
}

ImagingCondition parse_imaging_condition(const std::string& name) {
  try {
    return imaging_condition_named(name).id;
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--imaging-condition: ") + e.what());
  }
}

void check_imaging_condition(ImagingCondition condition, bool tti, int ranks_per_shot) {
  const ImagingConditionInfo& row = imaging_condition_info(condition);
  if (tti && !row.supports_tti)
    throw InputError(std::string("--imaging-condition ") + row.name + " is not offered with "
                     "--physics tti: " + row.why_no_tti + "; use --imaging-condition cross");
  if (ranks_per_shot > 1 && !row.supports_slab_split)
    throw InputError(std::string("--imaging-condition ") + row.name + " is not offered with "
                     "--ranks-per-shot " + std::to_string(ranks_per_shot) + " (a grid split "
                     "into z-slabs): " + row.why_no_slab_split + "; use --ranks-per-shot 1 "
                     "(shots in parallel) or --imaging-condition cross");
}

void check_offset_gathers(const MigrationParams& params, bool tti, int ranks_per_shot, bool resume) {
  if (!params.offset_gathers.enabled()) return;
  const std::string option = "--offset-lags " + std::to_string(params.offset_gathers.lags);
  if (tti)
    throw InputError(option + " is not offered with --physics tti (the TTI fields have no offset "
                              "gathers yet); leave --offset-lags out");
  if (ranks_per_shot > 1)
    throw InputError(option + " is not offered with --ranks-per-shot " +
                     std::to_string(ranks_per_shot) + " (a grid split into z-slabs: a lag reaches "
                     "across the slabs); use --ranks-per-shot 1 (shots in parallel)");
  if (resume)
    throw InputError(option + " cannot be used with --resume: the checkpoints hold the image "
                              "and the illumination, not the gathers, so the gathers would miss "
                              "the shots migrated before the stop; resume without --offset-lags, "
                              "or run again from the first shot");
}

namespace {
// The Laplacian post-filter: asked for, and part of the imaging condition's row.
bool applies_laplacian_filter(const MigrationParams& params) {
  return params.laplacian_filter && imaging_condition_info(params.imaging_condition).laplacian_filter;
}

} // namespace

int snapshot_interval(double dt, double f0) {
  const double f_max = kRickerFmaxOverF0 * f0;
  return std::max(1, int(std::floor(1.0 / (2.0 * f_max * dt))));
}

int automatic_imaging_interval(double dt, double f0) {
  const double f_max = kRickerFmaxOverF0 * f0;
  return std::max(1, int(std::floor(kImagingIntervalSafety / (2.0 * f_max * dt))));
}

int imaging_interval(const MigrationParams& params, double dt, double f0) {
  if (params.imaging_interval < 0)
    throw InputError("--imaging-interval: expected a positive number of steps (or auto), got " +
                     std::to_string(params.imaging_interval));
  return params.imaging_interval > 0 ? params.imaging_interval : automatic_imaging_interval(dt, f0);
}

ReconstructionMemory reconstruction_memory(const SimulationGrid& sim, int nt, int interval) {
  ReconstructionMemory m;
  const Box box = model_box(sim);
  // TTI: both fields, 2 kHalo cells thick (solvers/contracts/tti_ring.h).
  m.ring_cells = sim.model.anisotropy.empty() ? boundary_ring_cells(box) : 2 * tti_ring_cells(box);
  m.ring_steps = std::max(1, nt - 1);
  m.box_cells = box.cells();
  m.box_row = std::max(box.nx(), 1);
  m.snapshot_interval = std::max(interval, 1);
  m.snapshot_count = (nt - 1) / m.snapshot_interval + 1; // steps 0, k, 2k, ... <= nt - 1
  return m;
}

namespace {

// "shot 3, source wavefield ..." (or the field alone when the shot has no label).
std::string labelled(const std::string& label, const std::string& field) {
  return label.empty() ? field : label + ", " + field;
}

} // namespace

// The index bookkeeping here and in migrate_one_shot makes the image the adjoint of Born
// modeling; docs/rtm.md derives it. Forward: at the top of iteration n the source field holds
// S[n]; step + inject(n) make S[n+1]. Backward (boundary saving): from (S[n+1], S[n]) the
// reversed step + inject(n) make S[n-1], because
//   S[n+1] = 2 S[n] - S[n-1] + v2dt2 (lap S[n] + f[n])  <=>  S[n-1] = 2 S[n] - S[n+1] + v2dt2 (lap S[n] + f[n]),
// exactly in the box's interior; the ring saved at step n-1 then replaces what the reversed step
// computed from the damped cells outside.
namespace {

// The forward half: S[0] .. S[nt-1], saving the ring of S[n] (boundary) or S[n] every
// `interval`-th step into `snapshots` (slot n / interval).
void run_source_forward(Wavefield& S, const ShotSets& shot, Reconstruction reconstruction,
                        int interval, SnapshotStore* snapshots) {
  const int nt = shot.nt;
  if (reconstruction == Reconstruction::snapshots) {
    if (interval < 1) throw std::invalid_argument("run_source_backwards: snapshot interval must be >= 1");
    if (!snapshots || snapshots->slots() < (nt - 1) / interval + 1)
      throw std::invalid_argument("run_source_backwards: the snapshot store needs a slot for each of "
                                  "steps 0, k, 2k, ... < nt");
  } else if (!shot.boundary) {
    throw std::invalid_argument("run_source_backwards: boundary reconstruction needs a boundary store");
  }

  S.zero_state();
  for (int n = 0; n < nt; ++n) {
    if (reconstruction == Reconstruction::boundary) {
      if (n < nt - 1) shot.boundary->save(n); // ring of S[n]; S[nt-1] is the final state itself
    } else if (n % interval == 0) {
      snapshots->save(n / interval);
    }
    S.step();
    shot.source->inject(n, shot.source_scale);
    if (shot.source_health && shot.source_health->due(n + 1, nt))
      check_wavefield(S, *shot.source_health, n + 1, nt,
                      labelled(shot.label, "source wavefield (forward in time)"));
    if (shot.progress) shot.progress->tick();
  }
}

// The shot's snapshot store, or (none given) a float32 one of the shot's own in `own`.
SnapshotStore* snapshot_store(Wavefield& S, const ShotSets& shot, const Box& box, int interval,
                              std::unique_ptr<SnapshotStore>& own) {
  if (shot.snapshots) return shot.snapshots;
  own = S.make_snapshot_store(box, (shot.nt - 1) / std::max(interval, 1) + 1, RingPrecision::full,
                              SnapshotPlace::host);
  return own.get();
}

// The receiver field's health after its step to R[n] (steps_done = nt - n).
void check_receiver(const Wavefield& R, const ShotSets& shot, int n) {
  const int steps_done = shot.nt - n;
  if (shot.receiver_health && shot.receiver_health->due(steps_done, shot.nt))
    check_wavefield(R, *shot.receiver_health, steps_done, shot.nt,
                    labelled(shot.label, "receiver wavefield (backwards in time, now at time "
                                         "sample " + std::to_string(n) + ")"));
}

} // namespace

void run_source_backwards(Wavefield& S, const ShotSets& shot, const Box& box,
                          Reconstruction reconstruction, int interval,
                          const std::function<void(int n, float weight)>& visit,
                          bool keep_previous_snapshot) {
  const int nt = shot.nt;
  std::unique_ptr<SnapshotStore> own;
  SnapshotStore* snapshots = reconstruction == Reconstruction::snapshots
                                 ? snapshot_store(S, shot, box, interval, own)
                                 : nullptr;
  run_source_forward(S, shot, reconstruction, interval, snapshots);

  if (shot.progress) shot.progress->start_phase(1); // the backward sweeps
  if (reconstruction == Reconstruction::boundary) S.reverse_time(); // current: S[nt-1]
  for (int n = nt - 1; n >= 0; --n) {
    if (reconstruction == Reconstruction::boundary) {
      visit(n, 1.0f);
      if (n > 0) {
        S.step();
        shot.source->inject(n, shot.source_scale);
        shot.boundary->restore(n - 1);
        if (shot.progress) shot.progress->tick();
      }
    } else if (n % interval == 0) {
      if (keep_previous_snapshot) S.reverse_time(); // previous: the snapshot restored before
      snapshots->restore(n / interval);
      visit(n, float(interval)); // each snapshot stands for `interval` steps of the sum over n
    } else {
      visit(n, 0.0f);
    }
  }
}

// At the top of iteration n the receiver field holds R[n+1] (R[nt] = R[nt+1] = 0); its step +
// inject(d[n]) make R[n].
void migrate_one_shot(ShotFields& fields, const ShotSets& shot, const Box& box,
                      Reconstruction reconstruction, int interval, const BackwardSweep& backward) {
  if (reconstruction == Reconstruction::automatic)
    throw std::invalid_argument("migrate_one_shot: resolve the automatic reconstruction first");
  Wavefield& R = fields.receiver();
  R.zero_state();
  if (reconstruction == Reconstruction::snapshots) {
    // Two sweeps: the receiver field steps alone; at every snapshot the source field's current
    // field is S[n] inside the box again, and the image pairs it with R[n+1].
    run_source_backwards(fields.source(), shot, box, reconstruction, interval, [&](int n, float weight) {
      if (weight > 0) fields.accumulate_image(weight);
      R.step();
      shot.receiver->inject(n, 1.0f);
      check_receiver(R, shot, n);
      if (shot.progress) shot.progress->tick();
    }, imaging_condition_info(fields.imaging_condition()).uses_previous_level);
    return;
  }

  // Boundary reconstruction: the backward loop of run_source_backwards with the receiver's step
  // beside the source's, so that both can be one ShotFields::step_both. Imaging every k-th step
  // with weight k: the sum over n of S[n] R[n+1] sampled at n = 0, k, 2k, ..., each sample
  // standing for the k terms around it (docs/rtm.md, section 5).
  const int k = backward.imaging_interval;
  if (k < 1)
    throw std::invalid_argument("migrate_one_shot: imaging interval must be >= 1, got " +
                                std::to_string(k));
  Wavefield& S = fields.source();
  const int nt = shot.nt;
  run_source_forward(S, shot, reconstruction, interval, nullptr);
  if (shot.progress) shot.progress->start_phase(1); // the backward sweeps
  S.reverse_time(); // current: S[nt-1]
  for (int n = nt - 1; n >= 0; --n) {
    const float weight = n % k == 0 ? float(k) : 0.0f;
    // S[n] and R[n+1] are current here; the image pairs them (docs/rtm.md, section 3).
    if (backward.fused && n > 0) {
      fields.step_both(weight); // R -> R[n] (before the data), S -> S[n-1] (before its source)
    } else {
      if (weight > 0) fields.accumulate_image(weight);
      R.step();
    }
    shot.receiver->inject(n, 1.0f);
    check_receiver(R, shot, n);
    if (shot.progress) shot.progress->tick();
    if (n > 0) {
      if (!backward.fused) S.step();
      shot.source->inject(n, shot.source_scale);
      shot.boundary->restore(n - 1); // last: a source in the ring is exact too
      if (shot.progress) shot.progress->tick();
    }
  }
}

void mute_direct_wave(std::vector<float>& traces, const Position& source,
                      const std::vector<Position>& receivers, int nt, double dt, double t0, double f0,
                      double velocity) {
  if (traces.size() != receivers.size() * size_t(nt))
    throw std::invalid_argument("mute_direct_wave: traces must be [nrec][nt]");
  if (!(velocity > 0)) throw InputError("direct-wave mute: velocity must be positive");
  const double ramp = 0.5 / f0;
  for (size_t r = 0; r < receivers.size(); ++r) {
    const double dz = receivers[r][0] - source[0], dy = receivers[r][1] - source[1],
                 dx = receivers[r][2] - source[2];
    const double passed = t0 + std::sqrt(dx * dx + dy * dy + dz * dz) / velocity + 1.0 / f0;
    for (int t = 0; t < nt; ++t) {
      const double time = t * dt;
      double gain = 1.0;
      if (time <= passed) gain = 0.0;
      else if (time < passed + ramp) gain = 0.5 - 0.5 * std::cos(M_PI * (time - passed) / ramp);
      traces[r * size_t(nt) + size_t(t)] *= float(gain);
    }
  }
}

std::vector<float> normalise_image(const std::vector<float>& image,
                                   const std::vector<float>& illumination, double eps_fraction) {
  std::vector<float> out = image;
  normalise_image_in_place(out, illumination, eps_fraction);
  return out;
}

void normalise_image_in_place(std::vector<float>& image, const std::vector<float>& illumination,
                              double eps_fraction) {
  if (image.size() != illumination.size())
    throw std::invalid_argument("normalise_image: image and illumination differ in size");
  double mean = 0;
  for (float v : illumination) mean += v;
  mean /= std::max<size_t>(1, illumination.size());
  const double eps = eps_fraction * mean;
  const auto n = int64_t(image.size());
  // Threaded: a 512^3 image takes a second on one core.
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < n; ++c) {
    const double denominator = double(illumination[size_t(c)]) + eps;
    image[size_t(c)] = denominator > 0 ? float(image[size_t(c)] / denominator) : 0.0f;
  }
}

std::vector<float> laplacian_filter(const std::vector<float>& v, int nx, int ny, int nz, double dx,
                                    double dy, double dz) {
  std::vector<float> out;
  laplacian_filter_into(v, nx, ny, nz, dx, dy, dz, out);
  return out;
}

void laplacian_filter_into(const std::vector<float>& v, int nx, int ny, int nz, double dx,
                           double dy, double dz, std::vector<float>& out) {
  if (v.size() != size_t(nx) * ny * nz)
    throw std::invalid_argument("laplacian_filter: volume is not nz*ny*nx");
  if (&out == &v) throw std::invalid_argument("laplacian_filter_into: out is the volume itself");
  const double ix = 1 / (dx * dx), iy = 1 / (dy * dy), iz = 1 / (dz * dz);
  auto at = [&](int i, int j, int k) {
    i = std::clamp(i, 0, nx - 1);
    j = std::clamp(j, 0, ny - 1);
    k = std::clamp(k, 0, nz - 1);
    return double(v[(size_t(k) * ny + j) * nx + i]);
  };
  out.resize(v.size());
#pragma omp parallel for collapse(2)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double c = at(i, j, k);
        const double lap = ix * (at(i - 1, j, k) - 2 * c + at(i + 1, j, k)) +
                           iy * (at(i, j - 1, k) - 2 * c + at(i, j + 1, k)) +
                           iz * (at(i, j, k - 1) - 2 * c + at(i, j, k + 1));
        out[(size_t(k) * ny + j) * nx + i] = float(-lap);
      }
}

namespace {

std::string megabytes(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
  return text;
}

// The migration velocity at a position (nearest cell), for the direct-wave mute.
double velocity_at(const VelocityModel& m, const Position& zyx) {
  return m.vp[size_t(m.nearest_cell(zyx))];
}

// What a migration allocates, for the refusal of a run that cannot fit in the free memory of the
// GPU it will use or in the host's available memory (shared by the ranks on this node), before
// anything is allocated, and for the choice of the source field's storage. A group of
// several ranks per shot splits the grid along z (kernels/mpi/decomposed_propagator.h): each rank
// is estimated for its slab (the largest), its model part read with the smoothing's reach.
// `checkpoints`: the loop writes a checkpoint every few shots (their pinned staging on the GPU).
// One rank per shot holds the whole migration model twice beside the run (the command's and the
// grid's copy, SimulationGrid::model); a group's ranks hold their planes. Every rank holds every
// trace of the shot file (`shots`, or its geometry alone: the count is the same).
RunMemoryPlan migration_memory_plan(const SimulationGrid& sim, const ShotFile& shots,
                                    const MigrationParams& params, const ParallelContext& parallel,
                                    bool tti, int smoothing_reach, bool checkpoints,
                                    int imaging_interval) {
  RunMemoryPlan plan;
  plan.ranks_per_shot = parallel.ranks_per_shot();
  plan.smoothing_reach = smoothing_reach;
  plan.model_copies = parallel.ranks_per_shot() > 1 ? 0 : 2;
  for (const ShotGather& gather : shots.shots)
    plan.input_trace_values += uint64_t(shots.receivers_of(gather).size()) * uint64_t(std::max(shots.nt, 0));
  plan.layout = sim.layout;
  plan.box = model_box(sim);
  plan.cpml = sim.boundary.absorber == Absorber::cpml && sim.boundary.width > 0;
  plan.tti = tti;
  plan.nt = shots.nt;
  plan.receivers = int(shots.max_receivers());
  plan.shots = int(shots.shots.size());
  plan.migration = true;
  plan.storage = SourceWavefieldStorage::boundary_saving;
  plan.snapshot_interval = imaging_interval;
  plan.snapshot_precision = params.snapshot_precision;
  plan.ring_precision = params.ring_precision;
  plan.checkpoint_staging = checkpoints;
  plan.keep_sums = params.keep_sums;
  plan.least_squares_vectors = params.least_squares_vectors;
  if (params.offset_gathers.enabled()) {
    const OffsetGatherLayout gathers = offset_gather_layout(plan.box, params.offset_gathers);
    plan.offset_gather_values = gathers.values();
    if (params.make_angle_gathers)
      plan.angle_gather_values = gathers.values() / gathers.nlag * params.angle_gathers.angles;
  }
  return plan;
}

// What a resumed run carries over from earlier checkpoints: the finished shots on every rank,
// the sums on the ranks of group 0 (which goes on accumulating onto them): the whole arrays, or
// with the model split over the group (part set) each rank's own planes.
struct ResumeState {
  std::vector<long long> finished;
  std::vector<std::string> absorbed; // ids of the checkpoints merged
  std::vector<float> raw_image, illumination;
};

// World rank 0 reads every checkpoint of the output, checks each belongs to this run, merges them
// into the file of group 0 (written before the others are deleted: a stop in between leaves files
// that the merged one lists as absorbed) and shares the result. Without resume, checkpoints left
// by an earlier run are refused. With the model split over the group (part set), world rank 0
// reads the files' headers only and the ranks of group 0 merge and write their own planes of the
// sums (solvers/drivers/slab_checkpoint.h). Collective.
ResumeState carry_over_checkpoints(const MigrationControl& control, const VelocityModel& model,
                                   const SlabModel* part, int nshots,
                                   const ParallelContext& parallel, std::ostream& info) {
  ResumeState state;
  const std::string& output = control.checkpoint_output;
  MigrationCheckpoint merged;      // by slabs: the merge's header, on world rank 0
  std::vector<std::string> to_sum; // by slabs: the files whose sums it adds, on world rank 0
  const std::string merged_path = checkpoint_path(output, 0);
  std::vector<std::string> paths;
  if (parallel.is_root()) {
    paths = find_checkpoints(output);
    if (!control.resume && !paths.empty())
      throw InputError(paths.front() + ": a checkpoint of an interrupted migration to " + output +
                       " exists; `rtm migrate --resume` with the same options continues it, or "
                       "delete " + output + ".checkpoint-*.h5 to start afresh");
    if (control.resume && paths.empty())
      info << "rtm: --resume: no checkpoint of " << output << " found; starting from the first shot\n";
    if (control.resume && !paths.empty()) {
      std::vector<MigrationCheckpoint> saved;
      for (const std::string& path : paths) {
        saved.push_back(part ? read_checkpoint_planes(path, 0, 0) : read_checkpoint(path));
        check_same_run(saved.back().identity, control.identity, path);
        const MigrationCheckpoint& c = saved.back();
        if (c.nx != model.nx || c.ny != model.ny || c.nz != model.nz)
          throw InputError(path + ": image of " + std::to_string(c.nx) + "x" + std::to_string(c.ny) +
                           "x" + std::to_string(c.nz) + " cells; the migration model has " +
                           std::to_string(model.nx) + "x" + std::to_string(model.ny) + "x" +
                           std::to_string(model.nz));
      }
      merged = merge_checkpoints(saved, paths); // by slabs: the header, the sums follow below
      merged.group = 0;
      merged.identity = control.identity;
      if (part) {
        for (size_t k : checkpoints_to_sum(saved)) to_sum.push_back(paths[k]);
      } else {
        write_checkpoint(merged_path, merged);
        for (const std::string& path : paths)
          if (path != merged_path) std::remove(path.c_str());
      }
      info << "rtm: resuming from " << paths.size() << " checkpoint file(s): " << merged.finished.size()
           << " of " << nshots << " shot(s) already migrated\n";
      state.finished = merged.finished;
      state.absorbed = merged.absorbed;
      state.raw_image = std::move(merged.raw_image);
      state.illumination = std::move(merged.illumination);
    }
  }
  if (!parallel.uses_mpi()) return state;
  long long count = static_cast<long long>(state.finished.size());
  check_mpi(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast (resumed shots)");
  state.finished.resize(size_t(count));
  if (count > 0)
    check_mpi(MPI_Bcast(state.finished.data(), int(count), MPI_LONG_LONG, 0, MPI_COMM_WORLD),
              "MPI_Bcast (resumed shots)");
  if (count > 0 && part && parallel.group_index() == 0) {
    SlabSums mine = merge_slab_checkpoints(to_sum, merged, merged_path, *part, parallel.group_comm());
    state.raw_image = std::move(mine.raw_image);
    state.illumination = std::move(mine.illumination);
    if (parallel.is_root()) // the merged file is in place: the files it absorbed can go
      for (const std::string& path : paths)
        if (path != merged_path) std::remove(path.c_str());
  } else if (count > 0 && parallel.group_index() == 0 && parallel.group_comm() != MPI_COMM_NULL) {
    state.raw_image.resize(size_t(model.cells()));
    state.illumination.resize(size_t(model.cells()));
    broadcast_from_root(state.raw_image, parallel.group_comm());
    broadcast_from_root(state.illumination, parallel.group_comm());
  }
  return state;
}

} // namespace

namespace {

// The imaging interval the run will use (snapshots are kept at its steps), 0 where the shot file
// cannot fix it (the run refuses such a file later).
int identity_imaging_interval(const MigrationParams& params, const ShotFile& shots) {
  if (params.imaging_interval > 0) return params.imaging_interval;
  if (!(shots.f0 > 0 && shots.dt > 0 && std::isfinite(shots.f0))) return 0;
  return automatic_imaging_interval(shots.dt, shots.f0);
}

} // namespace

CheckpointIdentity migration_identity(const VelocityModel& model, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params) {
  CheckpointIdentity id;
  id.shot_file = shots_path;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(shots_path, ec);
  id.shot_file_bytes = ec ? 0 : static_cast<long long>(bytes); // 0: not a file (tests)
  id.shot_count = static_cast<long long>(shots.shots.size());
  // What the migration reads of the shot file, in a fixed order.
  uint64_t h = kFingerprintSeed;
  auto add = [&h](const void* data, size_t n) { h = fingerprint(data, n, h); };
  add(&shots.nt, sizeof shots.nt);
  add(&shots.dt, sizeof shots.dt);
  add(&shots.f0, sizeof shots.f0);
  add(&shots.t0, sizeof shots.t0);
  add(shots.wavelet.data(), shots.wavelet.size() * sizeof(float));
  add(shots.receivers.data(), shots.receivers.size() * sizeof(Position));
  for (const ShotGather& gather : shots.shots) {
    add(&gather.source, sizeof gather.source);
    add(gather.data.data(), gather.data.size() * sizeof(float));
    // A shot's own receivers (nothing for the shared spread: old fingerprints stay valid).
    add(gather.receivers.data(), gather.receivers.size() * sizeof(Position));
  }
  id.shots_fingerprint = h;
  h = kFingerprintSeed;
  for (int n : {model.nx, model.ny, model.nz}) add(&n, sizeof n);
  for (double x : {model.dx, model.dy, model.dz, model.ox, model.oy, model.oz}) add(&x, sizeof x);
  // The planes the model holds: none for a slab run's shape (its caller adds them rank by rank).
  const size_t plane = size_t(model.nx) * size_t(model.ny);
  h = fingerprint_planes(model.vp.data(), plane * sizeof(float), model.vp.size() / plane, h);
  id.model_fingerprint = h;

  // The phase filter as it decides the data: a number for `order`; `auto` names its rule, so that
  // a checkpoint made under the receivers-only rule (auto = none, half or full) is not resumed.
  std::string phase = data_phase_filter_name(params.data_phase_filter);
  if (params.data_phase_filter == DataPhaseFilter::order) {
    char order[64];
    std::snprintf(order, sizeof order, " %.17g", params.data_phase_order);
    phase += order;
  } else if (params.data_phase_filter == DataPhaseFilter::automatic) {
    phase += " (points and reflectors, receivers and sources)";
  }
  char text[640];
  std::snprintf(text, sizeof text,
                "reconstruction = %s\ndirect_wave = %s\ndirect_wave_velocity = %.17g\n"
                "data_phase_filter = %s\n"
                "boundary_width = %d\nfree_surface = %s\nboundary_reflection = %.17g\n"
                "point_interpolation = %s\nabsorber = %s\nimaging_interval = %d\n"
                "ring_precision = %s\nsnapshot_precision = %s\n",
                reconstruction_name(params.reconstruction),
                params.direct_wave == DirectWaveRemoval::mute ? "mute" : "none",
                params.direct_wave_velocity, phase.c_str(),
                params.boundary.width,
                params.boundary.free_surface ? "true" : "false", params.boundary.reflection,
                point_interpolation_name(params.point_interpolation),
                absorber_name(params.boundary.absorber), identity_imaging_interval(params, shots),
                ring_precision_name(params.ring_precision),
                ring_precision_name(params.snapshot_precision));
  // TTI: a line of its own, so that an isotropic run's identity is what it always was; the
  // imaging condition too, named only where it is not the plain cross-correlation.
  id.parameters = text + anisotropy_identity(model);
  if (params.imaging_condition != ImagingCondition::cross)
    id.parameters += std::string("imaging_condition = ") +
                     imaging_condition_info(params.imaging_condition).name + "\n";
  if (!model.anisotropy.empty()) id.parameters += shear_taper_identity(params.shear_taper, model);
  return id;
}

CheckpointIdentity migration_identity(const SlabModel& part, MPI_Comm group, const ShotFile& shots,
                                      const std::string& shots_path, const MigrationParams& params) {
  // The shots' part from the whole-model function on the shape; the model's fingerprint runs over
  // the ranks' planes in turn (FNV-1a goes byte by byte, so it equals one pass over the whole).
  CheckpointIdentity id = migration_identity(part.shape, shots, shots_path, params);
  id.model_fingerprint = model_fingerprint(part, group);
  id.parameters += anisotropy_identity(part, group); // part.shape has no anisotropy: none above
  if (part.tti) id.parameters += shear_taper_identity(params.shear_taper, part.shape);
  return id;
}

namespace {

// A shot's set-up that touches no wavefield (prepare_shot_data): its traces made ready to inject
// and its points placed on the grid. Made on the prefetch thread while the shot before steps
// (MigrationParams::overlap_shots), or at the shot's start.
struct PreparedShot {
  std::vector<float> series;               // the receivers' data, [t][receiver], ready to inject
  std::vector<PointStencil> own_receivers; // the shot's own spread (empty: the shared one)
  PointStencil source;
  double receiver_runaway_limit = 0;       // of the receiver field's health check
  double data_norm2 = 0;                   // MigrationResult::data_norm2's share of the shot
  double seconds = 0;                      // host time it took
};

// The steps of migrate_shots, in the order it takes them. What they set up once for every shot
// lives in a MigrationRun.
struct MigrationRun {
  MigrationRun(const VelocityModel& model_in, const SlabModel* part_in, const ShotFile& shots_in,
               const MigrationParams& params_in, const ParallelContext& parallel_in,
               std::ostream& info_in, SimulationGrid sim_in)
      : model(model_in), part(part_in), shots(shots_in), params(params_in), parallel(parallel_in),
        info(info_in), sim(std::move(sim_in)) {}

  // The migration model: whole, or (part set) its shape only, this rank holding its slab's part.
  const VelocityModel& model;
  const SlabModel* part;
  const ShotFile& shots;
  const MigrationParams& params;
  const ParallelContext& parallel;
  std::ostream& info; // world rank 0's log; the others' discards
  SimulationGrid sim;
  ModelExtremes extremes; // of the whole migration model
  Box box;
  int nt = 0;
  double f0 = 0;
  ReconstructionMemory memory;
  int imaging_interval = 1; // image every k-th backward step (snapshots: keep those steps' S)
  // The reconstruction the run takes (MigrationParams' automatic one resolved by make_wavefields)
  // and, for snapshots, where they live.
  Reconstruction reconstruction = Reconstruction::boundary;
  SnapshotPlace snapshot_place = SnapshotPlace::device;
  std::vector<PointStencil> receivers; // the shared spread (shots with their own place theirs)
  double data_phase_order = 0;
  std::unique_ptr<ShotFields> fields;        // the source and receiver fields, the image
  std::unique_ptr<PointSet> receiver_set;    // on the receiver field: the shared spread, if used
  std::unique_ptr<BoundaryStore> boundary;   // of the source field (boundary reconstruction)
  std::unique_ptr<SnapshotStore> snapshots;  // of the source field (snapshot reconstruction)
  std::vector<float> source_wavelet;
  std::unique_ptr<TimeDispersionTransform> add_time_dispersion;
  double max_v2dt2 = 0;
  HealthCheck source_health;
  // The direct-wave mute's velocity per shot of the file (made before the loop: with the model
  // split over the group it takes a reduction, which the prefetch thread must not make).
  std::vector<double> mute_velocity;
  // The shots' point sets; kept from shot to shot where the backend can replace their points
  // (MigrationParams::overlap_shots), otherwise made per shot. Declared after `fields`: a point
  // set goes before its wavefield.
  std::unique_ptr<PointSet> source_set;       // the shot's source
  std::unique_ptr<PointSet> own_receiver_set; // a shot's own receivers
  ShotPrefetch<PreparedShot> prefetch;        // the next shot's PreparedShot, made ahead
  double setup_wait_s = 0, prefetch_s = 0;    // MigrationProfile's, summed over the shots
  double data_norm2 = 0;                      // MigrationResult's, over the shots of this group
  std::function<void(int, const std::vector<float>&)> born_data; // MigrationControl's
  int prefetched_shots = 0;                   // MigrationProfile's
  // Checkpoint files of one rank per shot written beside the next shot's steps; checkpoint_s is
  // the loop thread's time in checkpoints (a wait for the write before; the sums' snapshot: their
  // download, or on the GPU only queuing their copy into pinned buffers made before the loop).
  // Declared after `fields`: a write in flight holds a snapshot of them, so it goes first.
  BackgroundCheckpointWriter checkpoint_writer;
  double checkpoint_s = 0;
  // How often the group checkpoints (made once the shots to do are known; none without
  // checkpoints), and the files of the writer it has been told of.
  std::unique_ptr<CheckpointPolicy> checkpoint_policy;
  int files_told = 0;
  double file_seconds_told = 0;
  int interval_said = -1; // the interval last said on the log
  // With the model split over the group: this rank's checkpoint files (written on the loop's
  // thread), for MigrationProfile.
  BackgroundCheckpointWriter::Written slab_checkpoints;
  double fields_s = 0; // making the fields (MigrationProfile::fields_s)
  AutotuneTotals autotune; // --variant auto's choices while the fields were made
  // What this group's checkpoints hold: for group 0 the carried shots too.
  std::vector<long long> group_finished;
  std::vector<std::string> group_absorbed;

  // The fields and their stores freed once the image is out of them (device memory and pinned
  // host buffers: tenths of a second for a large grid, which the profile shows as its own
  // phase). Point sets before their wavefields, stores before the fields, as the destructor would.
  void release_fields() {
    own_receiver_set.reset();
    source_set.reset();
    snapshots.reset();
    boundary.reset();
    receiver_set.reset();
    fields.reset();
  }
};

// The migration velocity at a position (nearest cell). With the model split over the group, the rank
// holding that cell's plane gives it (velocities are positive, the others 0): collective.
double migration_velocity_at(const MigrationRun& run, const Position& zyx) {
  if (!run.part) return velocity_at(run.model, zyx);
  const VelocityModel& m = run.part->planes;
  const int k = std::clamp(int(std::lround((zyx[0] - run.model.oz) / m.dz)), 0, run.model.nz - 1);
  double here = 0, v = 0;
  if (k >= run.part->z_first && k < run.part->z_first + m.nz) {
    Position local = zyx;
    local[0] = m.oz + (k - run.part->z_first) * m.dz; // that plane, in the part's coordinates
    here = velocity_at(m, local);
  }
  check_mpi(MPI_Allreduce(&here, &v, 1, MPI_DOUBLE, MPI_MAX, run.parallel.group_comm()),
            "MPI_Allreduce (velocity at a point)");
  return v;
}

// The command a memory refusal names.
const char* run_name(const MigrationParams& params) {
  return params.least_squares_vectors > 0 ? "rtm lsrtm" : "rtm migrate";
}

// Wave-step sweeps of the grid per shot: the source forward, the receiver backwards, and with
// boundary saving the source backwards again.
double sweeps_per_shot(Reconstruction reconstruction) {
  return reconstruction == Reconstruction::boundary ? 3 : 2;
}

// Inputs a migration refuses before any work (InputError naming the value).
void check_migration_inputs(const VelocityModel& model, double vmax, const ShotFile& shots,
                            const MigrationParams& params) {
  if (shots.shots.empty()) throw InputError("migration: the shot file holds no shots");
  for (const ShotGather& gather : shots.shots)
    if (shots.receivers_of(gather).empty())
      throw InputError("migration: shot " + std::to_string(gather.id) + " has no receivers");
  if (params.born_perturbation) { // least-squares RTM's passes (solvers/drivers/lsrtm.h)
    if (params.born_perturbation->size() != size_t(model.cells()))
      throw std::invalid_argument("migration: the Born perturbation has " +
                                  std::to_string(params.born_perturbation->size()) +
                                  " values, the model " + std::to_string(model.cells()));
    if (params.data_phase_filter != DataPhaseFilter::none)
      throw std::invalid_argument("migration: a pass of Born data takes no data phase filter");
  }
  if (!(params.illumination_eps > 0))
    throw InputError("--illumination-eps must be positive, got " +
                     std::to_string(params.illumination_eps));
  if (!(params.image_mute_depth >= 0) || !std::isfinite(params.image_mute_depth))
    throw InputError("--image-mute-depth must be a depth of at least 0 m, got " +
                     std::to_string(params.image_mute_depth));
  if (!(params.image_mute_taper >= 0) || !std::isfinite(params.image_mute_taper))
    throw InputError("--image-mute-taper must be at least 0 m, got " +
                     std::to_string(params.image_mute_taper));
  // The data fix dt: migrating with it needs it stable in the migration model.
  // Said here in the data's terms: `rtm migrate` has no --dt to blame.
  const double dt_limit = cfl_dt_limit(vmax, model.dx, model.dy, model.dz);
  if (!(shots.dt <= dt_limit))
    throw InputError("the shot file's dt = " + format_number(shots.dt) +
                     " s is above the stability limit of the migration model, " +
                     format_number(dt_limit) + " s (v_max " + format_number(vmax) +
                     " m/s, spacing (" + format_number(model.dz) + ", " + format_number(model.dy) +
                     ", " + format_number(model.dx) +
                     ") m): migrate in a slower or coarser model, or model the shots with a "
                     "smaller --dt");
}

// The compute grid at the data's dt, the wavelet's f0 checked, the dispersion warning.
SimulationGrid migration_grid(const VelocityModel& model, const ModelExtremes& extremes,
                              const ShotFile& shots, const MigrationParams& params,
                              std::ostream& info) {
  BoundaryConfig boundary = params.boundary;
  if (boundary.frequency == 0 && shots.f0 > 0 && std::isfinite(shots.f0))
    boundary.frequency = shots.f0; // the C-PML's alpha
  SimulationGrid sim = make_simulation_grid(model, extremes.vmax, boundary, shots.dt);
  if (!(shots.f0 > 0))
    throw InputError("the shot file's /wavelet has no f0 attribute (peak frequency): migration "
                     "needs it for the snapshot interval and the direct-wave mute");
  const std::string warning = dispersion_warning(extremes.vmin, shots.f0, model.dx, model.dy, model.dz);
  if (!warning.empty()) info << "rtm: " << warning << "\n";
  return sim;
}

// A shot's own receivers placed on the grid (InputError naming the shot and the receiver when
// one lies outside the model); none for a shot of the shared spread.
std::vector<PointStencil> locate_shot_receivers(const MigrationRun& run, const ShotGather& gather) {
  std::vector<PointStencil> points;
  for (size_t r = 0; r < gather.receivers.size(); ++r)
    points.push_back(locate_point(run.sim, gather.receivers[r],
                                  "shot " + std::to_string(gather.id) + ": receiver " +
                                      std::to_string(r),
                                  run.params.point_interpolation));
  return points;
}

// The imaging interval, the memory of both reconstruction strategies (said before the run), and
// the receivers.
void plan_reconstruction_and_receivers(MigrationRun& run) {
  const MigrationParams& params = run.params;
  run.box = model_box(run.sim);
  run.nt = run.shots.nt;
  run.f0 = run.shots.f0;
  run.imaging_interval = imaging_interval(params, run.sim.dt, run.f0);
  run.memory = reconstruction_memory(run.sim, run.nt, run.imaging_interval);
  if (run.part && run.part->tti) // a slab run's sim.model is the shape alone: the TTI ring, both fields
    run.memory.ring_cells = 2 * tti_ring_cells(run.box);
  const ReconstructionMemory& mem = run.memory;
  run.info << "rtm: source-wavefield reconstruction memory per shot: boundary saving "
           << mem.ring_cells << " ring cells x " << mem.ring_steps << " steps x 4 B = "
           << megabytes(mem.boundary_bytes()) << " ("
           << megabytes(mem.boundary_half_bytes())
           << " as a 16-bit ring, --ring-precision int16|float16); snapshots " << mem.box_cells
           << " cells x " << mem.snapshot_count << " snapshots (every " << mem.snapshot_interval
           << " steps) = " << megabytes(mem.snapshot_bytes(params.snapshot_precision)) << " in "
           << ring_precision_name(params.snapshot_precision) << " (--snapshot-precision)\n";
  run.info << "rtm: imaging every " << run.imaging_interval << " step(s) of the backward sweep, "
           << "weight " << run.imaging_interval << " (";
  if (params.imaging_interval > 0)
    run.info << "--imaging-interval";
  else
    run.info << "automatic: " << format_number(kImagingIntervalSafety) << " x the Nyquist interval "
             << "of f_max = 2.5 f0 = " << format_number(kRickerFmaxOverF0 * run.f0) << " Hz";
  run.info << "), over the model's " << run.box.cells() << " cells\n";

  if (run.shots.uses_shared_receivers())
    for (size_t r = 0; r < run.shots.receivers.size(); ++r)
      run.receivers.push_back(locate_point(run.sim, run.shots.receivers[r],
                                           "receiver " + std::to_string(r),
                                           params.point_interpolation));
  // Per-shot spreads are placed with their shot; checked here, so that a receiver outside the
  // model is refused before any shot runs, naming the shot and the receiver.
  for (const ShotGather& gather : run.shots.shots)
    locate_shot_receivers(run, gather);
  // TTI: migration injects the sources and, backwards, the receivers: the shear taper around them
  // all (solvers/drivers/shear_taper.h), before make_wavefields makes the coefficients.
  if (!run.sim.model.anisotropy.empty() || (run.part && run.part->tti)) {
    std::vector<Position> injected = run.shots.receivers;
    for (const ShotGather& gather : run.shots.shots) {
      injected.push_back(gather.source);
      injected.insert(injected.end(), gather.receivers.begin(), gather.receivers.end());
    }
    set_shear_taper(run.sim, run.part, run.parallel.group_comm(), run.params.shear_taper,
                    std::move(injected), run.info);
  }
}

// The data's phase correction (docs/rtm.md, 6a): one filter for every shot. Unless the user named
// one, its order comes from the directions the acquisition samples densely, receivers and sources
// together: the shared spread, or with per-shot spreads the largest of them (a moving spread
// keeps its shape, so each shot's would give the same choice), and the shots' sources.
struct PhaseChoice {
  DataPhaseFilter filter = DataPhaseFilter::none;
  double order = 0;
};
PhaseChoice choose_migration_phase_filter(const MigrationRun& run) {
  const MigrationParams& params = run.params;
  const ShotFile& shots = run.shots;
  const std::vector<Position>* receivers = &shots.receivers;
  if (shots.has_per_shot_receivers())
    for (const ShotGather& gather : shots.shots)
      if (receivers->empty() || shots.receivers_of(gather).size() > receivers->size())
        receivers = &shots.receivers_of(gather);
  double v_receivers = INFINITY;
  for (const Position& r : *receivers) v_receivers = std::min(v_receivers, migration_velocity_at(run, r));
  std::vector<Position> sources;
  std::vector<const std::vector<Position>*> spreads;
  for (const ShotGather& gather : shots.shots) {
    sources.push_back(gather.source);
    spreads.push_back(&shots.receivers_of(gather));
  }
  const ReceiverSpread spread = describe_receiver_spread(*receivers, v_receivers, run.f0);
  ReceiverSpread midpoint_spread;
  const int dims = acquisition_dense_dims(acquisition_midpoints(sources, spreads), v_receivers,
                                          run.f0, &midpoint_spread);
  PhaseChoice choice;
  choice.filter = params.data_phase_filter;
  switch (choice.filter) {
  case DataPhaseFilter::automatic: choice.order = automatic_data_phase_order(dims); break;
  case DataPhaseFilter::order: choice.order = params.data_phase_order; break;
  default: choice.order = data_phase_filter_order(choice.filter); break;
  }
  char residual[200];
  std::snprintf(residual, sizeof residual,
                "; residual phase: a point scatterer %+.1f deg, a reflector %+.1f deg",
                residual_phase_degrees(choice.order, 2.0),
                residual_phase_degrees(choice.order, 0.5 * dims));
  run.info << "rtm: data phase filter: " << data_phase_filter_name(choice.filter)
           << " ((-i omega / omega0)^" << choice.order
           << (choice.filter == DataPhaseFilter::automatic
                   ? ", chosen from the acquisition: " + std::to_string(dims) + " dense direction(s)"
                   : std::string(", as asked"))
           << residual << "); receivers: " << describe(spread)
           << "; source-receiver midpoints: " << describe(midpoint_spread, "midpoint") << "\n";
  return choice;
}

// This rank's choice of how to keep the source field (choose_reconstruction's, before the ranks
// agree): as asked, or by the memory estimate.
SourceStorageChoice source_storage_choice(const RunMemoryPlan& plan, const MigrationParams& params,
                                          const ParallelContext& parallel, bool tti) {
  const bool allow_device = params.snapshot_memory != SnapshotMemory::host;
  const bool allow_host = params.snapshot_memory != SnapshotMemory::device;
  SourceStorageChoice choice;
  if (params.reconstruction == Reconstruction::boundary) {
    choice.reason = "--reconstruction boundary";
    return choice;
  }
  choice = choose_source_storage_here(plan, params.backend, parallel.local_size(), !tti,
                                      allow_device, allow_host);
  if (params.reconstruction == Reconstruction::snapshots &&
      choice.storage != SourceWavefieldStorage::snapshots) {
    // Forced: the place asked (or the device), and the memory check says what is short.
    choice.storage = SourceWavefieldStorage::snapshots;
    choice.place = allow_device ? SnapshotPlace::device : SnapshotPlace::host;
    choice.reason = "--reconstruction snapshots";
  }
  return choice;
}

// `plan` with the source field kept as `choice` says.
RunMemoryPlan with_storage(RunMemoryPlan plan, const SourceStorageChoice& choice) {
  plan.storage = choice.storage;
  plan.snapshot_place = choice.place;
  return plan;
}

// The source field's reconstruction: as asked, or (automatic) snapshots where the memory estimate
// fits them, else boundary saving; every rank takes the same (the least any rank can hold). Said
// in the log with the reason, kept in `run` and returned (for the memory check).
SourceStorageChoice choose_reconstruction(MigrationRun& run, const RunMemoryPlan& plan, bool tti) {
  const MigrationParams& params = run.params;
  SourceStorageChoice choice = source_storage_choice(plan, params, run.parallel, tti);
  // 0 boundary, 1 snapshots in host memory, 2 on the device: the least over the ranks.
  int code = choice.storage == SourceWavefieldStorage::boundary_saving ? 0
             : choice.place == SnapshotPlace::host                    ? 1
                                                                      : 2;
  if (run.parallel.uses_mpi()) {
    int least = code;
    check_mpi(MPI_Allreduce(&code, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
              "MPI_Allreduce (source-wavefield reconstruction)");
    if (least != code) choice.reason = "the choice of the rank with the least memory";
    code = least;
  }
  choice.storage = code == 0 ? SourceWavefieldStorage::boundary_saving : SourceWavefieldStorage::snapshots;
  choice.place = code == 1 ? SnapshotPlace::host : SnapshotPlace::device;
  run.reconstruction = code == 0 ? Reconstruction::boundary : Reconstruction::snapshots;
  run.snapshot_place = choice.place;
  run.info << "rtm: source wavefield: ";
  if (run.reconstruction == Reconstruction::boundary)
    run.info << "boundary saving with a " << ring_precision_name(params.ring_precision)
             << " ring, three sweeps per shot, " << (params.fused_backward ? "fused" : "separate")
             << " backward steps"
             << (params.fused_backward && params.imaging_condition != ImagingCondition::cross
                     ? " (the imaging steps separate: no fused kernel has this condition)"
                     : "");
  else
    run.info << ring_precision_name(params.snapshot_precision) << " snapshots in "
             << (run.snapshot_place == SnapshotPlace::device ? "device" : "host")
             << " memory every " << run.imaging_interval << " steps, two sweeps per shot";
  run.info << " (" << (params.reconstruction == Reconstruction::automatic ? "auto: " : "")
           << choice.reason << ")\n";
  return choice;
}

// Both wavefields on one backend and variant, the receivers on the receiver field, the image and
// the source field's ring or snapshot store. `checkpoints`: the loop writes checkpoints.
void make_wavefields(MigrationRun& run, bool checkpoints) {
  const MigrationParams& params = run.params;
  const bool tti = !run.sim.model.anisotropy.empty() || (run.part && run.part->tti);
  const RunMemoryPlan plan = migration_memory_plan(run.sim, run.shots, params, run.parallel, tti,
                                                   run.part ? run.part->smoothing_reach : -1,
                                                   checkpoints, run.imaging_interval);
  check_run_memory(with_storage(plan, choose_reconstruction(run, plan, tti)), params.backend,
                   run.parallel.local_size(), run_name(params));
  const double fields_start = steady_seconds();
  const AutotuneTotals tuned_before = autotune_totals();
  if (run.part) {
    // Each rank builds its slab from its part of the model: no rank holds the whole grid's v2dt2.
    run.fields = make_decomposed_shot_fields(
        make_slab_decomposition(run.sim, *run.part, run.parallel.group_comm()), params.backend,
        run.info);
  } else {
    const PropagatorSetup setup = make_propagator_setup(run.sim);
    // Made together on one backend and kernel ("auto" chooses once).
    run.fields = make_shot_fields(setup, params.backend, run.parallel, run.info);
  }
  run.fields_s = steady_seconds() - fields_start;
  const AutotuneTotals tuned = autotune_totals();
  run.autotune.choices = tuned.choices - tuned_before.choices;
  run.autotune.from_cache = tuned.from_cache - tuned_before.from_cache;
  run.autotune.seconds = tuned.seconds - tuned_before.seconds;
  if (!run.receivers.empty())
    run.receiver_set = run.fields->receiver().add_points(run.receivers, run.nt);
  run.fields->allocate_image(run.box, params.imaging_condition);
  if (params.offset_gathers.enabled()) {
    run.fields->allocate_offset_gathers(params.offset_gathers);
    const OffsetGatherLayout& l = run.fields->gather_layout();
    run.info << "rtm: offset gathers: " << l.ngx << " x " << l.ngy << " positions (every "
             << l.stride_x << " x " << l.stride_y << " cells) x " << l.nz << " depths x " << l.nlag
             << " lags (every " << l.lag_step << " cells) x " << l.axes
             << (l.axes == 2 ? " axes (x, y)" : " axis (x)") << " = "
             << format_bytes(uint64_t(l.bytes())) << "\n";
  }
  // The checkpoints' pinned buffers on the GPU (the memory check counted them), here before
  // the loop rather than at its first checkpoint (docs/rtm.md, section 11b).
  if (checkpoints) run.fields->prepare_snapshots();
  if (run.reconstruction == Reconstruction::boundary)
    run.boundary = run.fields->source().make_boundary_store(run.box, run.memory.ring_steps,
                                                            params.ring_precision);
  else
    run.snapshots = run.fields->source().make_snapshot_store(
        run.box, run.memory.snapshot_count, params.snapshot_precision, run.snapshot_place);
}

// Resuming: the shots finished before (returned as flags per shot), and group 0 carries their
// sums on.
std::vector<char> resume_migration(MigrationRun& run, const MigrationControl& control) {
  const int nshots = int(run.shots.shots.size());
  const bool checkpointing = !control.checkpoint_output.empty();
  ResumeState resumed = checkpointing ? carry_over_checkpoints(control, run.model, run.part, nshots,
                                                              run.parallel, run.info)
                                      : ResumeState{};
  if (run.parallel.group_index() == 0 && !resumed.finished.empty()) {
    if (run.part)
      set_own_sums(*run.fields, {run.part->own_first, std::move(resumed.raw_image),
                                 std::move(resumed.illumination)});
    else
      run.fields->set_image(resumed.raw_image, resumed.illumination);
  }
  std::vector<char> done(size_t(nshots), 0);
  for (long long shot : resumed.finished) done[size_t(shot)] = 1;
  if (run.parallel.group_index() == 0) {
    run.group_finished = resumed.finished;
    run.group_absorbed = resumed.absorbed;
  }
  return done;
}

// The run's description on world rank 0, and what shaped the image for the output file's
// provenance (io/provenance.h).
void announce_migration(const MigrationRun& run, int remaining, const MigrationControl& control) {
  const MigrationParams& params = run.params;
  const ParallelContext& parallel = run.parallel;
  std::ostream& info = run.info;
  const int nshots = int(run.shots.shots.size());
  const GridLayout& g = run.sim.layout;
  info << "rtm: migrating " << remaining << " shot(s)";
  if (remaining != nshots) info << " (" << nshots - remaining << " resumed)";
  info << " on " << run.fields->name() << ": grid " << g.nx << "x" << g.ny << "x" << g.nz
       << " (absorbing layers of " << params.boundary.width << " cells included), " << run.nt
       << " steps of dt = " << run.shots.dt << " s, " << describe_receiver_counts(run.shots) << " ("
       << point_interpolation_name(params.point_interpolation) << " point interpolation)";
  if (parallel.size() > 1)
    info << "; " << parallel.group_count() << " shot group(s) of " << parallel.ranks_per_shot()
         << " rank(s)";
  info << "\n";
  record_run_parameter("propagator", run.fields->name());
  record_run_parameter("dt_s", format_number(run.shots.dt));
  record_run_parameter("boundary", std::string(absorber_name(params.boundary.absorber)) + ", " +
                                       std::to_string(params.boundary.width) + " cells" +
                                       (params.boundary.free_surface ? ", free surface" : ""));
  record_run_parameter("reconstruction", reconstruction_name(params.reconstruction));
  if (params.imaging_condition != ImagingCondition::cross || !applies_laplacian_filter(params))
    info << "rtm: imaging condition " << imaging_condition_info(params.imaging_condition).name
         << " (" << imaging_condition_info(params.imaging_condition).field_reads
         << " field values read per box cell and imaging step)"
         << (applies_laplacian_filter(params) ? ", then the Laplacian post-filter"
                                              : ", no Laplacian post-filter")
         << " (docs/rtm.md, section 5c)\n";
  record_run_parameter("imaging_condition",
                       std::string(imaging_condition_info(params.imaging_condition).name) +
                           (applies_laplacian_filter(params) ? ", Laplacian post-filter"
                                                             : ", no Laplacian post-filter"));
  record_run_parameter("direct_wave", params.direct_wave == DirectWaveRemoval::mute ? "mute" : "none");
  if (params.image_mute_depth > 0)
    record_run_parameter("image_mute", format_number(params.image_mute_depth) + " m, taper " +
                                           format_number(params.image_mute_taper) + " m");
  record_run_parameter("point_interpolation", point_interpolation_name(params.point_interpolation));
  const CheckpointPolicy* policy = run.checkpoint_policy.get();
  if (policy && policy->automatic() && policy->periodic())
    info << "rtm: checkpoints to " << checkpoint_path(control.checkpoint_output, 0)
         << (parallel.group_count() > 1 ? " (one file per group)" : "")
         << " as often as they cost at most " << format_number(100 * kCheckpointBudget)
         << "% of the loop (--checkpoint-every auto: the interval from a checkpoint's measured "
            "time against a shot's)\n";
  else if (policy && policy->automatic())
    info << "rtm: no checkpoints (--checkpoint-every auto: no shot group has a second shot; one "
            "is written only if the run is stopped)\n";
  else if (!control.checkpoint_output.empty() && control.checkpoint_every > 0)
    info << "rtm: checkpoints every " << control.checkpoint_every << " shot(s) per group to "
         << checkpoint_path(control.checkpoint_output, 0)
         << (parallel.group_count() > 1 ? " (one file per group)" : "") << "\n";
}

// The wavelet the source injects and the source field's health limit.
void prepare_source(MigrationRun& run) {
  const SimulationGrid& sim = run.sim;
  const int nt = run.nt;
  // Traces with the time dispersion removed are time-continuous; the propagators step in time as
  // modeling did, so the wavelet and the data both get the forward transform (docs/rtm.md, "Time
  // dispersion"). Traces as the time stepping made them already carry it: used as they are.
  run.source_wavelet = run.shots.wavelet;
  if (run.shots.time_dispersion_removed) {
    run.source_wavelet = time_dispersion_transformed(run.shots.wavelet, TimeDispersion::add);
    run.add_time_dispersion = std::make_unique<TimeDispersionTransform>(nt, TimeDispersion::add);
    run.info << "rtm: the shot file's traces have the time dispersion removed: the wavelet and the "
                "data get the forward transform before they are propagated\n";
  }
  // One wavelet for every shot: one source limit; the receiver limit follows each shot's data.
  run.max_v2dt2 = run.extremes.vmax * run.extremes.vmax * sim.dt * sim.dt;
  run.source_health = make_health_check(
      sim, runaway_limit(injected_amplitude(run.source_wavelet, sim.injection_scale(), run.max_v2dt2), 0.0, nt));
  // The mute's velocity at every shot's source, here on the loop's thread (collective over the
  // group when the model is split), so that the prefetch thread only reads it.
  if (run.params.direct_wave == DirectWaveRemoval::mute)
    for (const ShotGather& gather : run.shots.shots)
      run.mute_velocity.push_back(run.params.direct_wave_velocity > 0
                                      ? run.params.direct_wave_velocity
                                      : migration_velocity_at(run, gather.source));
}

// The group's partial sums and finished shots. Every rank of the group takes a snapshot of the
// sums (a split propagator assembles the arrays collectively; the CUDA backend only queues their
// copy into pinned memory, which runs beside the next shot's first steps); the leader writes, on
// the writer's thread while the next shot steps. With the model split over the group (part set)
// each rank writes its own planes instead (solvers/drivers/slab_checkpoint.h), on this thread: the
// ranks take turns by MPI.
void write_group_checkpoint(MigrationRun& run, const MigrationControl& control) {
  const double start = steady_seconds();
  MigrationCheckpoint c;
  std::unique_ptr<ImageSnapshot> sums;
  double waited = 0; // for the file before: the policy counts it from the files' own times
  if (!run.part) {
    // The write before is done (and its snapshot taken) before the next snapshot: one at a time.
    waited = run.checkpoint_writer.finish();
    sums = run.fields->snapshot_image();
    if (!run.parallel.is_leader()) return;
  }
  c.id = new_checkpoint_id();
  c.absorbed = run.group_absorbed;
  c.group = run.parallel.group_index();
  c.identity = control.identity;
  c.finished = run.group_finished;
  c.nx = run.model.nx;
  c.ny = run.model.ny;
  c.nz = run.model.nz;
  const std::string path = checkpoint_path(control.checkpoint_output, c.group);
  if (run.part) {
    const double write_start = steady_seconds();
    const SlabSums own = own_sums(*run.fields, *run.part);
    write_slab_checkpoint(path, c, own, run.parallel.group_comm());
    ++run.slab_checkpoints.files;
    run.slab_checkpoints.seconds += steady_seconds() - write_start;
    run.slab_checkpoints.bytes +=
        uint64_t(own.raw_image.size() + own.illumination.size()) * sizeof(float);
  } else
    run.checkpoint_writer.start(path, std::move(c), std::move(sums));
  run.checkpoint_s += steady_seconds() - start;
  if (run.checkpoint_policy)
    run.checkpoint_policy->checkpoint_taken(std::max(0.0, steady_seconds() - start - waited));
}

// A checkpoint's size: the raw image and the illumination over the model (with the model split
// over the group each rank writes its planes, in turn: the loop's thread of every rank waits for
// the whole file).
uint64_t checkpoint_bytes(const MigrationRun& run) {
  return uint64_t(run.model.cells()) * 2 * sizeof(float);
}

// The checkpoint interval of the moment (ShotLoopPlan::checkpoint_interval): the files the writer
// finished since the last call told to the policy first. With the model split over the group the
// leader's interval, shared: every rank must checkpoint at the same shots. Says a new interval on
// world rank 0's log.
int current_checkpoint_interval(MigrationRun& run) {
  CheckpointPolicy& policy = *run.checkpoint_policy;
  const BackgroundCheckpointWriter::Written files = run.checkpoint_writer.written();
  if (files.files > run.files_told) { // the writer keeps sums: the new files' mean
    const double per_file = (files.seconds - run.file_seconds_told) / (files.files - run.files_told);
    for (; run.files_told < files.files; ++run.files_told) policy.file_written(std::max(0.0, per_file));
    run.file_seconds_told = files.seconds;
  }
  int k = policy.interval();
  if (run.part && run.parallel.ranks_per_shot() > 1)
    check_mpi(MPI_Bcast(&k, 1, MPI_INT, 0, run.parallel.group_comm()), "MPI_Bcast (checkpoint interval)");
  if (k != run.interval_said) {
    run.info << "rtm: checkpoints " << policy.describe() << "\n";
    run.interval_said = k;
  }
  return k;
}

// Traces [nrec][nt] of shot s made ready to inject: the direct-wave mute and the data phase
// filter. Returns <x, w x> of the traces as given (MigrationResult::data_norm2's share).
double mute_and_filter(const MigrationRun& run, int s, std::vector<float>& data) {
  const ShotFile& shots = run.shots;
  const ShotGather& gather = shots.shots[size_t(s)];
  const std::vector<Position>& receivers = shots.receivers_of(gather);
  const int nt = run.nt, nrec = int(receivers.size());
  const std::vector<float> given = data;
  if (run.params.direct_wave == DirectWaveRemoval::mute)
    mute_direct_wave(data, gather.source, receivers, nt, shots.dt, shots.t0, run.f0,
                     run.mute_velocity[size_t(s)]);
  double norm2 = 0; // the mute's weights w: data = w x here, so <x, w x> = <given, data>
  for (size_t i = 0; i < data.size(); ++i) norm2 += double(given[i]) * double(data[i]);
  apply_data_phase_filter(data, nrec, nt, shots.dt, run.data_phase_order, run.f0);
  return norm2;
}

// The host half of a shot's set-up: its data made ready (time dispersion, direct-wave mute,
// phase filter) and its points placed. Reads only what the run fixed before the loop, so that it
// can run on the prefetch thread beside the shot before.
PreparedShot prepare_shot_data(const MigrationRun& run, int s) {
  const double start = steady_seconds();
  const ShotFile& shots = run.shots;
  const MigrationParams& params = run.params;
  const ShotGather& gather = shots.shots[size_t(s)];
  const std::vector<Position>& receivers = shots.receivers_of(gather);
  const int nt = run.nt, nrec = int(receivers.size());
  PreparedShot shot;
  if (params.born_perturbation) {
    // The data come from Born modeling on the fields, in migrate_shot_of_file: the receivers'
    // series is a place holder until then.
    shot.series.assign(size_t(nrec) * size_t(nt), 0.0f);
  } else {
    std::vector<float> data = gather.data;
    if (run.add_time_dispersion) run.add_time_dispersion->apply(data);
    shot.data_norm2 = mute_and_filter(run, s, data);
    shot.receiver_runaway_limit =
        runaway_limit(injected_amplitude(data, 1.0, run.max_v2dt2), 0.0, nt);
    shot.series = traces_to_series(data, nrec, nt);
  }
  if (!gather.receivers.empty()) shot.own_receivers = locate_shot_receivers(run, gather);
  shot.source = locate_point(run.sim, gather.source, "source of shot " + std::to_string(gather.id),
                             params.point_interpolation);
  shot.seconds = steady_seconds() - start;
  return shot;
}

// `set` holding `points` and `series`: replaced in place where the run keeps its sets and the
// backend can (PointSet::replace), otherwise made anew on `field`. The shared spread's set is
// never remade: it only gets the series.
void place_points(MigrationRun& run, Wavefield& field, std::unique_ptr<PointSet>& set,
                  const std::vector<PointStencil>& points, const std::vector<float>& series) {
  if (run.params.overlap_shots && set && set->size() == int(points.size()) &&
      set->replace(points, series))
    return;
  set.reset(); // its memory (device memory too) before the next one's
  set = field.add_points(points, run.nt);
  set->upload_series(series);
}

// One shot of the file: its set-up (made ahead on the prefetch thread, or here), then both
// wavefields run and the image accumulated (migrate_one_shot) onto the stack, which stays where
// the fields live until the run ends.
void migrate_shot_of_file(MigrationRun& run, int s, ShotProgress& progress) {
  const double start = steady_seconds();
  const MigrationParams& params = run.params;
  const SimulationGrid& sim = run.sim;
  const ShotGather& gather = run.shots.shots[size_t(s)];
  const int nt = run.nt;
  PreparedShot shot;
  if (run.prefetch.holds(s)) {
    shot = run.prefetch.take(s);
    ++run.prefetched_shots;
    // Hidden behind the shot before: what it took less what this thread waited for it here
    // (the group's first shot has nothing before it, and is waited for whole).
    run.prefetch_s += std::max(0.0, shot.seconds - (steady_seconds() - start));
  } else {
    shot = prepare_shot_data(run, s);
  }
  PointSet* receiver_set = run.receiver_set.get();
  if (!shot.own_receivers.empty()) {
    place_points(run, run.fields->receiver(), run.own_receiver_set, shot.own_receivers, shot.series);
    receiver_set = run.own_receiver_set.get();
  } else if (!params.overlap_shots || !receiver_set->replace(run.receivers, shot.series)) {
    receiver_set->upload_series(shot.series);
  }
  place_points(run, run.fields->source(), run.source_set, {shot.source}, run.source_wavelet);
  ShotSets sets;
  sets.source = run.source_set.get();
  sets.receiver = receiver_set;
  sets.boundary = run.boundary.get();
  sets.snapshots = run.snapshots.get();
  sets.nt = nt;
  sets.source_scale = sim.injection_scale();
  HealthCheck receiver_health = run.source_health;
  receiver_health.runaway_limit = shot.receiver_runaway_limit;
  sets.source_health = &run.source_health;
  sets.receiver_health = &receiver_health;
  sets.label = "shot " + std::to_string(gather.id);
  sets.progress = &progress;
  if (params.born_perturbation) {
    // Least-squares RTM: the shot's data are the Born data of the perturbation, modelled here on
    // the same fields and point sets, then muted as recorded data are.
    const int nrec = receiver_set->size();
    std::vector<float> data =
        born_model_one_shot(*run.fields, sets, nrec, run.box, *params.born_perturbation);
    if (run.born_data) run.born_data(s, data);
    shot.data_norm2 = mute_and_filter(run, s, data);
    receiver_health.runaway_limit =
        runaway_limit(injected_amplitude(data, 1.0, run.max_v2dt2), 0.0, nt);
    receiver_set->upload_series(traces_to_series(data, nrec, nt));
  }
  run.data_norm2 += shot.data_norm2;
  BackwardSweep backward;
  backward.imaging_interval = run.imaging_interval;
  backward.fused = params.fused_backward;
  run.setup_wait_s += steady_seconds() - start;
  migrate_one_shot(*run.fields, sets, run.box, run.reconstruction, run.imaging_interval, backward);
  if (!params.overlap_shots) { // freed with the shot, as a single shot does
    run.own_receiver_set.reset();
    run.source_set.reset();
  }
  run.fields->receiver().synchronize();
}

// The shots, their steps and costs, as the shot loop sees them.
ShotLoopPlan migration_plan(const MigrationRun& run, std::vector<char> finished, int checkpoint_every) {
  const int nt = run.nt;
  ShotLoopPlan plan;
  plan.total = int(run.shots.shots.size());
  plan.finished = std::move(finished);
  plan.verb = "migrated";
  // Phases of a shot for the progress estimate: nt forward source steps, then the backward
  // sweeps: nt receiver steps and (boundary saving) nt - 1 source steps. A backward step also
  // images, and restores the boundary ring; kBackwardStepCost is its cost relative to a forward
  // step, a guess used only until the first backward sweep has been timed.
  constexpr double kBackwardStepCost = 1.1;
  const long long backward_steps =
      run.reconstruction == Reconstruction::boundary ? 2LL * nt - 1 : nt;
  plan.phases = {{nt, 1.0}, {backward_steps, kBackwardStepCost}};
  const GridLayout& g = run.sim.layout;
  plan.cells_per_step = double(g.interior_cells());
  // Least-squares RTM's Born modeling before each shot steps two more fields over nt steps.
  const double born_sweeps = run.params.born_perturbation ? 2 : 0;
  plan.cell_updates_per_shot =
      double(g.interior_cells()) * nt * (sweeps_per_shot(run.reconstruction) + born_sweeps);
  plan.checkpoint_every = checkpoint_every;
  return plan;
}

// Where the time went (MigrationParams::profile), up to the end of the loop.
void measure_profile(const MigrationRun& run, const ShotLoopSummary& loop, double setup_start,
                     MigrationProfile& profile) {
  profile.measured = true;
  profile.propagator = run.fields->name();
  profile.grid = run.sim.layout;
  profile.shots = loop.done_here;
  profile.nt = run.nt;
  profile.sweeps = int(sweeps_per_shot(run.reconstruction));
  profile.imaging_interval = run.imaging_interval;
  profile.setup_s = loop.start_s - setup_start;
  profile.loop_s = loop.seconds();
  profile.timing = run.fields->timing();
  profile.overlap_shots = run.params.overlap_shots;
  profile.setup_wait_s = run.setup_wait_s;
  profile.prefetch_s = run.prefetch_s;
  profile.prefetched_shots = run.prefetched_shots;
  profile.checkpoint_s = run.checkpoint_s;
  profile.fields_s = run.fields_s;
  profile.autotune_s = run.autotune.seconds;
  profile.autotune_choices = run.autotune.choices;
  profile.autotune_from_cache = run.autotune.from_cache;
  BackgroundCheckpointWriter::Written files = run.checkpoint_writer.written();
  files.files += run.slab_checkpoints.files;
  files.seconds += run.slab_checkpoints.seconds;
  files.bytes += run.slab_checkpoints.bytes;
  profile.checkpoint_files = files.files;
  profile.checkpoint_write_s = files.seconds;
  profile.checkpoint_bytes = files.bytes;
}

// The groups' partial stacks summed on world rank 0, which alone finishes the image: normalised
// by the illumination, Laplacian-filtered, top-muted.
void finish_image(const MigrationRun& run, MigrationResult& result) {
  const ParallelContext& parallel = run.parallel;
  const VelocityModel& model = run.model;
  if (run.part) { // slab by slab: no rank gathers the whole image (solvers/drivers/slab_image.h)
    SlabImage mine = finish_slab_image(*run.fields, *run.part, parallel, run.params.illumination_eps,
                                       applies_laplacian_filter(run.params));
    result.image_z_first = mine.z_first;
    result.raw_image = std::move(mine.raw_image);
    result.illumination = std::move(mine.illumination);
    result.image = std::move(mine.image);
    return;
  }
  const double download_start = steady_seconds();
  result.raw_image = run.fields->download_image();
  result.illumination = run.fields->download_illumination();
  result.profile.download_s = steady_seconds() - download_start;
  result.data_norm2 = run.data_norm2;
  if (parallel.is_leader() && parallel.group_count() > 1) {
    double sum = 0;
    check_mpi(MPI_Reduce(&run.data_norm2, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, parallel.leaders_comm()),
              "MPI_Reduce (data norm)");
    result.data_norm2 = parallel.is_root() ? sum : 0.0;
    sum_to_root(result.raw_image, parallel.leaders_comm());
    sum_to_root(result.illumination, parallel.leaders_comm());
  }
  if (!parallel.is_root()) {
    result.raw_image.clear();
    result.illumination.clear();
    result.data_norm2 = 0;
    return;
  }
  if (run.params.keep_sums) {
    result.image = normalise_image(result.raw_image, result.illumination, run.params.illumination_eps);
    if (applies_laplacian_filter(run.params))
      result.image = laplacian_filter(result.image, model.nx, model.ny, model.nz, model.dx,
                                      model.dy, model.dz);
  } else {
    // In the sums' memory: the raw image becomes the image, the illumination's takes the filter's.
    result.image = std::move(result.raw_image);
    normalise_image_in_place(result.image, result.illumination, run.params.illumination_eps);
    if (applies_laplacian_filter(run.params)) {
      laplacian_filter_into(result.image, model.nx, model.ny, model.nz, model.dx, model.dy,
                            model.dz, result.illumination);
      std::swap(result.image, result.illumination);
    }
    result.raw_image = std::vector<float>();
    result.illumination = std::vector<float>();
  }
  mute_image_top(result.image, model, run.params.image_mute_depth, run.params.image_mute_taper);
}

// The groups' offset gathers summed on world rank 0, which top-mutes them as the image and makes
// the angle gathers from them (solvers/drivers/angle_gathers.h). Nothing without gathers (the z-slab split has none).
void finish_gathers(const MigrationRun& run, MigrationResult& result) {
  if (!run.fields->has_offset_gathers()) return;
  const ParallelContext& parallel = run.parallel;
  result.gather_layout = run.fields->gather_layout();
  result.offset_gathers = run.fields->download_offset_gathers();
  if (parallel.is_leader() && parallel.group_count() > 1)
    sum_to_root(result.offset_gathers, parallel.leaders_comm());
  if (!parallel.is_root()) {
    result.offset_gathers.clear();
    return;
  }
  // The image's top mute (--image-mute-depth): the residue next to the sources and receivers
  // would otherwise reach the larger angles through the slant stack (a lag of h reads h tan(theta)
  // shallower). Gather depth z is the model's plane z (the image box is the model).
  const OffsetGatherLayout& l = result.gather_layout;
  for (int z = 0; z < l.nz; ++z) {
    const float gain = float(image_mute_gain(z * run.model.dz, run.params.image_mute_depth,
                                             run.params.image_mute_taper));
    if (gain == 1.0f) continue;
    for (int64_t panel = 0; panel < int64_t(l.axes) * l.ngy * l.ngx; ++panel)
      for (int lag = 0; lag < l.nlag; ++lag)
        result.offset_gathers[size_t((panel * l.nz + z) * l.nlag + lag)] *= gain;
  }
  if (run.params.make_angle_gathers)
    result.angle_gathers = angle_gathers(result.offset_gathers, result.gather_layout, run.model.dz,
                                         run.model.dx, run.model.dy, run.params.angle_gathers);
}

} // namespace

namespace {
// migrate_shots, on the whole model or (part set) on a group's slabs of it.
MigrationResult migrate(const VelocityModel& model, const SlabModel* part, const ShotFile& shots,
                        const MigrationParams& params, std::ostream& log, RunStats* stats,
                        const MigrationControl& control);
} // namespace

void check_migration_memory_before_reading(const VelocityModel& shape, const ShotFile& shots,
                                           const MigrationParams& params,
                                           const ParallelContext& parallel, bool tti,
                                           double smooth, bool checkpoints) {
  // A file without these is refused by migrate_shots with its own message; nothing to size here.
  if (!(shots.dt > 0) || shots.nt < 1 || !(shots.f0 > 0)) return;
  const int reach = parallel.ranks_per_shot() > 1 && smooth > 0 ? smoothing_reach_cells(smooth, shape.dz)
                                                                : -1;
  const RunMemoryPlan plan =
      migration_memory_plan(simulation_grid_of_shape(shape, params.boundary, shots.dt), shots,
                            params, parallel, tti, reach, checkpoints,
                            imaging_interval(params, shots.dt, shots.f0));
  check_run_memory(with_storage(plan, source_storage_choice(plan, params, parallel, tti)),
                   params.backend, parallel.local_size(), run_name(params));
}

MigrationResult migrate_shots(const VelocityModel& model, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log, RunStats* stats,
                              const MigrationControl& control) {
  return migrate(model, nullptr, shots, params, log, stats, control);
}

MigrationResult migrate_shots(const SlabModel& part, const ShotFile& shots,
                              const MigrationParams& params, std::ostream& log, RunStats* stats,
                              const MigrationControl& control) {
  if (!control.parallel || control.parallel->ranks_per_shot() != int(part.slabs.size()))
    throw std::logic_error("migrate_shots: the model is split over " +
                           std::to_string(part.slabs.size()) + " ranks, not the group's");
  return migrate(part.shape, &part, shots, params, log, stats, control);
}

namespace {

MigrationResult migrate(const VelocityModel& model, const SlabModel* part, const ShotFile& shots,
                        const MigrationParams& params, std::ostream& log, RunStats* stats,
                        const MigrationControl& control) {
  const double setup_start = steady_seconds();
  const ParallelContext one_rank;
  const ParallelContext& parallel = control.parallel ? *control.parallel : one_rank;
  std::ostream& info = parallel.is_root() ? log : null_stream(); // one copy of each message
  const ModelExtremes extremes = run_velocity_extremes(model, part);
  check_migration_inputs(model, extremes.vmax, shots, params);
  check_imaging_condition(params.imaging_condition, part ? part->tti : !model.anisotropy.empty(),
                          part ? int(part->slabs.size()) : parallel.ranks_per_shot());
  check_offset_gathers(params, part ? part->tti : !model.anisotropy.empty(),
                       part ? int(part->slabs.size()) : parallel.ranks_per_shot(), control.resume);
  // TTI on slabs: the shape has no anisotropy; the CFL check takes the part's fastest velocity,
  // as make_simulation_grid takes fastest_velocity of a whole TTI model.
  ModelExtremes grid_extremes = extremes;
  if (part) grid_extremes.vmax = part->fastest;
  if (part && params.born_perturbation)
    throw std::invalid_argument("migration: Born data need the whole model on each rank");
  MigrationRun run(model, part, shots, params, parallel, info,
                   migration_grid(model, grid_extremes, shots, params, info));
  run.extremes = extremes;
  run.born_data = control.born_data;
  MigrationResult result;
  plan_reconstruction_and_receivers(run);
  result.memory = run.memory;
  const PhaseChoice phase = choose_migration_phase_filter(run);
  result.data_phase_filter = phase.filter;
  result.data_phase_order = phase.order;
  run.data_phase_order = phase.order;
  const bool checkpointing = !control.checkpoint_output.empty();
  // Whether checkpoints may be taken before a stop (their pinned staging): from every shot of the
  // file, before a resume says how many are left.
  make_wavefields(run, checkpointing && CheckpointPolicy(control.checkpoint_every,
                                                         int(shots.shots.size()),
                                                         parallel.group_count(), 0, !part)
                                            .periodic());
  result.reconstruction = run.reconstruction;
  ShotLoopPlan plan = migration_plan(run, resume_migration(run, control), control.checkpoint_every);
  if (checkpointing) {
    run.checkpoint_policy = std::make_unique<CheckpointPolicy>(
        control.checkpoint_every, int(unfinished_shots(plan.total, plan.finished).size()),
        parallel.group_count(), checkpoint_bytes(run), !part);
    if (run.checkpoint_policy->automatic())
      plan.checkpoint_interval = [&run] { return current_checkpoint_interval(run); };
  }
  announce_migration(run, int(unfinished_shots(plan.total, plan.finished).size()), control);
  if (params.profile) run.fields->enable_timing(true);
  prepare_source(run);

  ShotLoopBody body;
  body.run_shot = [&run](int s, ShotProgress& progress) {
    const double start = steady_seconds();
    migrate_shot_of_file(run, s, progress);
    if (run.checkpoint_policy) run.checkpoint_policy->shot_finished(steady_seconds() - start);
  };
  body.keep_shot = [&run](int s) { run.group_finished.push_back(s); };
  if (params.overlap_shots)
    body.prepare_shot = [&run](int s) {
      run.prefetch.start(s, [&run, s] { return prepare_shot_data(run, s); });
    };
  if (!control.checkpoint_output.empty())
    body.checkpoint = [&run, &control] { write_group_checkpoint(run, control); };
  const ShotLoopSummary loop = run_shot_loop(plan, control, parallel, log, body);
  // The last checkpoint written (a stopped run's too) before anything else touches HDF5 or the
  // run returns; its write overlapped the last shot, so this rarely waits.
  run.checkpoint_s += run.checkpoint_writer.finish();
  // A stopped run returns no image, its checkpoint written (by the loop).
  result.stop_signal = loop.stop_signal;
  if (result.stop_signal != 0) return result;

  result.shots_migrated = loop.shots_to_do;
  if (stats) {
    stats->seconds = loop.seconds();
    stats->cell_updates = plan.cell_updates_per_shot * double(loop.shots_to_do);
  }
  if (params.profile) measure_profile(run, loop, setup_start, result.profile);
  const double finish_start = steady_seconds();
  finish_image(run, result);
  finish_gathers(run, result);
  const double release_start = steady_seconds();
  result.profile.finish_s = release_start - finish_start;
  run.release_fields();
  result.profile.release_s = steady_seconds() - release_start;
  if (!parallel.is_root()) return result;
  if (params.profile) print_migration_profile(result.profile, log);
  return result;
}

} // namespace

double MigrationProfile::rtm_gcells_per_s() const {
  return loop_s > 0 ? double(grid.interior_cells()) * nt * 2.0 * shots / loop_s * 1e-9 : 0.0;
}

double MigrationProfile::sweep_gcells_per_s() const {
  return loop_s > 0 ? double(grid.interior_cells()) * nt * double(sweeps) * shots / loop_s * 1e-9
                    : 0.0;
}

void print_migration_profile(const MigrationProfile& p, std::ostream& out) {
  const PropagatorTiming& t = p.timing;
  char line[512];
  std::snprintf(line, sizeof line,
                "rtm: profile of the shot loop: %d shot(s) x %d time steps on %s, grid %dx%dx%d, "
                "%d wave-step sweeps per shot, imaging every %d step(s)\n",
                p.shots, p.nt, p.propagator.c_str(), p.grid.nx, p.grid.ny, p.grid.nz, p.sweeps,
                p.imaging_interval);
  out << line;
  auto row = [&](const char* what, double seconds, const char* note) {
    std::snprintf(line, sizeof line, "rtm: profile:   %-24s %9.3f s %6.1f%%%s\n", what, seconds,
                  p.loop_s > 0 ? 100.0 * seconds / p.loop_s : 0.0, note);
    out << line;
  };
  char per_step[64] = "";
  if (t.steps > 0) std::snprintf(per_step, sizeof per_step, "  (%lld steps, %.3f ms each)",
                                 static_cast<long long>(t.steps), t.step_ms / double(t.steps));
  row("wall", p.loop_s, "");
  row("wave-step kernels", t.step_ms * 1e-3, per_step);
  if (t.fused_steps > 0) {
    std::snprintf(line, sizeof line,
                  "rtm: profile:     of which %lld steps in fused pairs (source and receiver field "
                  "in one kernel, the imaging of their step included)\n",
                  static_cast<long long>(t.fused_steps));
    out << line;
  }
  row("imaging", t.imaging_ms * 1e-3, t.fused_steps > 0 ? "  (the steps not fused)" : "");
  row("boundary save/restore", t.boundary_ms * 1e-3, "");
  row("injection/recording", t.points_ms * 1e-3, "");
  row("snapshot copies", t.box_copy_ms * 1e-3, "");
  row("host, transfers, idle", p.host_s(), "  (the wall less the operations above)");
  char shots_note[96];
  std::snprintf(shots_note, sizeof shots_note, "  (%d shot(s)%s)", p.shots,
                p.overlap_shots ? "; the next one's made ahead while one steps" : "; no overlap");
  row("  of which shot set-up", p.setup_wait_s, shots_note);
  row("  of which checkpoints", p.checkpoint_s,
      "  (partial sums copied to the host; files written beside the next shot's steps)");
  std::snprintf(line, sizeof line,
                "rtm: profile: idle %.2f%% of the loop (%.3f s: the device or the stepping thread "
                "waiting for the host); shot set-up hidden behind the steps %.3f s on the prefetch "
                "thread (%d shot(s) set up there)\n",
                100.0 * p.idle_fraction(), p.host_s(), p.prefetch_s, p.prefetched_shots);
  out << line;
  std::snprintf(line, sizeof line,
                "rtm: profile: outside the loop: %.3f s before (propagators, stores), %.3f s after "
                "(image download %.3f s, normalisation, filter), %.3f s freeing the fields\n",
                p.setup_s, p.finish_s, p.download_s, p.release_s);
  out << line;
  std::snprintf(line, sizeof line,
                "rtm: profile: RTM throughput %.2f Gcells/s (cells x steps x 2: forward and backward "
                "propagation); %.2f Gcells/s counting all %d sweeps\n",
                p.rtm_gcells_per_s(), p.sweep_gcells_per_s(), p.sweeps);
  out << line;
  std::snprintf(line, sizeof line,
                "PERFORMANCE rtm-migrate backend=%s grid=%dx%dx%d shots=%d nt=%d sweeps=%d "
                "total_s=%.3f loop_s=%.3f step_s=%.3f step_fraction=%.3f other_device_s=%.3f "
                "host_s=%.3f rtm_gcells_per_s=%.2f sweep_gcells_per_s=%.2f imaging_interval=%d "
                "fused_steps=%lld idle_fraction=%.4f setup_wait_s=%.3f prefetch_s=%.3f "
                "overlap_shots=%d checkpoint_s=%.3f\n",
                p.propagator.c_str(), p.grid.nx, p.grid.ny, p.grid.nz, p.shots, p.nt, p.sweeps,
                p.setup_s + p.loop_s + p.finish_s, p.loop_s, t.step_ms * 1e-3,
                p.loop_s > 0 ? t.step_ms * 1e-3 / p.loop_s : 0.0, t.non_step_ms() * 1e-3,
                p.host_s(), p.rtm_gcells_per_s(), p.sweep_gcells_per_s(), p.imaging_interval,
                static_cast<long long>(t.fused_steps), p.idle_fraction(), p.setup_wait_s,
                p.prefetch_s, p.overlap_shots ? 1 : 0, p.checkpoint_s);
  out << line << std::flush;
}

} // namespace rtm
