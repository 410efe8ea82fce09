// Checkpoints of a modeling run (docs/robustness.md, "Resuming a modeling run"): every finished
// shot is written as it finishes, so an interrupted `rtm model` keeps its finished shots and
// `rtm model --resume` models only the others.
//
//   <output>.checkpoint/          a directory next to the output
//     run.txt                     the run's identity ("name = value" lines), written first
//     shot-000003.h5              one finished shot: a shot file (io/shot_file.h) holding it alone
//
// Each file is written under a temporary name and renamed (io/atomic_file.h), so a kill leaves
// complete files (and perhaps a temporary one, which is ignored). The output itself is written, as
// always, only when every shot is done; then the directory is deleted.
#pragma once

#include <string>
#include <vector>

#include "io/shot_file.h"

namespace rtm {

// "<output>.checkpoint"
std::string shot_checkpoint_dir(const std::string& output);
bool shot_checkpoint_exists(const std::string& output);

// Starts a fresh checkpoint of `output`: creates the directory and writes the identity.
void start_shot_checkpoint(const std::string& output, const std::string& identity);
// Writes one finished shot; `header` gives the file's time axis, wavelet, receivers and grid.
void write_checkpoint_shot(const std::string& output, const ShotFile& header, const ShotGather& shot);

// The finished shots of `output`'s checkpoint, sorted by id. InputError when its identity is not
// `identity` (naming every line that differs, and what to do), or when a shot file does not fit
// `header` (time axis, receivers) or names a shot id of `shot_count` or more.
std::vector<ShotGather> read_shot_checkpoint(const std::string& output, const std::string& identity,
                                             const ShotFile& header, int shot_count);

// Deletes the directory and everything in it (temporaries of a killed run included).
void remove_shot_checkpoint(const std::string& output);
// Deletes it when it holds no finished shot (a run that failed or was stopped before its first
// shot): nothing to resume, and it would only make the next run ask for --resume. Returns whether
// finished shots are kept.
bool remove_shot_checkpoint_if_empty(const std::string& output);

} // namespace rtm
