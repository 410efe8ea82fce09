// Forward modeling: shot gathers from a velocity model and an acquisition.
#pragma once

#include <functional>
#include <ostream>

#include "io/shot_file.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/health.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/shot_loop.h"
#include "solvers/drivers/simulation.h"

namespace rtm {

struct SlabModel; // solvers/drivers/slab_model.h

struct WaveletParams {
  double f0 = 10;  // Ricker peak frequency (Hz)
  double t0 = -1;  // delay (s); negative: default_ricker_delay(f0)
};

struct ModelingParams {
  WaveletParams wavelet;
  double dt = 0;           // time step (s); 0: from CFL
  double record_time = 1;  // seconds of data per shot
  // Remove the 2nd-order time stepping's dispersion (solvers/drivers/time_dispersion.h): the forward
  // transform on the source wavelet, the inverse on the recorded traces; the shot file says so.
  bool time_dispersion_transform = true;
  BoundaryConfig boundary;
  // How sources and receivers between nodes are spread over them (solvers/drivers/point_interpolation.h).
  PointInterpolation point_interpolation = PointInterpolation::sinc;
  BackendOptions backend;
  // TTI: delta blended towards epsilon around every source and receiver (solvers/drivers/shear_taper.h).
  ShearTaperOptions shear_taper;
};

// Wall time and work of a run, for the Gcells/s people compare.
struct RunStats {
  double seconds = 0;
  double cell_updates = 0; // compute cells x steps, absorbing layers included
  double gcells_per_second() const { return seconds > 0 ? cell_updates / seconds * 1e-9 : 0; }
};

// How a modeling run reports progress, checkpoints, resumes and stops (docs/robustness.md); the
// stop request, the shot-started call and the progress options are the shot loop's
// (solvers/drivers/shot_loop.h). The default: progress lines every few seconds, no checkpoint,
// never stopped.
struct ModelingControl : ShotLoopControl {
  // Checkpoint: "" writes none; otherwise the output file whose checkpoint it is: each finished
  // shot is written to shot_checkpoint_dir(output) as it finishes (io/shot_checkpoint.h).
  std::string checkpoint_output;
  // Continue from that checkpoint: its shots are not modeled again. Without resume an existing
  // checkpoint is refused (it holds work a fresh run would throw away).
  bool resume = false;
  // stop_requested: a signal number stops the run at the next shot boundary (it returns with
  // stop_signal set, every finished shot saved). shot_started: shot_id is the shot's number in the
  // acquisition.

  // Set by model_shots: the agreed stop signal (0: finished) and the shots taken from the checkpoint.
  int stop_signal = 0;
  int shots_resumed = 0;
};

// Checks the parameters and the acquisition against the model (InputError naming the bad value).
void check_modeling_params(const ModelingParams& params);

// Refuses (InputError with both numbers and what to change) a run that cannot fit in memory,
// before its model is read: from the model's shape alone (read_model_shape reads the file's
// header), the acquisition and the options, on one rank per shot or on `parallel`'s slabs. The
// step count needs the fastest velocity, unknown before the read: it is counted from --dt when
// given, else from the CFL step of `vmax_at_least` (what the model's fastest velocity is at least:
// kMinPlausibleVelocity when velocities are checked; 0 counts one step), so this estimate never
// exceeds the run's; model_shots checks again with the real step count before it allocates.
// Returns that step count (the fewest the run may take), which sizes its output too. `physics`:
// the run's (--physics; params.boundary then the absorber apply_physics_options chose for it).
int check_modeling_memory_before_reading(const VelocityModel& shape, const Acquisition& acq,
                                          const ModelingParams& params,
                                          const ParallelContext& parallel, Physics physics,
                                          double vmax_at_least);

// Models every shot of `acquisition` in `model`. Progress goes to `log` (per shot, with time left).
// With `control`, the run reports, checkpoints, resumes and stops as it says; a stopped run returns
// no shots and control->stop_signal set (every rank alike).
// With `parallel`, the shots are shared over its ranks (collective: every rank calls it with the
// same arguments; solvers/drivers/shot_parallel.h) and world rank 0 returns every shot in shot order, the
// traces bit for bit those of a one-rank run; the other ranks return the header without shots.
ShotFile model_shots(const VelocityModel& model, const Acquisition& acquisition,
                     const ModelingParams& params, std::ostream& log, RunStats* stats = nullptr,
                     const ParallelContext* parallel = nullptr, ModelingControl* control = nullptr);

// The same on a model split over the ranks of each shot group (solvers/drivers/slab_model.h:
// read_slab_model, not smoothed), `parallel`'s groups the part's: each rank builds and holds only
// its slab (docs/decomposition.md, "What each rank reads and holds"); the traces are bit for bit
// those of a one-rank run on the whole model, and the checkpoint's identity is the same too.
ShotFile model_shots(const SlabModel& part, const Acquisition& acquisition,
                     const ModelingParams& params, std::ostream& log, RunStats* stats,
                     const ParallelContext& parallel, ModelingControl* control = nullptr);

// One shot on an existing wavefield: resets its state, then for n = 0 .. nt-1 records p[n] at the
// receivers, steps, and injects source sample n into p[n+1] (docs/physics.md: f[n] enters
// p[n+1]). `source` holds the source with its wavelet uploaded (both sets are the field's own);
// returns traces [nrec][nt].
// With `health`, the field is checked as it says (solvers/drivers/health.h) and a broken run throws
// NumericalInstability naming `context` ("shot 3"). With `progress`, each step is ticked on it.
std::vector<float> model_one_shot(Wavefield& field, float injection_scale, PointSet& source,
                                  PointSet& receivers, int nreceivers, int nt,
                                  const HealthCheck* health = nullptr,
                                  const std::string& context = {},
                                  ShotProgress* progress = nullptr);

// [t][point] series (as point sets store them) <-> [point][t] traces (as shot files store them).
std::vector<float> series_to_traces(const std::vector<float>& series, int npoints, int nt);
std::vector<float> traces_to_series(const std::vector<float>& traces, int npoints, int nt);

} // namespace rtm
