// Where the whole of a run's time went (`rtm migrate --profile`, docs/rtm.md "Profiling a
// migration"): not only the shot loop (MigrationProfile) but what a user waits for before and
// after it, from the first read to the last write, phase by phase with the bytes each moved.
//
//   checks       the inputs' headers, the memory and disk-space checks (the device's start)
//   read         the model and the shots' traces from their files
//   set-up       the smoothing, the compute grid, the fields and stores, the resume state
//   autotune     --variant auto timing the kernels (or reading its choice from the tuning cache)
//   loop         the shot loop, wall clock
//   finish       the image: download, the groups' sums, normalisation, filter
//   release      the fields and stores freed (device memory, pinned host buffers)
//   output       the volumes written, the figures drawn
//   checkpoints  the checkpoint files, written beside the loop (not part of the wall's sum)
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <mpi.h>

namespace rtm {

struct RunPhase {
  std::string name;
  double seconds = 0;
  uint64_t bytes = 0;      // read or written in the phase; 0: none moved
  std::string what;        // what the phase holds, for the table
  bool overlapped = false; // ran beside the others (checkpoint files beside the loop)
  // The rate of the bytes moved, GB/s (1e9 bytes); 0 without bytes or time.
  double gigabytes_per_second() const { return seconds > 0 ? double(bytes) / seconds * 1e-9 : 0.0; }
};

class RunProfile {
public:
  // Adds to the phase `name` (made, in the order phases are first added, when new): its time and
  // bytes are summed; `what` replaces an empty description. Negative or non-finite seconds are
  // refused (std::invalid_argument): a phase's clock read in the wrong order is a bug.
  void add(const std::string& name, double seconds, uint64_t bytes = 0, const std::string& what = "",
           bool overlapped = false);
  // nullptr when the phase was never added.
  const RunPhase* find(const std::string& name) const;
  const std::vector<RunPhase>& phases() const { return phases_; }
  // The phases that follow one another (not overlapped), summed.
  double sequential_s() const;

private:
  std::vector<RunPhase> phases_;
};

// The table ("rtm: profile of the whole run ...", a row per phase with time, share of `wall_s`,
// bytes and rate, then "other": the wall less the sequential phases) and a closing line
// "PERFORMANCE <tag> wall_s=... <phase>_s=... <phase>_bytes=..." (phase names with '-' as '_').
void print_run_profile(const RunProfile& profile, double wall_s, const std::string& tag,
                       std::ostream& out);

// --profile under MPI: each rank's share of the run, so that a shot farm's wall can be read
// rank by rank (issue 34): the shots its group migrated, its time before its loop (checks,
// reading, set-up, fields), its loop, and after its loop (the image's finish: the groups' sums
// reduced onto world rank 0 wait there for the slowest group; the fields freed).
struct RankTimes {
  int rank = 0, group = 0, shots = 0;
  double before_loop_s = 0, loop_s = 0, after_loop_s = 0;
};

// Every rank's times on world rank 0, in rank order (collective over `world`; others get an empty
// vector). MPI_COMM_NULL (no launcher): `mine` alone.
std::vector<RankTimes> gather_rank_times(const RankTimes& mine, MPI_Comm world);

// The table (a row per rank) and the spread of the loops and of the times before them, then
// "PERFORMANCE <tag> ranks=... loop_min_s=... loop_max_s=... before_max_s=... after_max_s=...".
void print_rank_profile(const std::vector<RankTimes>& ranks, const std::string& tag, std::ostream& out);

} // namespace rtm
