// One shot's sweeps: the source field forward, then backwards beside the receiver field (boundary
// saving or snapshots), the image accumulated (solvers/drivers/migration.h, docs/rtm.md).
#include "solvers/drivers/migration.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "solvers/drivers/health.h"

namespace rtm {

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

} // namespace rtm
