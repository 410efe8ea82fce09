#include "solvers/modeling.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "io/errors.h"
#include "solvers/memory_budget.h"
#include "solvers/numerics.h"
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

ShotFile model_shots(const VelocityModel& model, const Acquisition& acq, const ModelingParams& params,
                     std::ostream& log, RunStats* stats) {
  check_modeling_params(params);
  if (acq.sources.empty()) throw InputError("modeling: no sources given");
  if (acq.receivers.empty()) throw InputError("modeling: no receivers given");

  const SimulationGrid sim = make_simulation_grid(model, params.boundary, params.dt);
  const std::string warning =
      dispersion_warning(model.vmin(), params.wavelet.f0, model.dx, model.dy, model.dz);
  if (!warning.empty()) log << "rtm: " << warning << "\n";

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

  // Refused before anything is allocated when it cannot fit; the backend resolved once, so that
  // "auto" reports a CPU fallback once.
  BackendOptions backend = params.backend;
  check_variant_name(backend.variant);
  backend.backend = resolve_backend(backend.backend, log);
  RunMemoryPlan plan;
  plan.layout = sim.layout;
  plan.nt = out.nt;
  plan.receivers = int(receivers.size());
  plan.shots = int(sources.size());
  plan.field_bytes = backend.backend == "cuda" ? wavefield_element_bytes(backend.variant) : 4;
  plan.migration = false;
  check_run_memory(plan, backend.backend, "rtm model");

  auto propagator = make_propagator(make_propagator_setup(sim), backend, log);
  const int nrec = int(receivers.size());
  const int receiver_set = propagator->add_point_set(receivers, out.nt);

  const GridLayout& g = sim.layout;
  log << "rtm: modeling " << sources.size() << " shot(s) on " << propagator->name() << ": grid "
      << g.nx << "x" << g.ny << "x" << g.nz << " (absorbing layers of " << params.boundary.width
      << " cells included), " << out.nt << " steps of dt = " << out.dt << " s, " << nrec
      << " receivers\n";

  // One source per shot, all with the same wavelet: one limit serves every shot.
  const double vmax = model.vmax();
  const HealthCheck health = make_health_check(
      sim, runaway_limit(injected_amplitude(out.wavelet, sim.injection_scale(),
                                            vmax * vmax * sim.dt * sim.dt),
                         0.0, out.nt));

  const auto start = std::chrono::steady_clock::now();
  for (size_t s = 0; s < sources.size(); ++s) {
    const int source_set = propagator->add_point_set({sources[s]}, out.nt);
    propagator->upload_series(source_set, out.wavelet);
    ShotGather gather;
    gather.id = int(s);
    gather.source = acq.sources[s];
    gather.data = model_one_shot(*propagator, sim.injection_scale(), source_set, receiver_set, nrec,
                                 out.nt, &health, "shot " + std::to_string(s));
    out.shots.push_back(std::move(gather));

    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double done = double(s + 1), left = double(sources.size()) - done;
    const double gcells = double(g.interior_cells()) * out.nt * done / elapsed * 1e-9;
    char line[200];
    std::snprintf(line, sizeof line, "rtm: shot %zu/%zu done, %.2f Gcells/s, %.1f s elapsed, ~%.1f s left\n",
                  s + 1, sources.size(), gcells, elapsed, elapsed / done * left);
    log << line << std::flush;
  }
  if (stats) {
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->cell_updates = double(g.interior_cells()) * out.nt * double(sources.size());
  }
  return out;
}

} // namespace rtm
