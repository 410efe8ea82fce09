#include "io/provenance.h"

#include <ctime>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "io/hdf5_util.h"

namespace rtm {
namespace {

struct Provenance {
  std::mutex lock;
  std::string command_line;
  std::map<std::string, std::string> parameters;
};

Provenance& provenance() {
  static Provenance p;
  return p;
}

// A shell word as a user would type it: quoted only when it needs to be.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=,:+@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

const char* rtm_version() { return "rtm 0.1.0"; }

void set_provenance_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + shell_word(argv[i]);
  const std::lock_guard<std::mutex> guard(provenance().lock);
  provenance().command_line = line;
}

void record_run_parameter(const std::string& key, const std::string& value) {
  const std::lock_guard<std::mutex> guard(provenance().lock);
  provenance().parameters[key] = value;
}

void write_provenance(hid_t file, const std::string& path) {
  std::string command_line;
  nlohmann::json parameters = nlohmann::json::object();
  {
    const std::lock_guard<std::mutex> guard(provenance().lock);
    command_line = provenance().command_line;
    for (const auto& [key, value] : provenance().parameters) parameters[key] = value;
  }
  char created[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc)) std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  h5::write_string_attribute(file, "rtm_version", rtm_version(), path);
  h5::write_string_attribute(file, "rtm_command_line", command_line, path);
  h5::write_string_attribute(file, "rtm_created", created, path);
  h5::write_string_attribute(file, "rtm_parameters", parameters.dump(), path);
}

} // namespace rtm
