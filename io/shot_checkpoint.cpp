#include "io/shot_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "io/atomic_file.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

namespace fs = std::filesystem;

std::string identity_path(const std::string& output) {
  return (fs::path(shot_checkpoint_dir(output)) / "run.txt").string();
}

std::string shot_path(const std::string& output, int id) {
  char name[32];
  std::snprintf(name, sizeof name, "shot-%06d.h5", id);
  return (fs::path(shot_checkpoint_dir(output)) / name).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  std::string line;
  while (std::getline(stream, line))
    if (!line.empty()) lines.push_back(line);
  return lines;
}

} // namespace

std::string shot_checkpoint_dir(const std::string& output) { return output + ".checkpoint"; }

bool shot_checkpoint_exists(const std::string& output) {
  std::error_code ec;
  return fs::exists(shot_checkpoint_dir(output), ec);
}

void start_shot_checkpoint(const std::string& output, const std::string& identity) {
  const std::string dir = shot_checkpoint_dir(output);
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) throw InputError(dir + ": cannot create the checkpoint directory: " + ec.message());
  write_file_atomically(identity_path(output), [&](const std::string& temporary) {
    std::ofstream out(temporary);
    out << identity;
    out.close();
    if (!out) throw InputError(temporary + ": cannot write the checkpoint's identity");
  });
}

void write_checkpoint_shot(const std::string& output, const ShotFile& header, const ShotGather& shot) {
  ShotFile one = header;
  one.shots = {shot};
  write_shot_file(shot_path(output, shot.id), one);
}

std::vector<ShotGather> read_shot_checkpoint(const std::string& output, const std::string& identity,
                                             const ShotFile& header, int shot_count) {
  const std::string dir = shot_checkpoint_dir(output);
  const std::string id_path = identity_path(output);
  std::ifstream in(id_path);
  if (!in)
    throw InputError(dir + ": a checkpoint directory without its identity file run.txt (not "
                     "written by `rtm model`?); delete " + dir + " to start afresh");
  std::stringstream saved;
  saved << in.rdbuf();
  if (saved.str() != identity) {
    const std::vector<std::string> before = lines_of(saved.str()), after = lines_of(identity);
    std::string differences;
    for (size_t k = 0; k < std::max(before.size(), after.size()); ++k) {
      const std::string a = k < before.size() ? before[k] : "(none)";
      const std::string b = k < after.size() ? after[k] : "(none)";
      if (a != b) differences += (differences.empty() ? "" : "; ") + ("checkpoint " + a + ", now " + b);
    }
    throw InputError(id_path + " was written by another modeling run: " + differences +
                     "; resume with the inputs and options of the interrupted run, or delete " +
                     dir + " to start afresh");
  }

  std::vector<ShotGather> shots;
  const std::regex name("shot-([0-9]{6})\\.h5"); // temporaries (".h5.tmp-<pid>") do not match
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (!std::regex_match(file, match, name)) continue;
    const std::string path = entry.path().string();
    ShotFile one = read_shot_file(path);
    const int id = std::stoi(match[1].str());
    if (one.shots.size() != 1 || one.shots[0].id != id)
      throw InputError(path + ": expected shot " + std::to_string(id) + " alone in the file");
    if (id >= shot_count)
      throw InputError(path + ": shot " + std::to_string(id) + ", but this run has " +
                       std::to_string(shot_count) + " shot(s)");
    if (one.nt != header.nt || one.dt != header.dt || one.receivers != header.receivers ||
        one.wavelet != header.wavelet)
      throw InputError(path + ": its time axis, wavelet or receivers differ from this run's; "
                       "delete " + dir + " to start afresh");
    shots.push_back(std::move(one.shots[0]));
  }
  std::sort(shots.begin(), shots.end(),
            [](const ShotGather& a, const ShotGather& b) { return a.id < b.id; });
  return shots;
}

bool remove_shot_checkpoint_if_empty(const std::string& output) {
  std::error_code ec;
  const std::regex name("shot-[0-9]{6}\\.h5");
  for (const fs::directory_entry& entry : fs::directory_iterator(shot_checkpoint_dir(output), ec))
    if (std::regex_match(entry.path().filename().string(), name)) return true;
  remove_shot_checkpoint(output);
  return false;
}

void remove_shot_checkpoint(const std::string& output) {
  std::error_code ec;
  fs::remove_all(shot_checkpoint_dir(output), ec);
}

} // namespace rtm
