// --profile of a migration: MigrationProfile filled from the run after the loop, and printed.
#include "solvers/drivers/migration_run.h"

#include <cstdio>

namespace rtm {

namespace migration_steps {

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

} // namespace migration_steps

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
