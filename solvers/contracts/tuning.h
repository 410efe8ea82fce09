// `--variant auto`'s choice remembered (docs/variants.md, "The tuning cache"): the key a timing is
// kept under and the interface of the store that keeps it. The CUDA backend times and asks
// (kernels/cuda/fields/autotune.cu); the drivers keep the file (solvers/drivers/tuning_cache.h).
// Plain C++: the key is a string of fields, so that a store needs no CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rtm {

// What a timing depends on. Two runs with equal keys would time the same kernels on the same
// device, grid and memory: the choice of one holds for the other.
struct TuningKey {
  std::string device;          // the GPU's name, e.g. "NVIDIA H200"
  int compute_capability = 0;  // major * 10 + minor
  int nx = 0, ny = 0, nz = 0;  // the compute grid a field steps (absorbing layers included)
  std::string storage;         // the candidates' wavefield storage, "float32"
  std::string memory;          // memory options ("compressible", "l2_persist"; "" none)
  std::string boundary;        // "cpml", "sponge" or "none", with "+free_surface"
  std::vector<std::string> candidates; // the variants timed, in the table's order
  std::string table;           // the variant table's fingerprint (its rows, not its code)
};

// The key as one line of "name=value" fields joined by ';' (no tab, no newline: a value holding
// one has it replaced by a space), stable across runs and releases of the format.
std::string tuning_key_text(const TuningKey& key);

// FNV-1a of `text`, as 16 hexadecimal digits: the variant table's fingerprint.
std::string tuning_fingerprint(const std::string& text);

// A choice: the variant kept and the times of every candidate, ms per step.
struct TuningChoice {
  std::string variant;
  std::vector<std::pair<std::string, double>> ms_per_step;
};

// A store of choices by key. find and remember never throw for a store that cannot be read or
// written (a cache is an optimisation): they say so in `note` (empty otherwise), and find
// returns false.
class TuningCache {
public:
  virtual ~TuningCache() = default;
  virtual bool find(const TuningKey& key, TuningChoice& choice, std::string& note) = 0;
  virtual void remember(const TuningKey& key, const TuningChoice& choice, std::string& note) = 0;
  // Where the choices are kept, for messages: "the tuning cache /home/u/.cache/rtm/tuning.txt".
  virtual std::string describe() const = 0;
};

// What the `--variant auto` choices of a process cost so far: how many were made, how many came
// from a cache, and the seconds they took (timing, or reading the cache), for --profile.
struct AutotuneTotals {
  int choices = 0;
  int from_cache = 0;
  double seconds = 0;
};

} // namespace rtm
