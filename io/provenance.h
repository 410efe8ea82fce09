// What made a file: every HDF5 file rtm writes carries, as root attributes, the rtm version, the
// command line, the time it was written and the parameters the run recorded (docs/io.md,
// "Provenance"), so a file found later says how to make it again.
#pragma once

#include <hdf5.h>

#include <string>

namespace rtm {

// The version string of this build ("rtm 0.1.0").
const char* rtm_version();

// The command line of this process, quoted where needed; set once by main (empty in tests).
void set_provenance_command_line(int argc, const char* const* argv);

// A parameter that shaped this run's outputs ("dt" -> "0.00123 s", "variant" -> "regqueue_vec4"):
// the value as it was resolved (an "auto" choice recorded as what it chose). Later calls with
// the same key replace the value.
void record_run_parameter(const std::string& key, const std::string& value);

// Writes rtm_version, rtm_command_line, rtm_created (UTC, ISO 8601) and rtm_parameters (a JSON
// object of the recorded parameters) as string attributes on `file`'s root group. `path` names the file in errors.
void write_provenance(hid_t file, const std::string& path);

} // namespace rtm
