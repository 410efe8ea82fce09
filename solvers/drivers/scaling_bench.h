// The scaling benchmark of one grid over several ranks (`rtm bench --scaling`, docs/parallel.md).
//
// For each rank count r (1, 2, 4, ... up to the launcher's ranks) the first r ranks step one grid
// decomposed into r z-slabs. Weak scaling keeps the cells per rank fixed (the grid grows along z
// with r); strong scaling keeps the grid fixed.
//
// The time of a step is measured whole, and its parts alone, each as the median over `repeats`
// runs of `steps` steps after a warm-up (the slowest rank's time counts: barrier, steps,
// synchronise, barrier-free maximum over ranks):
//   full      edges + exchange overlapped with the interior        (DecomposedWavefield::step)
//   compute   edges + interior, no exchange
//   edges     the edge planes alone
//   exchange  the halo messages alone
// and split as  boundary = edges,  interior = compute - edges,  waiting = full - compute  (the
// exchange time the interior did not hide).
#pragma once

#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

#include "io/result_table.h"
#include "solvers/drivers/backend.h"

namespace rtm {

struct ScalingOptions {
  bool weak = true;            // weak: nz is per rank; strong: nz is the whole grid's
  int nx = 512, ny = 512, nz = 512;
  int steps = 20;              // steps per timed run
  int repeats = 5;             // timed runs; the median counts
  int warmup = 5;              // untimed steps first
  std::vector<int> rank_counts; // empty: 1, 2, 4, ... and the launcher's rank count
  BackendOptions backend;
};

struct ScalingRow {
  int ranks = 1;
  int nx = 0, ny = 0, nz = 0;   // the whole grid
  std::string propagator;       // one rank's propagator and transport
  double step_ms = 0;           // full step, slowest rank
  double gcells_total = 0;      // cells x steps / s
  double gcells_per_rank = 0;
  double efficiency = 0;        // weak: per-rank rate / 1 rank's; strong: T1 / (r Tr)
  double boundary_ms = 0, interior_ms = 0, exchange_ms = 0, waiting_ms = 0;
};

// Collective over `world`; every rank returns the rows (rank 0 prints them).
std::vector<ScalingRow> run_scaling_bench(const ScalingOptions& options, MPI_Comm world,
                                          std::ostream& log);
ResultTable scaling_table(const std::vector<ScalingRow>& rows);

} // namespace rtm
