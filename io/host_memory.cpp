#include "io/host_memory.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace rtm {
namespace {

// "Name:   12345678 kB" lines of /proc files: the value of `name` in bytes, 0 when absent.
uint64_t parse_kilobyte_line(std::istream& text, const std::string& name) {
  std::string line;
  while (std::getline(text, line)) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream fields(line.substr(name.size()));
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

uint64_t mem_available() {
  std::ifstream meminfo("/proc/meminfo");
  return meminfo ? parse_mem_available(meminfo) : 0;
}

uint64_t vm_size() {
  std::ifstream status("/proc/self/status");
  return status ? parse_vm_size(status) : 0;
}

// RLIMIT_AS's soft limit in bytes; UINT64_MAX when unlimited or unreadable.
uint64_t address_space_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<uint64_t>::max();
  return uint64_t(limit.rlim_cur);
}

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  return text;
}

} // namespace

uint64_t parse_mem_available(std::istream& meminfo) {
  return parse_kilobyte_line(meminfo, "MemAvailable:");
}

uint64_t parse_vm_size(std::istream& status) { return parse_kilobyte_line(status, "VmSize:"); }

uint64_t address_space_left(uint64_t limit, uint64_t mapped) {
  if (limit == std::numeric_limits<uint64_t>::max()) return limit;
  return limit > mapped ? limit - mapped : 0;
}

uint64_t host_available_bytes(int sharing) {
  const uint64_t available = mem_available() / uint64_t(sharing > 1 ? sharing : 1);
  const uint64_t left = address_space_left(address_space_limit(), vm_size());
  if (available == 0) return left == std::numeric_limits<uint64_t>::max() ? 0 : left;
  return left < available ? left : available;
}

std::string host_available_source(int sharing) {
  const uint64_t limit = address_space_limit();
  const uint64_t mapped = vm_size();
  const uint64_t available = mem_available() / uint64_t(sharing > 1 ? sharing : 1);
  const uint64_t left = address_space_left(limit, mapped);
  if (left != std::numeric_limits<uint64_t>::max() && (available == 0 || left < available))
    return "the address-space limit (ulimit -v) of " + gib(limit) + " less the " + gib(mapped) +
           " this process maps already";
  return "MemAvailable in /proc/meminfo";
}

} // namespace rtm
