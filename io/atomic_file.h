// Writing output files so that a crash or an error never leaves a half-written file under the real
// name: the content goes to `<path>.tmp-<pid>` in the same directory (so the rename stays within one
// file system and is atomic), and is renamed onto `path` only once it is complete.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace rtm {

// The temporary name used while `path` is being written.
std::string temporary_path_for(const std::string& path);

// Refuses (InputError naming `path`) an output that cannot be created: an empty name, a directory
// that does not exist or that this user may not create files in, or a path that is a directory.
// Commands call it before their work, so a long run never ends in "cannot write".
void check_output_path(const std::string& path);

// Refuses (InputError naming `option` and `path`) a directory the run will write files into and
// cannot: one below a regular file, an existing file that is no directory, or a directory (for a
// missing one: the nearest existing directory above it, where the run will create it) without
// write and search permission or on a read-only file system. Creates nothing: a run refused later
// leaves no empty directory behind. Commands call it before their work (--png-dir, demo -o).
void check_output_directory(const std::string& path, const std::string& option);

// Refuses (InputError) outputs of `bytes` in all that cannot fit on the file system that holds
// `path` (a file or directory to be written; for a missing one, the nearest existing directory
// above it): what is free to this user (statvfs f_bavail) against what is needed, both in GiB,
// `what` naming the outputs ("-o shots.h5 and its checkpoint"). RTM_FAKE_FREE_DISK_BYTES=N (a
// positive integer) replaces the free space by N bytes, for tests; anything else is refused.
void check_disk_space(const std::string& path, uint64_t bytes, const std::string& what);

// Calls write(temporary) and renames the result onto `path`. If `path`'s directory does not exist,
// throws InputError before writing anything. If write throws or the rename fails, the temporary
// file is removed and the exception propagates (a failed rename becomes an InputError).
void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temporary)>& write);

} // namespace rtm
