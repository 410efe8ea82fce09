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

} // namespace rtm
