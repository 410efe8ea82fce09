#include "solvers/drivers/scaling_bench.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <sstream>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/median.h"
#include "kernels/mpi/decomposed_propagator.h"
#include "solvers/drivers/decomposed_backend.h"

namespace rtm {
namespace {

// Milliseconds per step of `run_step` on the slowest rank of `comm`, median of `repeats` runs.
double time_per_step(Wavefield& prop, MPI_Comm comm, const ScalingOptions& o,
                     const std::function<void()>& run_step) {
  std::vector<double> samples;
  for (int r = 0; r < o.repeats; ++r) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    for (int s = 0; s < o.steps; ++s) run_step();
    prop.synchronize();
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    samples.push_back(slowest * 1e3 / o.steps);
  }
  return median(samples);
}

std::vector<int> default_rank_counts(int world_size) {
  std::vector<int> counts;
  for (int r = 1; r < world_size; r *= 2) counts.push_back(r);
  counts.push_back(world_size);
  return counts;
}

} // namespace

std::vector<ScalingRow> run_scaling_bench(const ScalingOptions& o, MPI_Comm world, std::ostream& log) {
  int rank = 0, world_size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &world_size);
  if (o.nx < 1 || o.ny < 1 || o.nz < 1) throw InputError("--grid: expected three positive sizes");
  if (o.steps < 1 || o.repeats < 1 || o.warmup < 0)
    throw InputError("--steps and --repeats: expected positive counts");
  const std::vector<int> counts = o.rank_counts.empty() ? default_rank_counts(world_size) : o.rank_counts;
  for (int r : counts)
    if (r < 1 || r > world_size)
      throw InputError("scaling: " + std::to_string(r) + " ranks asked for, but the launcher started " +
                       std::to_string(world_size));

  std::vector<ScalingRow> rows;
  for (int r : counts) {
    ScalingRow row;
    row.ranks = r;
    row.nx = o.nx;
    row.ny = o.ny;
    row.nz = o.weak ? o.nz * r : o.nz;
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(world, rank < r ? 0 : MPI_UNDEFINED, rank, &group);
    if (group != MPI_COMM_NULL) {
      // Undamped, constant medium; the fields start at zero (the float32 kernels' speed does not
      // depend on the values).
      PropagatorSetup setup;
      setup.layout = make_layout(row.nx, row.ny, row.nz);
      setup.weights = make_laplacian_weights(10.0, 10.0, 10.0);
      setup.v2dt2.assign(size_t(setup.layout.interior_cells()), 0.1f);
      std::ostringstream quiet;
      // One rank: the backend's own wavefield; several: z-slabs, whose parts are timed alone too.
      std::ostream& out = rank == 0 ? log : quiet;
      std::unique_ptr<DecomposedWavefield> decomposed;
      std::unique_ptr<Wavefield> single;
      if (r > 1) decomposed = make_decomposed_wavefield(setup, o.backend, group, out);
      else single = make_wavefield(setup, o.backend, out);
      Wavefield* prop = decomposed ? static_cast<Wavefield*>(decomposed.get()) : single.get();
      prop->zero_state();
      row.propagator = prop->name();
      for (int s = 0; s < o.warmup; ++s) prop->step();
      row.step_ms = time_per_step(*prop, group, o, [&] { prop->step(); });
      if (decomposed) {
        const double compute =
            time_per_step(*prop, group, o, [&] { decomposed->run_step(true, true, false); });
        row.boundary_ms = time_per_step(*prop, group, o, [&] { decomposed->run_step(true, false, false); });
        row.exchange_ms = time_per_step(*prop, group, o, [&] { decomposed->run_step(false, false, true); });
        row.interior_ms = std::max(0.0, compute - row.boundary_ms);
        row.waiting_ms = std::max(0.0, row.step_ms - compute);
      } else {
        row.interior_ms = row.step_ms;
      }
      MPI_Comm_free(&group);
    }
    // The group's times, known on its ranks, to every rank (rank 0 is in every group).
    double times[5] = {row.step_ms, row.boundary_ms, row.interior_ms, row.exchange_ms, row.waiting_ms};
    MPI_Bcast(times, 5, MPI_DOUBLE, 0, world);
    row.step_ms = times[0];
    row.boundary_ms = times[1];
    row.interior_ms = times[2];
    row.exchange_ms = times[3];
    row.waiting_ms = times[4];
    const double cells = double(row.nx) * row.ny * row.nz;
    row.gcells_total = cells / (row.step_ms * 1e-3) * 1e-9;
    row.gcells_per_rank = row.gcells_total / r;
    const bool have_one_rank = !rows.empty() && rows.front().ranks == 1; // the baseline
    if (r == 1) row.efficiency = 1;
    else if (!have_one_rank) row.efficiency = 0;
    else if (o.weak) row.efficiency = row.gcells_per_rank / rows.front().gcells_per_rank;
    else row.efficiency = rows.front().step_ms / (r * row.step_ms);
    if (rank == 0)
      log << "rtm: scaling: " << r << " rank(s), " << row.nx << "x" << row.ny << "x" << row.nz << ": "
          << row.step_ms << " ms/step, " << row.gcells_total << " Gcells/s\n";
    rows.push_back(row);
    MPI_Barrier(world);
  }
  return rows;
}

ResultTable scaling_table(const std::vector<ScalingRow>& rows) {
  ResultTable table({{"ranks", "%.0f"},
                     {"grid"},
                     {"ms/step", "%.3f"},
                     {"Gcells/s", "%.1f"},
                     {"Gcells/s/rank", "%.1f"},
                     {"efficiency", "%.3f"},
                     {"boundary_ms", "%.3f"},
                     {"interior_ms", "%.3f"},
                     {"exchange_ms", "%.3f"},
                     {"waiting_ms", "%.3f"},
                     {"waiting_%", "%.1f"},
                     {"propagator"}});
  for (const ScalingRow& r : rows)
    table.add_row({(long long)r.ranks,
                   std::to_string(r.nx) + "x" + std::to_string(r.ny) + "x" + std::to_string(r.nz),
                   r.step_ms, r.gcells_total, r.gcells_per_rank, r.efficiency, r.boundary_ms,
                   r.interior_ms, r.exchange_ms, r.waiting_ms, 100.0 * r.waiting_ms / r.step_ms,
                   r.propagator});
  return table;
}

} // namespace rtm
