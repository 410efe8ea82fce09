#include "io/path_checks.h"

#include <filesystem>
#include <system_error>

#include "solvers/contracts/errors.h"

namespace rtm {

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // equivalent() follows symbolic links and compares device and inode: hard links match too.
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  // A path that does not exist yet cannot share an inode with one that does; two not-yet-existing
  // paths are the same file when they resolve to the same place ("out/../m.h5" and "m.h5").
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && ca == cb;
}

void check_outputs_are_not_inputs(const std::vector<NamedPath>& outputs,
                                  const std::vector<NamedPath>& inputs) {
  for (const NamedPath& output : outputs) {
    if (output.path.empty()) continue;
    for (const NamedPath& input : inputs) {
      if (input.path.empty() || !same_file(output.path, input.path)) continue;
      throw InputError(output.option + " " + output.path + " is the same file as " + input.option +
                       " " + input.path + ": refusing to write over an input; choose another " +
                       "output name");
    }
  }
}

} // namespace rtm
