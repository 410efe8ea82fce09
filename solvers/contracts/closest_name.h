// "Did you mean ...?": the known name closest to a mistyped one. Used for command-line options and
// subcommands (app/cli.cpp) and variant names (kernels/cuda/steps/variant_table.cu); plain C++, no CUDA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace rtm {

// Levenshtein distance between two names.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The candidate closest to `typed`: within a third of its length in edits, or one being a prefix
// of the other ("--model-file" -> "--model", "--rec" -> "--record-time"); "" when none is close.
inline std::string closest_name(const std::string& typed, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  if (typed.size() <= 2) return best; // "-x": any one-letter option is one edit away
  for (const std::string& candidate : candidates) {
    if (candidate.size() <= 2) continue;
    const size_t distance = edit_distance(typed, candidate);
    const bool prefix = typed.rfind(candidate, 0) == 0 || candidate.rfind(typed, 0) == 0;
    if ((distance <= std::max<size_t>(2, typed.size() / 3) || prefix) && distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

} // namespace rtm
