// The shot loop's body of a migration: one shot of the file, its data made ready (time dispersion,
// direct-wave mute, phase filter) and its points placed, ahead on the prefetch thread or here, then
// its sweeps run onto the image (migrate_one_shot, solvers/drivers/migration_sweeps.cpp).
#include "solvers/drivers/migration_run.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "solvers/contracts/errors.h"
#include "solvers/drivers/born.h"
#include "solvers/drivers/data_phase_filter.h"

namespace rtm {

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

namespace migration_steps {

namespace {

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

} // namespace

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

} // namespace migration_steps

} // namespace rtm
