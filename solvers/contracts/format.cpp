#include "solvers/contracts/format.h"

#include <cstdio>

namespace rtm {

std::string format_number(double value, int significant) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", significant, value);
  return text;
}

std::string format_distinct(double value, double bound, int significant) {
  // 17 significant digits tell any two different doubles apart.
  for (int digits = significant; digits < 17; ++digits)
    if (format_number(value, digits) != format_number(bound, digits))
      return format_number(value, digits);
  return format_number(value, 17);
}

std::string format_bytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30) / 100)
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
  else
    std::snprintf(text, sizeof text, "%.2f MiB", double(bytes) / double(1ull << 20));
  return text;
}

} // namespace rtm
