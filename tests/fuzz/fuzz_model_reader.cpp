// libFuzzer target: the HDF5 velocity-model reader (io/velocity_model.h) on arbitrary bytes.
// Whatever the file holds, the reader must either return a model or throw rtm::InputError: any
// other exception, a crash, a leak or a sanitizer report is a bug (libFuzzer stops and saves the
// input). Seeds: tests/fuzz/corpus/model/ (valid small models and broken ones).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "solvers/contracts/errors.h"
#include "io/velocity_model.h"

namespace {

// One file per process, rewritten for every input (the reader takes a path, not bytes).
const std::string& scratch_path() {
  static const std::string path =
      "/tmp/rtm_fuzz_model_" + std::to_string(static_cast<long>(::getpid())) + ".h5";
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0; // the harness's problem, not the reader's
  const bool written = std::fwrite(data, 1, size, file) == size;
  if (std::fclose(file) != 0 || !written) return 0;
  try {
    const rtm::VelocityModel model = rtm::read_velocity_model(path);
    // A model the reader accepts must be one the rest of the program can use.
    if (model.vp.size() != static_cast<size_t>(model.cells()) || model.vmin() <= 0) __builtin_trap();
    rtm::read_model_geometry(path);
  } catch (const rtm::InputError&) {
    // the expected outcome for nearly every input
  }
  return 0;
}
