// SEG-Y in a build without libsegyio (the GPU machine's image lacks it): every call says so.
#include "solvers/contracts/errors.h"
#include "io/segy_file.h"

namespace rtm {
namespace {
[[noreturn]] void unavailable(const std::string& path) {
  throw InputError(path + ": this rtm was built without SEG-Y support (libsegyio was not found "
                          "at build time; install libsegyio-dev and rebuild)");
}
} // namespace

bool segy_supported() { return false; }
void check_header_byte(int, const std::string&) {}
SegyVolume read_segy_survey_volume(const std::string& path, const SegyVolumeReadOptions&) { unavailable(path); }
VelocityModel read_segy_volume(const std::string& path, const SegyVolumeReadOptions&) { unavailable(path); }
void write_segy_volume(const std::string& path, const VelocityModel&, const std::vector<float>&,
                       const std::string&, const SurveyFrame&) {
  unavailable(path);
}
ShotFile read_segy_shots(const std::string& path, const SegyShotReadOptions&) { unavailable(path); }
void write_segy_shots(const std::string& path, const ShotFile&) { unavailable(path); }
void write_segy_gathers(const std::string& path, const ArrayInfo&, const std::vector<float>&,
                        const std::string&) {
  unavailable(path);
}

} // namespace rtm
