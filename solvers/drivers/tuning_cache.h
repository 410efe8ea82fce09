// The tuning cache's file (docs/variants.md, "The tuning cache"): `--variant auto`'s choices, so
// that a run on a GPU and grid timed before takes the kernel without timing the candidates again
// (five kernels on the full grid: about a second at 552^3). One choice a line, tab-separated:
//
//   <rtm version> \t <key: tuning_key_text> \t <variant chosen> \t <name>=<ms/step>,<name>=<ms/step>...
//
// The file is $XDG_CACHE_HOME/rtm/tuning.tsv, or ~/.cache/rtm/tuning.tsv when XDG_CACHE_HOME is
// unset or not absolute. RTM_TUNING_CACHE=<file> names another file; RTM_TUNING_CACHE=off (or 0,
// or empty) turns the cache off: every run times again and nothing is written.
#pragma once

#include <mutex>
#include <string>

#include "solvers/contracts/tuning.h"

namespace rtm {

// Where the cache lives: a path, or none with the reason ("RTM_TUNING_CACHE=off").
struct TuningCachePlace {
  std::string path;
  std::string why_none;
};
// From the variables' values (nullptr: unset): RTM_TUNING_CACHE, XDG_CACHE_HOME, HOME.
TuningCachePlace tuning_cache_place(const char* rtm_tuning_cache, const char* xdg_cache_home,
                                    const char* home);
// The same from the environment.
TuningCachePlace tuning_cache_place();

// One line of the file (no newline), and back: false for a line that is not one (a comment, a
// line of another format, damage), which readers skip.
std::string format_tuning_line(const std::string& version, const std::string& key_text,
                               const TuningChoice& choice);
bool parse_tuning_line(const std::string& line, std::string& version, std::string& key_text,
                       TuningChoice& choice);

// The file as a TuningCache: find reads it (the last line of this version and key wins);
// remember rewrites it with the choice in place of any earlier one of its key (the directory made
// if needed, the file replaced atomically: concurrent writers lose at most each other's new line,
// never the file), keeping the newest kMaxTuningLines lines.
class FileTuningCache : public TuningCache {
public:
  static constexpr int kMaxTuningLines = 1000;
  FileTuningCache(std::string path, std::string version);
  bool find(const TuningKey& key, TuningChoice& choice, std::string& note) override;
  void remember(const TuningKey& key, const TuningChoice& choice, std::string& note) override;
  std::string describe() const override;
  const std::string& path() const { return path_; }

private:
  std::string path_, version_;
  std::mutex mutex_; // one reader or writer of this process at a time
};

// The process's cache from the environment (tuning_cache_place), made at the first call, with this
// build's rtm version; nullptr when there is none, `why_none` then saying why.
TuningCache* process_tuning_cache(std::string* why_none = nullptr);

} // namespace rtm
