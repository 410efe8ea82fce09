#include "io/host_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace rtm {

uint64_t parse_mem_available(std::istream& meminfo) {
  std::string line;
  while (std::getline(meminfo, line)) {
    // "MemAvailable:   12345678 kB"
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long value = 0;
    std::string unit;
    if (!(fields >> value)) return 0;
    fields >> unit;
    if (unit == "kB") return uint64_t(value) * 1024;
    if (unit.empty()) return uint64_t(value);
    return 0; // a unit the kernel has never used: do not guess
  }
  return 0;
}

uint64_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  if (!meminfo) return 0;
  return parse_mem_available(meminfo);
}

} // namespace rtm
