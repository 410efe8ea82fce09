// The rate a plain sequential write reaches in a directory, to set an output's rate against
// (`rtm migrate --profile`, docs/rtm.md "Profiling a migration"): the same bytes written with
// write(2) in large pieces to a temporary file beside the output, then removed. Like the HDF5
// writes it stands for, it does not sync: both measure what the operating system takes in (the
// page cache, then the disk at its pace).
#pragma once

#include <cstdint>
#include <string>

namespace rtm {

struct WriteRate {
  bool measured = false;
  double seconds = 0;
  uint64_t bytes = 0;
  std::string failure; // why not measured (a full disk, a directory not writable)
  double gigabytes_per_second() const { return seconds > 0 ? double(bytes) * 1e-9 / seconds : 0.0; }
};

// Writes `bytes` (at most 4 GiB) to a temporary file named after `beside` (a path whose
// directory is the one measured) and removes it. Never throws for the file system's refusals:
// they come back in `failure`.
WriteRate measure_plain_write(const std::string& beside, uint64_t bytes);

} // namespace rtm
