// Least-squares reverse time migration (docs/rtm.md, section 12): the model perturbation m that
// minimises the data misfit |L m - d|^2 of Born modeling L (born_model_one_shot, with the
// direct-wave mute's weights), found by preconditioned conjugate gradients on the normal
// equations L'L m = L'd, where L' is migration's raw image (migrate_one_shot, its exact adjoint
// with the sponge and imaging every step). Each iteration is one pass of migrate_shots over every
// shot in which a shot's data are the Born data of the search direction (MigrationParams::
// born_perturbation): the same shot loop, shot distribution over MPI ranks, backends and memory
// check as `rtm migrate`. The state is written after every iteration; a resumed run gives the
// result of an uninterrupted one bit for bit.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "io/checkpoint_file.h"
#include "io/shot_file.h"
#include "solvers/drivers/migration.h"

namespace rtm {

// The diagonal preconditioner of the conjugate gradients.
enum class LsrtmPreconditioner {
  illumination, // P = 1 / (sum S^2 + eps), eps = illumination_eps x its mean (the RTM pass's)
  none,         // P = 1: plain CG on the normal equations (CGNR)
};
LsrtmPreconditioner parse_lsrtm_preconditioner(const std::string& name); // "illumination" | "none"
const char* lsrtm_preconditioner_name(LsrtmPreconditioner p);

struct LsrtmParams {
  // The passes' options. Its data phase filter is ignored (none: the pass is L', not an image),
  // illumination_eps is the preconditioner's eps, the Laplacian filter and the image mute unused.
  MigrationParams migration;
  int iterations = 10; // conjugate-gradient iterations in all (a resumed run's included)
  LsrtmPreconditioner preconditioner = LsrtmPreconditioner::illumination;
};

// The model-sized float32 vectors the solver holds on the host beside a pass (the memory check's
// MigrationParams::least_squares_vectors): m, g, p, P and the state being written.
constexpr int kLsrtmHostVectors = 5;

struct LsrtmControl {
  // Every pass's: the ranks, the stop request (a pass stopped at a shot boundary loses that
  // iteration, the state keeps the ones before), progress. Its checkpoint fields are not used.
  MigrationControl migration;
  // The state file (io/lsrtm_state.h), written on world rank 0 after the RTM pass and each
  // iteration; "" writes none. Without `resume` an existing one is refused.
  std::string state_path;
  bool resume = false;
  CheckpointIdentity identity; // lsrtm_identity; checked against a resumed state
};

// migration_identity with the solver's parameters that change the result (not the iterations).
CheckpointIdentity lsrtm_identity(const VelocityModel& model, const ShotFile& shots,
                                  const std::string& shots_path, const LsrtmParams& params);

struct LsrtmResult {
  // On world rank 0 (empty elsewhere): m after the iterations, [nz][ny][nx] of the model; the
  // illumination; the data residual |d - L m| after 0, 1, ... iterations (index 0: |d|).
  std::vector<float> model;
  std::vector<float> illumination;
  std::vector<double> residual_norm;
  int iterations_resumed = 0; // taken from the state file
  int iterations_done = 0;    // by this run
  bool converged = false;     // stopped early: the gradient or L p vanished
  int stop_signal = 0;        // stopped by control.migration.stop_requested (the state kept)
};

// Collective over control.migration.parallel's ranks (every rank the same arguments); the model
// whole on every rank (one rank per shot). Progress and one line per iteration go to `log`.
LsrtmResult lsrtm_shots(const VelocityModel& migration_model, const ShotFile& shots,
                        const LsrtmParams& params, std::ostream& log,
                        const LsrtmControl& control = {});

// The Born data of `perturbation` ([nz][ny][nx] of the model) for every shot of `shots`, as the
// passes model them (one rank): a shot file like `shots` whose traces are those data, marked as
// made by the time stepping (time_dispersion_removed = 0). For tests and the documented checks.
ShotFile born_shot_file(const VelocityModel& migration_model, const ShotFile& shots,
                        const MigrationParams& params, const std::vector<float>& perturbation,
                        std::ostream& log);

} // namespace rtm
