#include "solvers/drivers/modeling.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>

#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "io/provenance.h"
#include "io/shot_checkpoint.h"
#include "solvers/drivers/memory_budget.h"
#include "solvers/drivers/numerics.h"
#include "solvers/drivers/shot_loop.h"
#include "solvers/drivers/decomposed_backend.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/time_dispersion.h"
#include "solvers/drivers/tti_setup.h"
#include "solvers/drivers/wavelet.h"

namespace rtm {

void check_modeling_params(const ModelingParams& p) {
  if (!(p.wavelet.f0 > 0) || !std::isfinite(p.wavelet.f0))
    throw InputError("--f0: the wavelet's peak frequency must be positive, got " +
                     format_number(p.wavelet.f0));
  if (!std::isfinite(p.wavelet.t0))
    throw InputError("--t0: the wavelet delay must be finite");
  if (!(p.record_time > 0) || !std::isfinite(p.record_time))
    throw InputError("--record-time must be positive, got " + format_number(p.record_time));
  if (p.dt < 0 || !std::isfinite(p.dt))
    throw InputError("--dt must be positive (or 0 to derive it from CFL), got " +
                     format_number(p.dt));
}

std::vector<float> series_to_traces(const std::vector<float>& series, int npoints, int nt) {
  std::vector<float> traces(series.size());
  for (int t = 0; t < nt; ++t)
    for (int r = 0; r < npoints; ++r)
      traces[size_t(r) * nt + t] = series[size_t(t) * npoints + r];
  return traces;
}

std::vector<float> traces_to_series(const std::vector<float>& traces, int npoints, int nt) {
  std::vector<float> series(traces.size());
  for (int t = 0; t < nt; ++t)
    for (int r = 0; r < npoints; ++r)
      series[size_t(t) * npoints + r] = traces[size_t(r) * nt + t];
  return series;
}

std::vector<float> model_one_shot(Wavefield& field, float injection_scale, PointSet& source,
                                  PointSet& receivers, int nreceivers, int nt,
                                  const HealthCheck* health, const std::string& context,
                                  ShotProgress* progress) {
  field.zero_state();
  for (int n = 0; n < nt; ++n) {
    receivers.record(n);
    field.step();
    source.inject(n, injection_scale);
    if (health && health->due(n + 1, nt)) check_wavefield(field, *health, n + 1, nt, context);
    if (progress) progress->tick();
  }
  return series_to_traces(receivers.download_series(), nreceivers, nt);
}

namespace {

// World rank 0 receives the shots the other groups' leaders modelled (each leader's in the order
// it made them) and sorts all by shot number. Collective over the leaders.
void collect_shots_on_root(std::vector<ShotGather>& gathers, const ParallelContext& parallel,
                           const std::function<size_t(int id)>& values_of_shot) {
  MPI_Comm leaders = parallel.leaders_comm();
  int leader = 0, leader_count = 1;
  check_mpi(MPI_Comm_rank(leaders, &leader), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(leaders, &leader_count), "MPI_Comm_size");
  auto checked_size = [&](int id) {
    const size_t values = values_of_shot(id);
    if (values > size_t(INT_MAX))
      throw std::runtime_error("modeling: a shot of " + std::to_string(values) +
                               " samples is too large for one MPI message");
    return int(values);
  };
  // Per shot: its id, the source position, then the traces (their count follows from the id).
  if (leader != 0) {
    int count = int(gathers.size());
    check_mpi(MPI_Send(&count, 1, MPI_INT, 0, 0, leaders), "MPI_Send (shot count)");
    for (ShotGather& gather : gathers) {
      check_mpi(MPI_Send(&gather.id, 1, MPI_INT, 0, 1, leaders), "MPI_Send (shot id)");
      check_mpi(MPI_Send(gather.source.data(), 3, MPI_DOUBLE, 0, 2, leaders), "MPI_Send (source)");
      check_mpi(MPI_Send(gather.data.data(), checked_size(gather.id), MPI_FLOAT, 0, 3, leaders),
                "MPI_Send (traces)");
    }
    gathers.clear();
    return;
  }
  for (int from = 1; from < leader_count; ++from) {
    int count = 0;
    check_mpi(MPI_Recv(&count, 1, MPI_INT, from, 0, leaders, MPI_STATUS_IGNORE), "MPI_Recv (shot count)");
    for (int k = 0; k < count; ++k) {
      ShotGather gather;
      check_mpi(MPI_Recv(&gather.id, 1, MPI_INT, from, 1, leaders, MPI_STATUS_IGNORE), "MPI_Recv (shot id)");
      gather.data.resize(size_t(checked_size(gather.id)));
      check_mpi(MPI_Recv(gather.source.data(), 3, MPI_DOUBLE, from, 2, leaders, MPI_STATUS_IGNORE),
                "MPI_Recv (source)");
      check_mpi(MPI_Recv(gather.data.data(), int(gather.data.size()), MPI_FLOAT, from, 3, leaders,
                         MPI_STATUS_IGNORE),
                "MPI_Recv (traces)");
      gathers.push_back(std::move(gather));
    }
  }
  std::sort(gathers.begin(), gathers.end(),
            [](const ShotGather& a, const ShotGather& b) { return a.id < b.id; });
}

// What makes two modeling runs the same computation, for the checkpoint: the velocities and their
// grid, the sources and receivers, the time axis and wavelet, the absorbing boundary.
// `model` gives the grid's shape; `grid` is the model's fingerprint.
std::string modeling_identity(const VelocityModel& model, uint64_t grid, const Acquisition& acq,
                              const ModelingParams& params, const ShotFile& header) {
  auto hash = [](const void* data, size_t bytes) { return fingerprint(data, bytes); };
  char text[1024];
  std::snprintf(text, sizeof text,
                "format = rtm-modeling-checkpoint 1\nmodel = %dx%dx%d cells, fingerprint %016llx\n"
                "sources = %zu, fingerprint %016llx\nreceivers = %zu, fingerprint %016llx\n"
                "nt = %d\ndt = %.17g\nf0 = %.17g\nt0 = %.17g\nboundary_width = %d\n"
                "free_surface = %s\nboundary_reflection = %.17g\ntime_dispersion_transform = %s\n"
                "point_interpolation = %s\nabsorber = %s\n",
                model.nx, model.ny, model.nz, static_cast<unsigned long long>(grid),
                acq.sources.size(),
                static_cast<unsigned long long>(
                    hash(acq.sources.data(), acq.sources.size() * sizeof(Position))),
                acq.receivers.size(),
                static_cast<unsigned long long>(
                    hash(acq.receivers.data(), acq.receivers.size() * sizeof(Position))),
                header.nt, header.dt, header.f0, header.t0, params.boundary.width,
                params.boundary.free_surface ? "true" : "false", params.boundary.reflection,
                params.time_dispersion_transform ? "on" : "off",
                point_interpolation_name(params.point_interpolation),
                absorber_name(params.boundary.absorber));
  std::string identity = text;
  // Per-shot spreads (a line only then, so the identity of shared-spread runs is unchanged).
  if (!acq.shot_receivers.empty()) {
    uint64_t h = kFingerprintSeed;
    size_t count = 0;
    for (const std::vector<Position>& spread : acq.shot_receivers) {
      const uint64_t n = spread.size();
      h = fingerprint(&n, sizeof n, h);
      h = fingerprint(spread.data(), spread.size() * sizeof(Position), h);
      count += spread.size();
    }
    std::snprintf(text, sizeof text, "per_shot_receivers = %zu, fingerprint %016llx\n", count,
                  static_cast<unsigned long long>(h));
    identity += text;
  }
  return identity;
}

// World rank 0 reads the checkpoint of the output (or refuses a stale one without --resume, or
// starts a fresh one) and tells every rank which shots are finished. Collective.
std::vector<ShotGather> carry_over_shots(const ModelingControl& control, const std::string& identity,
                                         const ShotFile& header, int nshots,
                                         const ParallelContext& parallel, std::ostream& info,
                                         std::vector<char>& finished) {
  std::vector<ShotGather> resumed;
  const std::string& output = control.checkpoint_output;
  if (parallel.is_root()) {
    const bool exists = shot_checkpoint_exists(output);
    if (exists && !control.resume)
      throw InputError(shot_checkpoint_dir(output) + ": the checkpoint of an interrupted modeling "
                       "run to " + output + " exists; `rtm model --resume` with the same options "
                       "continues it, or delete " + shot_checkpoint_dir(output) +
                       " to start afresh");
    if (exists) {
      resumed = read_shot_checkpoint(output, identity, header, nshots);
      info << "rtm: resuming from " << shot_checkpoint_dir(output) << ": " << resumed.size()
           << " of " << nshots << " shot(s) already modeled\n";
    } else {
      if (control.resume)
        info << "rtm: --resume: no checkpoint of " << output << " found; starting from the first shot\n";
      start_shot_checkpoint(output, identity);
    }
  }
  finished.assign(size_t(nshots), 0);
  for (const ShotGather& gather : resumed) finished[size_t(gather.id)] = 1;
  if (parallel.uses_mpi())
    check_mpi(MPI_Bcast(finished.data(), nshots, MPI_CHAR, 0, MPI_COMM_WORLD),
              "MPI_Bcast (resumed shots)");
  return resumed;
}

} // namespace

namespace {

void check_modeling_inputs(const ModelingParams& params, const Acquisition& acq) {
  check_modeling_params(params);
  if (acq.sources.empty()) throw InputError("modeling: no sources given");
  if (acq.shot_receivers.empty()) {
    if (acq.receivers.empty()) throw InputError("modeling: no receivers given");
    return;
  }
  if (acq.shot_receivers.size() != acq.sources.size())
    throw InputError("modeling: " + std::to_string(acq.shot_receivers.size()) +
                     " per-shot receiver spreads for " + std::to_string(acq.sources.size()) +
                     " sources; expected one spread per source");
  for (size_t s = 0; s < acq.shot_receivers.size(); ++s)
    if (acq.shot_receivers[s].empty())
      throw InputError("modeling: shot " + std::to_string(s) + " has no receivers");
}

// The compute grid of a modeling run, with the dispersion warning (world rank 0 says it). `model`
// is whole, or (part set) its shape only; `extremes` are the whole model's.
SimulationGrid modeling_grid(const VelocityModel& model, const SlabModel* part,
                             const ModelExtremes& extremes, const ModelingParams& params,
                             std::ostream& info) {
  BoundaryConfig boundary = params.boundary;
  if (boundary.frequency == 0) boundary.frequency = params.wavelet.f0; // the C-PML's alpha
  SimulationGrid sim = part ? slab_simulation_grid(*part, boundary, params.dt)
                            : make_simulation_grid(model, boundary, params.dt);
  const std::string warning =
      dispersion_warning(extremes.vmin, params.wavelet.f0, model.dx, model.dy, model.dz);
  if (!warning.empty()) info << "rtm: " << warning << "\n";
  return sim;
}

// The output's header: time axis, wavelet, receivers, grid. The wavelet the sources inject goes
// to `source_wavelet`, and the transform the traces need to `remove_time_dispersion`.
ShotFile shot_file_header(const VelocityModel& model, const ModelExtremes& extremes,
                          const Acquisition& acq, const ModelingParams& params,
                          const SimulationGrid& sim,
                          std::vector<float>& source_wavelet,
                          std::unique_ptr<TimeDispersionTransform>& remove_time_dispersion,
                          std::ostream& info) {
  ShotFile out;
  out.nt = int(std::floor(params.record_time / sim.dt + 1e-9)) + 1;
  out.dt = sim.dt;
  out.f0 = params.wavelet.f0;
  out.t0 = params.wavelet.t0 >= 0 ? params.wavelet.t0 : default_ricker_delay(params.wavelet.f0);
  out.wavelet = ricker_wavelet(out.nt, out.dt, out.f0, out.t0);
  // Time dispersion: the source injects the wavelet's forward transform, and the inverse on the
  // traces makes them what the time-continuous equation gives for out.wavelet (docs/physics.md).
  source_wavelet = out.wavelet;
  if (params.time_dispersion_transform) {
    source_wavelet = time_dispersion_transformed(out.wavelet, TimeDispersion::add);
    remove_time_dispersion = std::make_unique<TimeDispersionTransform>(out.nt, TimeDispersion::remove);
    out.time_dispersion_removed = true;
  }
  AccuracyCase accuracy{extremes.vmin, extremes.vmax, out.f0, model.dx, model.dy, model.dz, sim.dt,
                        std::max(0.0, params.record_time - out.t0), out.time_dispersion_removed};
  const std::string accuracy_text = accuracy_warning(accuracy);
  if (!accuracy_text.empty()) info << "rtm: " << accuracy_text << "\n";
  out.receivers = acq.receivers; // empty for per-shot spreads: each gather carries its own
  out.nx = model.nx; out.ny = model.ny; out.nz = model.nz;
  out.dx = model.dx; out.dy = model.dy; out.dz = model.dz;
  out.ox = model.ox; out.oy = model.oy; out.oz = model.oz;
  return out;
}

// Refused before anything is allocated when it cannot fit. Only the root keeps every gather,
// so the ranks of a node are not given shares of its memory here. A group of several ranks per
// shot splits the grid (kernels/mpi/decomposed_propagator.h): each rank is estimated for its slab
// (the largest), as migration's are (estimate_run_memory).
// One rank per shot holds the model twice beside the run: the command's and the grid's copy
// (SimulationGrid::model); a group's ranks hold their planes (counted by the estimate itself).
void check_modeling_memory(const SimulationGrid& sim, int nt, size_t receivers, size_t shots,
                           const ModelingParams& params, const ParallelContext& parallel) {
  RunMemoryPlan plan;
  plan.ranks_per_shot = parallel.ranks_per_shot();
  plan.model_copies = parallel.ranks_per_shot() > 1 ? 0 : 2;
  plan.layout = sim.layout;
  plan.box = model_box(sim);
  plan.cpml = sim.boundary.absorber == Absorber::cpml && sim.boundary.width > 0;
  plan.physics = sim.physics;
  plan.nt = nt;
  plan.receivers = int(receivers);
  plan.shots = int(shots);
  plan.migration = false;
  check_run_memory(plan, params.backend, 1, "rtm model");
}

// The run's description on world rank 0, and what shaped the traces for the output file's
// provenance (io/provenance.h).
void announce_modeling(const ModelingParams& params, const ShotFile& out, size_t shots,
                       const std::string& receivers, const std::string& propagator,
                       const GridLayout& g, std::ostream& info) {
  info << "rtm: modeling " << shots << " shot(s) on " << propagator << ": grid "
      << g.nx << "x" << g.ny << "x" << g.nz << " (absorbing layers of " << params.boundary.width
      << " cells included), " << out.nt << " steps of dt = " << out.dt << " s, " << receivers
      << " (" << point_interpolation_name(params.point_interpolation)
      << " point interpolation)\n";
  record_run_parameter("propagator", propagator);
  record_run_parameter("dt_s", format_number(out.dt));
  record_run_parameter("wavelet", "Ricker f0 = " + format_number(out.f0) + " Hz, t0 = " +
                                      format_number(out.t0) + " s");
  record_run_parameter("boundary", std::string(absorber_name(params.boundary.absorber)) + ", " +
                                       std::to_string(params.boundary.width) + " cells" +
                                       (params.boundary.free_surface ? ", free surface" : ""));
  record_run_parameter("point_interpolation", point_interpolation_name(params.point_interpolation));
  record_run_parameter("time_dispersion_transform", params.time_dispersion_transform ? "on" : "off");
}

// One source per shot, all with the same wavelet: one limit serves every shot.
HealthCheck modeling_health(const SimulationGrid& sim, const std::vector<float>& source_wavelet,
                            double vmax, int nt) {
  return make_health_check(
      sim, runaway_limit(injected_amplitude(source_wavelet, sim.injection_scale(),
                                            vmax * vmax * sim.dt * sim.dt),
                         0.0, nt));
}

// The shots, their steps and cost, as the shot loop sees them; none finished yet.
ShotLoopPlan modeling_plan(const GridLayout& g, int nt, int nshots) {
  ShotLoopPlan plan;
  plan.total = nshots;
  plan.finished.assign(size_t(nshots), 0);
  plan.verb = "modeled";
  plan.phases = {{nt, 1.0}};
  plan.cells_per_step = double(g.interior_cells());
  plan.cell_updates_per_shot = double(g.interior_cells()) * nt;
  return plan;
}

// After the loop: world rank 0 gets every group's shots and the resumed ones, in shot order.
void collect_modelled_shots(ShotFile& out, std::vector<ShotGather>& resumed,
                            const ParallelContext& parallel, const Acquisition& acq) {
  if (parallel.is_leader() && parallel.group_count() > 1) {
    collect_shots_on_root(out.shots, parallel, [&](int id) {
      return acq.receivers_of(size_t(id)).size() * size_t(out.nt);
    });
    // The spreads of the shots other groups modelled, from the acquisition every rank holds.
    if (!acq.shot_receivers.empty())
      for (ShotGather& gather : out.shots) gather.receivers = acq.shot_receivers[size_t(gather.id)];
  }
  if (parallel.is_root() && !resumed.empty()) {
    for (ShotGather& gather : resumed) out.shots.push_back(std::move(gather));
    std::sort(out.shots.begin(), out.shots.end(),
              [](const ShotGather& a, const ShotGather& b) { return a.id < b.id; });
  }
}

} // namespace

int check_modeling_memory_before_reading(const VelocityModel& shape, const Acquisition& acq,
                                          const ModelingParams& params,
                                          const ParallelContext& parallel, Physics physics,
                                          double vmax_at_least) {
  check_modeling_inputs(params, acq);
  // The fewest steps the run can take: the slowest fastest velocity gives the longest stable dt.
  const double dt = params.dt > 0 ? params.dt
                    : vmax_at_least > 0 ? choose_dt(0, vmax_at_least, shape.dx, shape.dy, shape.dz)
                                        : 0;
  const int nt = dt > 0 ? int(std::min(std::floor(params.record_time / dt + 1e-9) + 1, double(INT_MAX)))
                        : 1;
  size_t receivers = acq.receivers.size();
  for (const std::vector<Position>& spread : acq.shot_receivers)
    receivers = std::max(receivers, spread.size());
  check_modeling_memory(simulation_grid_of_shape(shape, params.boundary, dt, physics), nt,
                        receivers, acq.sources.size(), params, parallel);
  return nt;
}

namespace {
// model_shots, on the whole model or (part set) on a group's slabs of it.
ShotFile run_modeling(const VelocityModel& model, const SlabModel* part, const Acquisition& acq,
                     const ModelingParams& params, std::ostream& log, RunStats* stats,
                     const ParallelContext* parallel_context, ModelingControl* control_in);
} // namespace

ShotFile model_shots(const VelocityModel& model, const Acquisition& acq, const ModelingParams& params,
                     std::ostream& log, RunStats* stats, const ParallelContext* parallel,
                     ModelingControl* control) {
  return run_modeling(model, nullptr, acq, params, log, stats, parallel, control);
}

ShotFile model_shots(const SlabModel& part, const Acquisition& acq, const ModelingParams& params,
                     std::ostream& log, RunStats* stats, const ParallelContext& parallel,
                     ModelingControl* control) {
  if (parallel.ranks_per_shot() != int(part.slabs.size()))
    throw std::logic_error("model_shots: the model is split over " +
                           std::to_string(part.slabs.size()) + " ranks, not the group's");
  return run_modeling(part.shape, &part, acq, params, log, stats, &parallel, control);
}

namespace {

ShotFile run_modeling(const VelocityModel& model, const SlabModel* part, const Acquisition& acq,
                     const ModelingParams& params, std::ostream& log, RunStats* stats,
                     const ParallelContext* parallel_context, ModelingControl* control_in) {
  ModelingControl no_control;
  ModelingControl& control = control_in ? *control_in : no_control;
  const ParallelContext one_rank;
  const ParallelContext& parallel = parallel_context ? *parallel_context : one_rank;
  std::ostream& info = parallel.is_root() ? log : null_stream(); // one copy of each message
  check_modeling_inputs(params, acq);
  const ModelExtremes extremes = run_velocity_extremes(model, part);
  SimulationGrid sim = modeling_grid(model, part, extremes, params, info);
  // The shared spread is placed once; per-shot spreads are checked now (a receiver outside the
  // model refused before any shot runs, naming shot and receiver) and placed with their shot.
  const bool per_shot = !acq.shot_receivers.empty();
  const std::vector<PointStencil> receivers =
      locate_points(sim, acq.receivers, "receiver", params.point_interpolation);
  size_t most_receivers = receivers.size();
  for (size_t s = 0; s < acq.shot_receivers.size(); ++s) {
    locate_points(sim, acq.shot_receivers[s], "shot " + std::to_string(s) + ": receiver",
                  params.point_interpolation);
    most_receivers = std::max(most_receivers, acq.shot_receivers[s].size());
  }
  const std::vector<PointStencil> sources =
      locate_points(sim, acq.sources, "source", params.point_interpolation);
  // TTI: the shear taper around every source and receiver of the survey, the medium its migration
  // steps in too (solvers/drivers/shear_taper.h).
  {
    std::vector<Position> points = acq.sources;
    points.insert(points.end(), acq.receivers.begin(), acq.receivers.end());
    for (const std::vector<Position>& spread : acq.shot_receivers)
      points.insert(points.end(), spread.begin(), spread.end());
    set_shear_taper(sim, part, parallel.group_comm(), params.shear_taper, std::move(points), info);
  }
  std::vector<float> source_wavelet;
  std::unique_ptr<TimeDispersionTransform> remove_time_dispersion;
  ShotFile out = shot_file_header(model, extremes, acq, params, sim, source_wavelet,
                                  remove_time_dispersion, info);

  check_modeling_memory(sim, out.nt, most_receivers, sources.size(), params, parallel);
  // Split over the group, each rank builds its slab from its part of the model alone.
  const std::unique_ptr<Wavefield> propagator =
      part ? make_decomposed_wavefield(make_slab_decomposition(sim, *part, parallel.group_comm()),
                                       params.backend, info)
           : make_shot_wavefield(make_propagator_setup(sim), params.backend, parallel, info);
  const std::unique_ptr<PointSet> shared_receiver_set =
      per_shot ? nullptr : propagator->add_points(receivers, out.nt);
  std::string receiver_text = std::to_string(receivers.size()) + " receivers";
  if (per_shot) {
    size_t fewest = most_receivers;
    for (const std::vector<Position>& spread : acq.shot_receivers) fewest = std::min(fewest, spread.size());
    receiver_text = "per-shot spreads of " + std::to_string(fewest) +
                    (fewest == most_receivers ? "" : " to " + std::to_string(most_receivers)) +
                    " receivers";
  }
  announce_modeling(params, out, sources.size(), receiver_text, propagator->name(), sim.layout, info);
  const HealthCheck health = modeling_health(sim, source_wavelet, extremes.vmax, out.nt);

  // Resuming: the shots finished before are read back, not modeled again.
  ShotLoopPlan plan = modeling_plan(sim.layout, out.nt, int(sources.size()));
  const bool checkpointing = !control.checkpoint_output.empty();
  std::vector<ShotGather> resumed;
  if (checkpointing) {
    // Two collectives over the group in turn (not as operands of one expression: unsequenced).
    const uint64_t velocities = part ? model_fingerprint(*part, parallel.group_comm())
                                     : model_fingerprint(model);
    std::string anisotropy = part ? anisotropy_identity(*part, parallel.group_comm())
                                  : anisotropy_identity(model); // TTI: a line of its own
    if (physics_info(sim.physics).shear_taper)
      anisotropy += shear_taper_identity(params.shear_taper, model);
    resumed = carry_over_shots(control, modeling_identity(model, velocities, acq, params, out) + anisotropy,
                               out, plan.total, parallel, info, plan.finished);
  }

  ShotLoopBody body;
  ShotGather gather; // the shot being modeled, until it is kept
  body.run_shot = [&](int s, ShotProgress& progress) {
    // The shot's own source (and own receivers); freed (device memory too) when the shot ends.
    const std::unique_ptr<PointSet> source_set = propagator->add_points({sources[size_t(s)]}, out.nt);
    source_set->upload_series(source_wavelet);
    const std::unique_ptr<PointSet> own_receiver_set =
        per_shot ? propagator->add_points(locate_points(sim, acq.shot_receivers[size_t(s)],
                                                        "receiver", params.point_interpolation),
                                          out.nt)
                 : nullptr;
    PointSet& receiver_set = per_shot ? *own_receiver_set : *shared_receiver_set;
    gather = ShotGather();
    gather.id = s;
    gather.source = acq.sources[size_t(s)];
    if (per_shot) gather.receivers = acq.shot_receivers[size_t(s)];
    gather.data = model_one_shot(*propagator, sim.injection_scale(), *source_set, receiver_set,
                                 int(acq.receivers_of(size_t(s)).size()), out.nt, &health,
                                 "shot " + std::to_string(s), &progress);
  };
  body.keep_shot = [&](int) {
    if (!parallel.is_leader()) return;
    // Dispersion removed before the shot is checkpointed, so a resumed run stores the same traces.
    if (remove_time_dispersion) remove_time_dispersion->apply(gather.data);
    if (checkpointing) write_checkpoint_shot(control.checkpoint_output, out, gather);
    out.shots.push_back(std::move(gather));
  };
  const ShotLoopSummary loop = run_shot_loop(plan, control, parallel, log, body);
  control.shots_resumed = loop.shots_resumed;
  // A stop on any rank stops them all: every finished shot is in the checkpoint already.
  control.stop_signal = loop.stop_signal;
  if (control.stop_signal != 0) {
    out.shots.clear();
    return out;
  }
  collect_modelled_shots(out, resumed, parallel, acq);
  if (stats) { // the time to collect the shots included
    stats->seconds = steady_seconds() - loop.start_s;
    stats->cell_updates = plan.cell_updates_per_shot * double(loop.shots_to_do);
  }
  return out;
}

} // namespace

} // namespace rtm
