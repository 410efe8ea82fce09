#include "io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <sys/statvfs.h>
#include <unistd.h>

#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"

namespace rtm {

std::string temporary_path_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
}

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("output file name is empty");
  const fs::path directory = fs::path(path).parent_path();
  std::error_code ec;
  if (!directory.empty() && !fs::is_directory(directory, ec))
    throw InputError(path + ": cannot write: directory '" + directory.string() +
                     "' does not exist");
  if (fs::is_directory(path, ec))
    throw InputError(path + ": cannot write: it is a directory");
  // Creating the temporary and renaming it both need write and search permission on the directory.
  const std::string shown = directory.empty() ? "." : directory.string();
  if (::access(shown.c_str(), W_OK | X_OK) != 0)
    throw InputError(path + ": cannot write: no permission to create files in directory '" +
                     shown + "' (" + std::strerror(errno) + ")");
}

namespace {

// The path itself when it exists, else the nearest existing directory (or file) above it; "." for
// a relative path none of whose parts exist.
std::filesystem::path nearest_existing(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = path;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

} // namespace

void check_output_directory(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  const std::string named = option + " " + path;
  if (path.empty()) throw InputError(option + ": the directory name is empty");
  std::error_code ec;
  const fs::path existing = nearest_existing(fs::path(path));
  const bool exists = fs::exists(fs::path(path), ec);
  if (exists && !fs::is_directory(path, ec))
    throw InputError(named + ": cannot write figures or files into it: it is a file, not a directory");
  if (!exists && !fs::is_directory(existing, ec))
    throw InputError(named + ": cannot create this directory: '" + existing.string() +
                     "' above it is a file, not a directory");
  // Creating it (or files in it) needs write and search permission there; access() also says
  // EROFS for a read-only file system, which stops root too.
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw InputError(named + ": cannot " +
                     (exists ? std::string("create files in this directory")
                             : "create this directory in '" + existing.string() + "'") +
                     " (" + std::strerror(errno) + "); choose a writable place");
}

void check_disk_space(const std::string& path, uint64_t bytes, const std::string& what) {
  uint64_t free_bytes = 0;
  std::string source = "statvfs";
  if (const char* fake = std::getenv("RTM_FAKE_FREE_DISK_BYTES"); fake && *fake) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(fake, &end, 10);
    if (errno != 0 || *end != '\0' || value == 0 || fake[0] == '-')
      throw InputError(std::string("RTM_FAKE_FREE_DISK_BYTES=") + fake +
                       ": expected a positive whole number of bytes (it is for tests; unset it)");
    free_bytes = value;
    source = "RTM_FAKE_FREE_DISK_BYTES";
  } else {
    struct statvfs fs {};
    const std::string directory = nearest_existing(std::filesystem::path(path).parent_path()).string();
    if (::statvfs(directory.c_str(), &fs) != 0) return; // unknown: the writers still say so if full
    free_bytes = uint64_t(fs.f_bavail) * uint64_t(fs.f_frsize);
  }
  if (bytes <= free_bytes) return;
  throw InputError(what + " need " + format_bytes(bytes) + " of disk space but " + format_bytes(free_bytes) +
                   " are free on the file system of '" +
                   nearest_existing(std::filesystem::path(path).parent_path()).string() + "' (" +
                   source + "); free some space or write the output elsewhere");
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temporary)>& write) {
  check_output_path(path);

  const std::string temporary = temporary_path_for(path);
  try {
    write(temporary);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InputError(path + ": cannot rename the completed temporary file onto it: " + reason);
  }
}

} // namespace rtm
