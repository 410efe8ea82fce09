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
    if (phase.overlapped) row(phase.name, phase.seconds, phase.bytes, phase.what + " (overlaps the rows above: not added to them)");

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

} // namespace rtm
