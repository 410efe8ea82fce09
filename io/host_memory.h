// How much memory this machine can still give a process: MemAvailable from /proc/meminfo (the
// kernel's estimate of what can be allocated without swapping, page cache included).
#pragma once

#include <cstdint>
#include <istream>

namespace rtm {

// MemAvailable from the text of /proc/meminfo, in bytes; 0 when absent or unreadable.
uint64_t parse_mem_available(std::istream& meminfo);

// MemAvailable of this machine, in bytes; 0 when /proc/meminfo cannot be read (callers then skip
// their check rather than guess).
uint64_t host_available_bytes();

} // namespace rtm
