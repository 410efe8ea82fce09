#include "io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "solvers/contracts/errors.h"

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
