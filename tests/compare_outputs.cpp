// Compares two outputs of `rtm` for the MPI tests (tests/CMakeLists.txt), which run the executable
// under the launcher and then this:
//   compare_outputs shots A.h5 B.h5 [TOL]                every shot's traces, source and
//                                                        receivers bit for bit,
//                                                        or max |a - b| <= TOL * max |a| per shot
//   compare_outputs volumes A.h5 B.h5 TOL NAME [NAME...]  max |a - b| <= TOL * max |a| per volume
// Exit status 0 when equal, 1 with the first difference on stderr, 2 for bad usage or files.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "io/shot_file.h"
#include "io/volume_file.h"

namespace {

int compare_shots(const std::string& a_path, const std::string& b_path, double tolerance) {
  const rtm::ShotFile a = rtm::read_shot_file(a_path), b = rtm::read_shot_file(b_path);
  if (a.shots.size() != b.shots.size() || a.nt != b.nt || a.receivers != b.receivers) {
    std::fprintf(stderr, "%s and %s differ in shots, samples or receivers\n", a_path.c_str(), b_path.c_str());
    return 1;
  }
  for (size_t s = 0; s < a.shots.size(); ++s) {
    const rtm::ShotGather &x = a.shots[s], &y = b.shots[s];
    if (x.receivers != y.receivers) {
      std::fprintf(stderr, "shot %zu has other receivers in %s than in %s\n", s, a_path.c_str(),
                   b_path.c_str());
      return 1;
    }
    if (tolerance >= 0 && x.id == y.id && x.source == y.source) {
      double largest = 0, difference = 0;
      for (size_t c = 0; c < x.data.size(); ++c) {
        largest = std::max(largest, std::fabs(double(x.data[c])));
        difference = std::max(difference, std::fabs(double(x.data[c]) - double(y.data[c])));
      }
      const double relative = largest > 0 ? difference / largest : difference;
      std::printf("shot %zu: max |a - b| / max |a| = %.3g (max |a| %.3g, tolerance %.3g)\n", s,
                  relative, largest, tolerance);
      if (!(relative <= tolerance)) return 1;
      continue;
    }
    if (x.id != y.id || x.source != y.source || x.data != y.data) {
      std::fprintf(stderr, "shot %zu differs between %s and %s\n", s, a_path.c_str(), b_path.c_str());
      return 1;
    }
  }
  if (tolerance < 0) std::printf("%zu shots equal bit for bit\n", a.shots.size());
  return 0;
}

int compare_volumes(const std::string& a_path, const std::string& b_path, double tolerance,
                    const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    rtm::VelocityModel grid_a, grid_b;
    const std::vector<float> a = rtm::read_volume(a_path, name, grid_a);
    const std::vector<float> b = rtm::read_volume(b_path, name, grid_b);
    if (a.size() != b.size()) {
      std::fprintf(stderr, "/%s: %zu values in %s, %zu in %s\n", name.c_str(), a.size(),
                   a_path.c_str(), b.size(), b_path.c_str());
      return 1;
    }
    double largest = 0, difference = 0;
    for (size_t c = 0; c < a.size(); ++c) {
      largest = std::max(largest, std::fabs(double(a[c])));
      difference = std::max(difference, std::fabs(double(a[c]) - double(b[c])));
    }
    const double relative = largest > 0 ? difference / largest : difference;
    std::printf("/%s: max |a - b| / max |a| = %.3g (tolerance %.3g)\n", name.c_str(), relative, tolerance);
    if (!(relative <= tolerance)) return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if ((args.size() == 3 || args.size() == 4) && args[0] == "shots")
      return compare_shots(args[1], args[2], args.size() == 4 ? std::atof(args[3].c_str()) : -1.0);
    if (args.size() >= 5 && args[0] == "volumes")
      return compare_volumes(args[1], args[2], std::atof(args[3].c_str()),
                             std::vector<std::string>(args.begin() + 4, args.end()));
    std::fprintf(stderr, "usage: compare_outputs shots A B [TOLERANCE] | volumes A B TOLERANCE NAME...\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_outputs: %s\n", e.what());
  }
  return 2;
}
