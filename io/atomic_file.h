// Writing output files so that a crash or an error never leaves a half-written file under the real
// name: the content goes to `<path>.tmp-<pid>` in the same directory (so the rename stays within one
// file system and is atomic), and is renamed onto `path` only once it is complete.
#pragma once

#include <functional>
#include <string>

namespace rtm {

// The temporary name used while `path` is being written.
std::string temporary_path_for(const std::string& path);

// Refuses (InputError naming `path`) an output that cannot be created: an empty name, a directory
// that does not exist or that this user may not create files in, or a path that is a directory.
// Commands call it before their work, so a long run never ends in "cannot write".
void check_output_path(const std::string& path);

// Calls write(temporary) and renames the result onto `path`. If `path`'s directory does not exist,
// throws InputError before writing anything. If write throws or the rename fails, the temporary
// file is removed and the exception propagates (a failed rename becomes an InputError).
void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temporary)>& write);

} // namespace rtm
