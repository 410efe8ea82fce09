#include "solvers/contracts/tuning.h"

#include <cstdio>

namespace rtm {

namespace {
std::string clean(std::string value) {
  for (char& c : value)
    if (c == '\t' || c == '\n' || c == '\r' || c == ';') c = ' ';
  return value;
}
} // namespace

std::string tuning_key_text(const TuningKey& key) {
  std::string candidates;
  for (const std::string& name : key.candidates) candidates += (candidates.empty() ? "" : ",") + clean(name);
  return "device=" + clean(key.device) + ";cc=" + std::to_string(key.compute_capability) +
         ";grid=" + std::to_string(key.nx) + "x" + std::to_string(key.ny) + "x" +
         std::to_string(key.nz) + ";storage=" + clean(key.storage) + ";memory=" +
         clean(key.memory) + ";boundary=" + clean(key.boundary) + ";candidates=" + candidates +
         ";table=" + clean(key.table);
}

std::string tuning_fingerprint(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

} // namespace rtm
