#include "solvers/modeling.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>

#include "io/errors.h"
#include "solvers/memory_budget.h"
#include "solvers/numerics.h"
#include "solvers/shot_parallel.h"
#include "solvers/wavelet.h"

namespace rtm {

void check_modeling_params(const ModelingParams& p) {
  if (!(p.wavelet.f0 > 0) || !std::isfinite(p.wavelet.f0))
    throw InputError("--f0: the wavelet's peak frequency must be positive, got " +
                     std::to_string(p.wavelet.f0));
  if (!std::isfinite(p.wavelet.t0))
    throw InputError("--t0: the wavelet delay must be finite");
  if (!(p.record_time > 0) || !std::isfinite(p.record_time))
    throw InputError("--record-time must be positive, got " + std::to_string(p.record_time));
  if (p.dt < 0 || !std::isfinite(p.dt))
    throw InputError("--dt must be positive (or 0 to derive it from CFL), got " +
                     std::to_string(p.dt));
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

std::vector<float> model_one_shot(Propagator& prop, float injection_scale, int source_set,
                                  int receiver_set, int nreceivers, int nt,
                                  const HealthCheck* health, const std::string& context) {
  prop.zero_state();
  for (int n = 0; n < nt; ++n) {
    prop.record(receiver_set, n);
    prop.step();
    prop.inject(source_set, n, injection_scale);
    if (health && health->due(n + 1, nt)) check_wavefield(prop, *health, n + 1, nt, context);
  }
  return series_to_traces(prop.download_series(receiver_set), nreceivers, nt);
}

namespace {

// World rank 0 receives the shots the other groups' leaders modelled (each leader's in the order
// it made them) and sorts all by shot number. Collective over the leaders.
void collect_shots_on_root(std::vector<ShotGather>& gathers, const ParallelContext& parallel,
                           size_t values_per_shot) {
  MPI_Comm leaders = parallel.leaders_comm();
  int leader = 0, leader_count = 1;
  check_mpi(MPI_Comm_rank(leaders, &leader), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(leaders, &leader_count), "MPI_Comm_size");
  if (values_per_shot > size_t(INT_MAX))
    throw std::runtime_error("modeling: a shot of " + std::to_string(values_per_shot) +
                             " samples is too large for one MPI message");
  // Per shot: its id, the source position, then the traces.
  if (leader != 0) {
    int count = int(gathers.size());
    check_mpi(MPI_Send(&count, 1, MPI_INT, 0, 0, leaders), "MPI_Send (shot count)");
    for (ShotGather& gather : gathers) {
      check_mpi(MPI_Send(&gather.id, 1, MPI_INT, 0, 1, leaders), "MPI_Send (shot id)");
      check_mpi(MPI_Send(gather.source.data(), 3, MPI_DOUBLE, 0, 2, leaders), "MPI_Send (source)");
      check_mpi(MPI_Send(gather.data.data(), int(values_per_shot), MPI_FLOAT, 0, 3, leaders),
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
      gather.data.resize(values_per_shot);
      check_mpi(MPI_Recv(&gather.id, 1, MPI_INT, from, 1, leaders, MPI_STATUS_IGNORE), "MPI_Recv (shot id)");
      check_mpi(MPI_Recv(gather.source.data(), 3, MPI_DOUBLE, from, 2, leaders, MPI_STATUS_IGNORE),
                "MPI_Recv (source)");
      check_mpi(MPI_Recv(gather.data.data(), int(values_per_shot), MPI_FLOAT, from, 3, leaders,
                         MPI_STATUS_IGNORE),
                "MPI_Recv (traces)");
      gathers.push_back(std::move(gather));
    }
  }
  std::sort(gathers.begin(), gathers.end(),
            [](const ShotGather& a, const ShotGather& b) { return a.id < b.id; });
}

} // namespace

ShotFile model_shots(const VelocityModel& model, const Acquisition& acq, const ModelingParams& params,
                     std::ostream& log, RunStats* stats, const ParallelContext* parallel_context) {
  const ParallelContext one_rank;
  const ParallelContext& parallel = parallel_context ? *parallel_context : one_rank;
  std::ostream& info = parallel.is_root() ? log : null_stream(); // one copy of each message
  check_modeling_params(params);
  if (acq.sources.empty()) throw InputError("modeling: no sources given");
  if (acq.receivers.empty()) throw InputError("modeling: no receivers given");

  BoundaryConfig boundary = params.boundary;
  if (boundary.frequency == 0) boundary.frequency = params.wavelet.f0; // the C-PML's alpha
  const SimulationGrid sim = make_simulation_grid(model, boundary, params.dt);
  const std::string warning =
      dispersion_warning(model.vmin(), params.wavelet.f0, model.dx, model.dy, model.dz);
  if (!warning.empty()) info << "rtm: " << warning << "\n";

  std::vector<PointStencil> receivers;
  for (size_t r = 0; r < acq.receivers.size(); ++r)
    receivers.push_back(locate_point(sim, acq.receivers[r], "receiver " + std::to_string(r)));
  std::vector<PointStencil> sources;
  for (size_t s = 0; s < acq.sources.size(); ++s)
    sources.push_back(locate_point(sim, acq.sources[s], "source " + std::to_string(s)));

  ShotFile out;
  out.nt = int(std::floor(params.record_time / sim.dt + 1e-9)) + 1;
  out.dt = sim.dt;
  out.f0 = params.wavelet.f0;
  out.t0 = params.wavelet.t0 >= 0 ? params.wavelet.t0 : default_ricker_delay(params.wavelet.f0);
  out.wavelet = ricker_wavelet(out.nt, out.dt, out.f0, out.t0);
  out.receivers = acq.receivers;
  out.nx = model.nx; out.ny = model.ny; out.nz = model.nz;
  out.dx = model.dx; out.dy = model.dy; out.dz = model.dz;
  out.ox = model.ox; out.oy = model.oy; out.oz = model.oz;

  // Refused before anything is allocated when it cannot fit. Only the root keeps every gather,
  // so the ranks of a node are not given shares of its memory here. A group of several ranks per
  // shot splits the grid (solvers/decomposed_propagator.h) and is not estimated.
  if (parallel.ranks_per_shot() == 1) {
    RunMemoryPlan plan;
    plan.layout = sim.layout;
    plan.box = model_box(sim);
    plan.cpml = sim.boundary.absorber == Absorber::cpml && sim.boundary.width > 0;
    plan.nt = out.nt;
    plan.receivers = int(receivers.size());
    plan.shots = int(sources.size());
    plan.migration = false;
    check_run_memory(plan, params.backend, 1, "rtm model");
  }
  auto propagator = make_shot_propagator(make_propagator_setup(sim), params.backend, parallel, info);
  const int nrec = int(receivers.size());
  const int receiver_set = propagator->add_point_set(receivers, out.nt);

  const GridLayout& g = sim.layout;
  info << "rtm: modeling " << sources.size() << " shot(s) on " << propagator->name() << ": grid "
      << g.nx << "x" << g.ny << "x" << g.nz << " (absorbing layers of " << params.boundary.width
      << " cells included), " << out.nt << " steps of dt = " << out.dt << " s, " << nrec
      << " receivers\n";

  // One source per shot, all with the same wavelet: one limit serves every shot.
  const double vmax = model.vmax();
  const HealthCheck health = make_health_check(
      sim, runaway_limit(injected_amplitude(out.wavelet, sim.injection_scale(),
                                            vmax * vmax * sim.dt * sim.dt),
                         0.0, out.nt));

  const int nshots = int(sources.size());
  ShotDispenser dispenser(parallel, nshots);
  int done_here = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int s = dispenser.next(false); s >= 0; s = dispenser.next(false)) {
    const int source_set = propagator->add_point_set({sources[size_t(s)]}, out.nt);
    propagator->upload_series(source_set, out.wavelet);
    ShotGather gather;
    gather.id = s;
    gather.source = acq.sources[size_t(s)];
    gather.data = model_one_shot(*propagator, sim.injection_scale(), source_set, receiver_set, nrec,
                                 out.nt, &health, "shot " + std::to_string(s));
    if (parallel.is_leader()) out.shots.push_back(std::move(gather));
    ++done_here;

    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double gcells = double(g.interior_cells()) * out.nt * done_here / elapsed * 1e-9;
    if (parallel.is_leader())
      log << shot_progress_line(parallel, "modeled", s, done_here, 0, nshots, elapsed, gcells)
          << std::flush;
  }
  if (parallel.is_leader() && parallel.group_count() > 1)
    collect_shots_on_root(out.shots, parallel, size_t(nrec) * size_t(out.nt));
  if (stats) {
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->cell_updates = double(g.interior_cells()) * out.nt * double(sources.size());
  }
  return out;
}

} // namespace rtm
