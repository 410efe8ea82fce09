#include "solvers/drivers/lsrtm.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "io/lsrtm_state.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/progress.h"
#include "solvers/drivers/shot_parallel.h"
#include "solvers/drivers/time_dispersion.h"

namespace rtm {

LsrtmPreconditioner parse_lsrtm_preconditioner(const std::string& name) {
  if (name == "illumination") return LsrtmPreconditioner::illumination;
  if (name == "none") return LsrtmPreconditioner::none;
  throw InputError("--preconditioner: expected illumination or none, got '" + name + "'");
}

const char* lsrtm_preconditioner_name(LsrtmPreconditioner p) {
  return p == LsrtmPreconditioner::illumination ? "illumination" : "none";
}

namespace {

// The passes' options: migration's, with no data phase filter (the pass is the adjoint L').
MigrationParams pass_params(const LsrtmParams& params) {
  MigrationParams pass = params.migration;
  pass.data_phase_filter = DataPhaseFilter::none;
  pass.data_phase_order = 0;
  pass.least_squares_vectors = kLsrtmHostVectors;
  return pass;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

// The diagonal preconditioner from the illumination (all ones for none).
std::vector<float> preconditioner(const std::vector<float>& illumination, LsrtmPreconditioner kind,
                                  double eps_fraction) {
  std::vector<float> diagonal(illumination.size(), 1.0f);
  if (kind == LsrtmPreconditioner::none || illumination.empty()) return diagonal;
  double mean = 0;
  for (float v : illumination) mean += v;
  mean /= double(illumination.size());
  const double eps = eps_fraction * mean;
  for (size_t i = 0; i < illumination.size(); ++i) {
    const double d = double(illumination[i]) + eps;
    diagonal[i] = d > 0 ? float(1.0 / d) : 1.0f;
  }
  return diagonal;
}

std::vector<float> times(const std::vector<float>& diagonal, const std::vector<float>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = diagonal[i] * v[i];
  return out;
}

// World rank 0's decision, the same on every rank.
int broadcast_int(int value, const ParallelContext& parallel) {
  if (parallel.size() > 1)
    check_mpi(MPI_Bcast(&value, 1, MPI_INT, 0, parallel.world_comm()), "MPI_Bcast (lsrtm)");
  return value;
}

std::string relative(double r, double r0) {
  return r0 > 0 ? format_number(r / r0, 4) : std::string("-");
}

} // namespace

CheckpointIdentity lsrtm_identity(const VelocityModel& model, const ShotFile& shots,
                                  const std::string& shots_path, const LsrtmParams& params) {
  CheckpointIdentity identity = migration_identity(model, shots, shots_path, pass_params(params));
  identity.parameters += "lsrtm_preconditioner = " +
                         std::string(lsrtm_preconditioner_name(params.preconditioner)) + "\n";
  if (params.preconditioner == LsrtmPreconditioner::illumination)
    identity.parameters += "lsrtm_illumination_eps = " +
                           format_number(params.migration.illumination_eps, 17) + "\n";
  return identity;
}

LsrtmResult lsrtm_shots(const VelocityModel& model, const ShotFile& shots, const LsrtmParams& params,
                        std::ostream& log, const LsrtmControl& control) {
  const ParallelContext one_rank;
  const ParallelContext& parallel =
      control.migration.parallel ? *control.migration.parallel : one_rank;
  std::ostream& info = parallel.is_root() ? log : null_stream();
  if (params.iterations < 1)
    throw InputError("--iterations must be at least 1, got " + std::to_string(params.iterations));
  if (parallel.ranks_per_shot() > 1)
    throw InputError("rtm lsrtm: --ranks-per-shot " + std::to_string(parallel.ranks_per_shot()) +
                     ": least-squares RTM holds the model whole on each rank; run one rank per "
                     "shot (several ranks share the shots)");
  MigrationControl pass_control = control.migration;
  pass_control.checkpoint_output.clear(); // the solver's state is its checkpoint
  pass_control.resume = false;
  pass_control.parallel = &parallel;
  MigrationParams pass = pass_params(params);

  // The solver's state on world rank 0: m, the gradient g = L'(d - L m), the direction p, the
  // preconditioner's diagonal P (from the illumination), gamma = <g, P g>, the residual history.
  LsrtmState state;
  std::vector<float> diagonal;
  int resumed = 0;
  if (parallel.is_root() && !control.state_path.empty()) {
    const bool exists = std::filesystem::exists(control.state_path);
    if (control.resume && !exists)
      throw InputError("--resume: no state " + control.state_path +
                       " to continue from (it is written after the RTM pass and each iteration)");
    if (!control.resume && exists)
      throw InputError(control.state_path + " holds the state of an earlier least-squares RTM; " +
                       "continue it with --resume (up to --iterations in all), or delete it");
    if (control.resume) {
      state = read_lsrtm_state(control.state_path);
      check_same_run(state.identity, control.identity, control.state_path);
      if (state.nx != model.nx || state.ny != model.ny || state.nz != model.nz)
        throw InputError(control.state_path + ": its volumes are " + std::to_string(state.nx) +
                         "x" + std::to_string(state.ny) + "x" + std::to_string(state.nz) +
                         ", the migration model " + std::to_string(model.nx) + "x" +
                         std::to_string(model.ny) + "x" + std::to_string(model.nz));
      resumed = 1;
    }
  } else if (parallel.is_root() && control.resume) {
    throw std::invalid_argument("lsrtm_shots: resume needs a state path");
  }
  LsrtmResult result;
  const bool have_state = broadcast_int(resumed, parallel) != 0;
  auto save = [&] {
    if (parallel.is_root() && !control.state_path.empty())
      write_lsrtm_state(control.state_path, state);
  };
  const double start = steady_seconds();

  if (have_state) {
    result.iterations_resumed = state.iteration;
    if (parallel.is_root()) {
      diagonal = preconditioner(state.illumination, params.preconditioner,
                                params.migration.illumination_eps);
      info << "rtm: lsrtm: resumed from " << control.state_path << " after iteration "
           << state.iteration << " (data residual " << format_number(state.residual_norm.back(), 6)
           << ", " << relative(state.residual_norm.back(), state.residual_norm.front())
           << " of the start)\n";
    }
  } else {
    // The RTM pass: g = L'd (the raw image), the illumination, |d|^2.
    MigrationResult rtm = migrate_shots(model, shots, pass, log, nullptr, pass_control);
    if (rtm.stop_signal != 0) {
      result.stop_signal = rtm.stop_signal;
      return result;
    }
    if (parallel.is_root()) {
      state.identity = control.identity;
      state.nx = model.nx;
      state.ny = model.ny;
      state.nz = model.nz;
      state.illumination = std::move(rtm.illumination);
      state.gradient = std::move(rtm.raw_image);
      state.model.assign(state.gradient.size(), 0.0f);
      diagonal = preconditioner(state.illumination, params.preconditioner,
                                params.migration.illumination_eps);
      state.direction = times(diagonal, state.gradient);
      state.gamma = dot(state.gradient, state.direction);
      state.residual_norm = {std::sqrt(std::max(rtm.data_norm2, 0.0))};
      state.iteration = 0;
      info << "rtm: lsrtm: the RTM pass (g = L'd) over " << shots.shots.size()
           << " shot(s) took " << format_number(steady_seconds() - start, 4)
           << " s; data residual at the start |d| = " << format_number(state.residual_norm[0], 6)
           << "\n";
      save();
    }
  }

  // Each iteration: one pass of Born modeling and migration of the direction p gives q = L p
  // (its norm) and L'L p; then the conjugate-gradient update on world rank 0.
  int iteration = broadcast_int(state.iteration, parallel);
  while (iteration < params.iterations) {
    // Nothing left to fit: p = 0 (a zero gradient) or L p = 0 (decided on rank 0).
    const int go = broadcast_int(parallel.is_root() ? (state.gamma > 0 ? 1 : 0) : 0, parallel);
    if (!go) {
      result.converged = true;
      info << "rtm: lsrtm: the gradient L'(d - L m) is zero after iteration " << iteration
           << ": nothing more to fit\n";
      break;
    }
    std::vector<float> direction = parallel.is_root() ? state.direction : std::vector<float>();
    if (!parallel.is_root()) direction.resize(size_t(model.cells()));
    if (parallel.size() > 1) broadcast_from_root(direction, parallel.world_comm());
    pass.born_perturbation = &direction;
    const double pass_start = steady_seconds();
    info << "rtm: lsrtm iteration " << iteration + 1 << "/" << params.iterations
         << ": Born modeling and migration of the search direction, shot by shot\n";
    // The pass's own log too: its per-shot progress is what a long iteration has to show.
    MigrationResult born = migrate_shots(model, shots, pass, log, nullptr, pass_control);
    if (born.stop_signal != 0) {
      result.stop_signal = born.stop_signal;
      return result;
    }
    ++iteration;
    if (parallel.is_root()) {
      const double qq = born.data_norm2; // |L p|^2
      if (!(qq > 0)) {
        result.converged = true;
        info << "rtm: lsrtm: the direction of iteration " << iteration
             << " makes no data (L p = 0): nothing more to fit\n";
        state.gamma = 0; // every rank stops at the next check
        --result.iterations_done; // counted below: none was done
      } else {
        const std::vector<float>& normal = born.raw_image; // L'L p
        const double alpha = state.gamma / qq;
        // |d - L m|^2 after the step, from the quantities at hand: |r - alpha L p|^2 =
        // |r|^2 - 2 alpha <L'r, p> + alpha^2 |L p|^2.
        const double r0 = state.residual_norm.back();
        const double rr =
            r0 * r0 - 2.0 * alpha * dot(state.gradient, state.direction) + alpha * alpha * qq;
        const float a = float(alpha);
        for (size_t i = 0; i < state.model.size(); ++i) {
          state.model[i] += a * state.direction[i];
          state.gradient[i] -= a * normal[i];
        }
        const std::vector<float> z = times(diagonal, state.gradient);
        const double gamma = dot(state.gradient, z);
        const float beta = float(gamma / state.gamma);
        for (size_t i = 0; i < z.size(); ++i) state.direction[i] = z[i] + beta * state.direction[i];
        state.gamma = gamma;
        state.residual_norm.push_back(std::sqrt(std::max(rr, 0.0)));
        state.iteration = iteration;
        save();
        char line[256];
        std::snprintf(line, sizeof line,
                      "rtm: lsrtm iteration %d/%d: data residual %.6g (%s of the start), step "
                      "%.4g, %.2f s\n",
                      iteration, params.iterations, state.residual_norm.back(),
                      relative(state.residual_norm.back(), state.residual_norm.front()).c_str(),
                      alpha, steady_seconds() - pass_start);
        info << line << std::flush;
      }
    }
    ++result.iterations_done;
  }
  if (parallel.is_root()) {
    result.model = std::move(state.model);
    result.illumination = std::move(state.illumination);
    result.residual_norm = std::move(state.residual_norm);
  }
  return result;
}

ShotFile born_shot_file(const VelocityModel& model, const ShotFile& shots,
                        const MigrationParams& params, const std::vector<float>& perturbation,
                        std::ostream& log) {
  ShotFile out = shots;
  MigrationParams pass = params;
  pass.data_phase_filter = DataPhaseFilter::none;
  pass.born_perturbation = &perturbation;
  MigrationControl control;
  control.born_data = [&out](int s, const std::vector<float>& traces) {
    out.shots[size_t(s)].data = traces;
  };
  migrate_shots(model, shots, pass, log, nullptr, control);
  if (shots.time_dispersion_removed) // the pass's source: the wavelet with the forward transform
    out.wavelet = time_dispersion_transformed(shots.wavelet, TimeDispersion::add);
  out.time_dispersion_removed = false;
  return out;
}

} // namespace rtm
