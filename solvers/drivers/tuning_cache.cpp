#include "solvers/drivers/tuning_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

#include "io/atomic_file.h"
#include "io/provenance.h"

namespace rtm {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string::npos ? at : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

} // namespace

TuningCachePlace tuning_cache_place(const char* rtm_tuning_cache, const char* xdg_cache_home,
                                    const char* home) {
  if (rtm_tuning_cache) {
    const std::string value = rtm_tuning_cache;
    if (value.empty() || value == "off" || value == "0")
      return {"", "RTM_TUNING_CACHE=" + value + " turns it off"};
    return {value, ""};
  }
  if (xdg_cache_home && std::string(xdg_cache_home).rfind('/', 0) == 0)
    return {std::string(xdg_cache_home) + "/rtm/tuning.tsv", ""};
  if (home && *home) return {std::string(home) + "/.cache/rtm/tuning.tsv", ""};
  return {"", "neither XDG_CACHE_HOME (absolute) nor HOME is set"};
}

TuningCachePlace tuning_cache_place() {
  return tuning_cache_place(std::getenv("RTM_TUNING_CACHE"), std::getenv("XDG_CACHE_HOME"),
                            std::getenv("HOME"));
}

std::string format_tuning_line(const std::string& version, const std::string& key_text,
                               const TuningChoice& choice) {
  std::string times;
  for (const auto& [name, ms] : choice.ms_per_step) {
    std::ostringstream one;
    one.precision(6);
    one << name << "=" << ms;
    times += (times.empty() ? "" : ",") + one.str();
  }
  return version + "\t" + key_text + "\t" + choice.variant + "\t" + times;
}

bool parse_tuning_line(const std::string& line, std::string& version, std::string& key_text,
                       TuningChoice& choice) {
  const std::vector<std::string> fields = split(line, '\t');
  if (fields.size() != 4 || fields[0].empty() || fields[1].empty() || fields[2].empty())
    return false;
  TuningChoice parsed;
  parsed.variant = fields[2];
  if (!fields[3].empty())
    for (const std::string& item : split(fields[3], ',')) {
      const size_t equals = item.find('=');
      if (equals == std::string::npos || equals == 0) return false;
      const std::string number = item.substr(equals + 1);
      char* end = nullptr;
      const double ms = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size() || !(ms >= 0)) return false;
      parsed.ms_per_step.emplace_back(item.substr(0, equals), ms);
    }
  version = fields[0];
  key_text = fields[1];
  choice = std::move(parsed);
  return true;
}

FileTuningCache::FileTuningCache(std::string path, std::string version)
    : path_(std::move(path)), version_(std::move(version)) {}

std::string FileTuningCache::describe() const { return "the tuning cache " + path_; }

bool FileTuningCache::find(const TuningKey& key, TuningChoice& choice, std::string& note) {
  const std::lock_guard<std::mutex> lock(mutex_);
  note.clear();
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return false; // nothing remembered yet: not worth a word
  std::ifstream in(path_);
  if (!in) {
    note = path_ + " cannot be read";
    return false;
  }
  const std::string wanted = tuning_key_text(key);
  bool found = false;
  std::string version, text;
  TuningChoice line_choice;
  for (std::string line; std::getline(in, line);)
    if (parse_tuning_line(line, version, text, line_choice) && version == version_ && text == wanted) {
      choice = line_choice; // the last one wins
      found = true;
    }
  return found;
}

void FileTuningCache::remember(const TuningKey& key, const TuningChoice& choice, std::string& note) {
  const std::lock_guard<std::mutex> lock(mutex_);
  note.clear();
  const std::string wanted = tuning_key_text(key);
  std::vector<std::string> kept;
  std::string version, text;
  TuningChoice line_choice;
  for (const std::string& line : read_lines(path_))
    if (!(parse_tuning_line(line, version, text, line_choice) && version == version_ && text == wanted))
      kept.push_back(line);
  kept.push_back(format_tuning_line(version_, wanted, choice));
  if (int(kept.size()) > kMaxTuningLines)
    kept.erase(kept.begin(), kept.end() - kMaxTuningLines);
  try {
    const std::filesystem::path directory = std::filesystem::path(path_).parent_path();
    if (!directory.empty()) std::filesystem::create_directories(directory);
    write_file_atomically(path_, [&kept](const std::string& temporary) {
      std::ofstream out(temporary);
      for (const std::string& line : kept) out << line << "\n";
      out.close();
      if (!out) throw std::runtime_error("cannot write " + temporary);
    });
  } catch (const std::exception& e) {
    note = path_ + " cannot be written (" + e.what() + ")";
  }
}

TuningCache* process_tuning_cache(std::string* why_none) {
  static const TuningCachePlace place = tuning_cache_place();
  static const std::unique_ptr<FileTuningCache> cache =
      place.path.empty() ? nullptr : std::make_unique<FileTuningCache>(place.path, rtm_version());
  if (why_none) *why_none = place.why_none;
  return cache.get();
}

} // namespace rtm
