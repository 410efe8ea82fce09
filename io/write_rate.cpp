#include "io/write_rate.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace rtm {

WriteRate measure_plain_write(const std::string& beside, uint64_t bytes) {
  WriteRate rate;
  bytes = std::min<uint64_t>(bytes, uint64_t(4) << 30);
  const std::string path = beside + ".write-rate-probe";
  // Pieces of 8 MiB of nonzero bytes (a file system may treat zeros specially).
  std::vector<char> piece(size_t(8) << 20, char(0x5a));
  const auto start = std::chrono::steady_clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    rate.failure = path + ": " + std::strerror(errno);
    return rate;
  }
  uint64_t left = bytes;
  while (left > 0) {
    const size_t n = size_t(std::min<uint64_t>(left, piece.size()));
    const ssize_t written = ::write(fd, piece.data(), n);
    if (written <= 0) {
      rate.failure = path + ": " + (written < 0 ? std::strerror(errno) : "nothing written");
      break;
    }
    left -= uint64_t(written);
  }
  if (::close(fd) != 0 && rate.failure.empty()) rate.failure = path + ": " + std::strerror(errno);
  const auto end = std::chrono::steady_clock::now();
  ::unlink(path.c_str());
  if (!rate.failure.empty()) return rate;
  rate.measured = true;
  rate.bytes = bytes;
  rate.seconds = std::chrono::duration<double>(end - start).count();
  return rate;
}

} // namespace rtm
