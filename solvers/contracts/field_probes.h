// Two small probes a wavefield answers where it lives: its numerical health, and where its time
// went. Plain C++; implemented by every Wavefield (solvers/contracts/wavefield.h).
#pragma once

#include <cstdint>

#include "solvers/contracts/field_health.h"

namespace rtm {

// Is the current field p[n] finite, how large is it, and where is its worst cell (rules in
// solvers/contracts/field_health.h). Drivers call it every few dozen steps (solvers/drivers/health.h), so it must be
// cheap next to a step: a backend answers with a reduction where the field lives.
class HealthProbe {
public:
  virtual ~HealthProbe() = default;
  virtual FieldHealth check_health() const = 0;
};

// Where a wavefield's time went, for profiling a run (enable_timing). Milliseconds spent in each
// kind of operation: on a GPU the device time between events recorded around each operation
// (timed operations of all wavefields on one device are serialised while timing is on, so the
// figures add up without counting overlapping work twice); on the CPU the wall time of the call.
// What none of these covers (host work between calls, uploads and downloads of whole fields and
// series, synchronisation, an idle device) is the caller's wall time less total_ms().
struct PropagatorTiming {
  double step_ms = 0;     // Wavefield::step(): the wave-step kernels
  double points_ms = 0;   // PointSet::inject(), record()
  double boundary_ms = 0; // BoundaryStore::save(), restore()
  double imaging_ms = 0;  // ShotFields::accumulate_image() (on the receiver field's clock)
  double box_copy_ms = 0; // copy_current(), set_current(), with their host transfers (snapshots)
  double born_ms = 0;     // ShotFields::inject_born_source() (on the receiver field's clock)
  int64_t steps = 0;      // step() calls timed
  // Of those, steps taken two at a time by one fused kernel (ShotFields::step_both: the source and
  // the receiver field together, with that step's imaging; its time is in step_ms).
  int64_t fused_steps = 0;

  double non_step_ms() const { return points_ms + boundary_ms + imaging_ms + box_copy_ms + born_ms; }
  double total_ms() const { return step_ms + non_step_ms(); }
  PropagatorTiming& operator+=(const PropagatorTiming& o) {
    step_ms += o.step_ms;
    points_ms += o.points_ms;
    boundary_ms += o.boundary_ms;
    imaging_ms += o.imaging_ms;
    box_copy_ms += o.box_copy_ms;
    born_ms += o.born_ms;
    steps += o.steps;
    fused_steps += o.fused_steps;
    return *this;
  }
};

class TimingProbe {
public:
  virtual ~TimingProbe() = default;
  // enable_timing(true) zeroes the counters and times every operation listed in PropagatorTiming
  // from then on; enable_timing(false) stops timing and keeps the totals. Off by default: untimed
  // operations carry no events and no synchronisation.
  virtual void enable_timing(bool on) = 0;
  // The totals so far; on a GPU this waits for the timed operations already queued.
  virtual PropagatorTiming timing() const = 0;
};

} // namespace rtm
