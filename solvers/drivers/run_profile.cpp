#include "solvers/drivers/run_profile.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "solvers/contracts/format.h"

namespace rtm {

void RunProfile::add(const std::string& name, double seconds, uint64_t bytes,
                     const std::string& what, bool overlapped) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::invalid_argument("RunProfile::add: phase " + name + " took " +
                                std::to_string(seconds) + " s");
  for (RunPhase& phase : phases_)
    if (phase.name == name) {
      phase.seconds += seconds;
      phase.bytes += bytes;
      if (phase.what.empty()) phase.what = what;
      return;
    }
  phases_.push_back({name, seconds, bytes, what, overlapped});
}

const RunPhase* RunProfile::find(const std::string& name) const {
  for (const RunPhase& phase : phases_)
    if (phase.name == name) return &phase;
  return nullptr;
}

double RunProfile::sequential_s() const {
  double sum = 0;
  for (const RunPhase& phase : phases_)
    if (!phase.overlapped) sum += phase.seconds;
  return sum;
}

namespace {
std::string key_of(const std::string& name) {
  std::string key = name;
  for (char& c : key)
    if (c == '-' || c == ' ') c = '_';
  return key;
}
} // namespace

void print_run_profile(const RunProfile& profile, double wall_s, const std::string& tag,
                       std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line,
                "rtm: profile of the whole run: %.3f s from the first read to the last write\n",
                wall_s);
  out << line;
  std::snprintf(line, sizeof line, "rtm: profile:   %-12s %10s %7s %11s %11s  %s\n", "phase", "time",
                "share", "bytes", "rate", "what");
  out << line;
  auto row = [&](const std::string& name, double seconds, uint64_t bytes, const std::string& what) {
    const std::string size = bytes > 0 ? format_bytes(bytes) : "-";
    char rate[32] = "-";
    if (bytes > 0 && seconds > 0)
      std::snprintf(rate, sizeof rate, "%.2f GB/s", double(bytes) / seconds * 1e-9);
    std::snprintf(line, sizeof line, "rtm: profile:   %-12s %8.3f s %6.1f%% %11s %11s  %s\n",
                  name.c_str(), seconds, wall_s > 0 ? 100.0 * seconds / wall_s : 0.0, size.c_str(),
                  rate, what.c_str());
    out << line;
  };
  for (const RunPhase& phase : profile.phases())
    if (!phase.overlapped) row(phase.name, phase.seconds, phase.bytes, phase.what);
  const double other = wall_s - profile.sequential_s();
  row("other", other, 0, "the wall less the phases above (messages, the rest)");
  for (const RunPhase& phase : profile.phases())
    if (phase.overlapped) row(phase.name, phase.seconds, phase.bytes, phase.what + " (apart: not added to the rows above)");

  std::string performance = "PERFORMANCE " + tag;
  auto field = [&](const std::string& key, const char* format, double value) {
    std::snprintf(line, sizeof line, format, value);
    performance += " " + key + "=" + line;
  };
  field("wall_s", "%.3f", wall_s);
  for (const RunPhase& phase : profile.phases()) {
    const std::string key = key_of(phase.name);
    field(key + "_s", "%.3f", phase.seconds);
    if (phase.bytes > 0) {
      field(key + "_bytes", "%.0f", double(phase.bytes));
      field(key + "_gb_per_s", "%.3f", phase.gigabytes_per_second());
    }
  }
  field("other_s", "%.3f", other);
  out << performance << "\n" << std::flush;
}

std::vector<RankTimes> gather_rank_times(const RankTimes& mine, MPI_Comm world) {
  if (world == MPI_COMM_NULL) return {mine};
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  const double values[6] = {double(mine.rank), double(mine.group), double(mine.shots),
                            mine.before_loop_s, mine.loop_s, mine.after_loop_s};
  std::vector<double> all(rank == 0 ? size_t(size) * 6 : 0);
  if (MPI_Gather(values, 6, MPI_DOUBLE, all.data(), 6, MPI_DOUBLE, 0, world) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Gather (the ranks' profile) failed");
  std::vector<RankTimes> ranks;
  for (int r = 0; rank == 0 && r < size; ++r) {
    const double* v = &all[size_t(r) * 6];
    ranks.push_back({int(v[0]), int(v[1]), int(v[2]), v[3], v[4], v[5]});
  }
  return ranks;
}

void print_rank_profile(const std::vector<RankTimes>& ranks, const std::string& tag, std::ostream& out) {
  if (ranks.empty()) return;
  char line[256];
  out << "rtm: profile per rank: shots of its group, and its time before, in and after its loop "
         "(after: the image's finish, where the groups' sums meet on rank 0)\n";
  const RankTimes* slowest_loop = &ranks[0];
  const RankTimes* fastest_loop = &ranks[0];
  const RankTimes* slowest_before = &ranks[0];
  const RankTimes* slowest_after = &ranks[0];
  for (const RankTimes& r : ranks) {
    std::snprintf(line, sizeof line,
                  "rtm: profile:   rank %3d  group %3d  %4d shot(s)  before %8.3f s  loop %8.3f s  "
                  "after %8.3f s\n",
                  r.rank, r.group, r.shots, r.before_loop_s, r.loop_s, r.after_loop_s);
    out << line;
    if (r.loop_s > slowest_loop->loop_s) slowest_loop = &r;
    if (r.loop_s < fastest_loop->loop_s) fastest_loop = &r;
    if (r.before_loop_s > slowest_before->before_loop_s) slowest_before = &r;
    if (r.after_loop_s > slowest_after->after_loop_s) slowest_after = &r;
  }
  std::snprintf(line, sizeof line,
                "rtm: profile: loops %.3f s (rank %d) to %.3f s (rank %d), %.1f%% apart; the "
                "longest before a loop %.3f s (rank %d), after one %.3f s (rank %d)\n",
                fastest_loop->loop_s, fastest_loop->rank, slowest_loop->loop_s, slowest_loop->rank,
                slowest_loop->loop_s > 0
                    ? 100.0 * (slowest_loop->loop_s - fastest_loop->loop_s) / slowest_loop->loop_s
                    : 0.0,
                slowest_before->before_loop_s, slowest_before->rank, slowest_after->after_loop_s,
                slowest_after->rank);
  out << line;
  std::snprintf(line, sizeof line,
                "PERFORMANCE %s ranks=%zu loop_min_s=%.3f loop_max_s=%.3f before_max_s=%.3f "
                "after_max_s=%.3f\n",
                tag.c_str(), ranks.size(), fastest_loop->loop_s, slowest_loop->loop_s,
                slowest_before->before_loop_s, slowest_after->after_loop_s);
  out << line << std::flush;
}

} // namespace rtm
