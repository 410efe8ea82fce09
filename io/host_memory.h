// How much memory this machine can still give a process: MemAvailable from /proc/meminfo (the
// kernel's estimate of what can be allocated without swapping, page cache included), or less when
// the process runs under an address-space limit (`ulimit -v`, RLIMIT_AS, as batch systems set it):
// then an allocation beyond that limit fails however much memory the machine has free.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

namespace rtm {

// MemAvailable from the text of /proc/meminfo, in bytes; 0 when absent or unreadable.
uint64_t parse_mem_available(std::istream& meminfo);

// VmSize (the address space this process maps) from the text of /proc/self/status, in bytes; 0
// when absent or unreadable.
uint64_t parse_vm_size(std::istream& status);

// What the address-space limit leaves: limit - mapped, 0 when it is used up; UINT64_MAX when there
// is no limit (RLIM_INFINITY).
uint64_t address_space_left(uint64_t limit, uint64_t mapped);

// What this process may still allocate, in bytes: the smaller of MemAvailable (divided among the
// `sharing` processes that share this machine's memory) and what RLIMIT_AS leaves beyond the
// address space already mapped (each process's own); 0 when neither is known (callers then skip
// their check rather than guess).
uint64_t host_available_bytes(int sharing = 1);

// Where host_available_bytes' figure comes from, for messages: "MemAvailable in /proc/meminfo" or
// "the address-space limit (ulimit -v) of 1.00 GiB less the 0.25 GiB this process maps".
std::string host_available_source(int sharing = 1);

} // namespace rtm
