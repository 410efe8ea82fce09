// Numbers in messages users read: as many digits as matter, no more ("630 m", not "630.000000 m").
#pragma once

#include <cstdint>
#include <string>

namespace rtm {

// `value` with at most `significant` significant digits and no trailing zeros (printf's %g:
// 630 -> "630", 0.0125 -> "0.0125", 1e-7 -> "1e-07").
std::string format_number(double value, int significant = 6);

// `value` and `bound` formatted with the fewest significant digits (at least `significant`) that
// show them different when they are different: a point 505.0000001 m outside a model ending at
// 505 m reads "505.0000001" against "505", never "505" against "505".
std::string format_distinct(double value, double bound, int significant = 6);

// A size of memory or disk: "1.50 GiB", or "12.34 MiB" below 0.01 GiB.
std::string format_bytes(uint64_t bytes);

} // namespace rtm
