// Shot files of random traces, for the tests that migrate data whose content does not matter, only
// that every rank and path gets the same (tests/test_slab_checkpoint_mpi.cpp,
// tests/test_slab_memory_mpi.cpp).
#pragma once

#include <random>
#include <vector>

#include "io/shot_file.h"
#include "solvers/drivers/wavelet.h"

namespace rtm::test {

// No gathers yet: nt samples of dt, an f0 Ricker wavelet with the default delay.
inline ShotFile ricker_shot_file(int nt, double dt, double f0) {
  ShotFile shots;
  shots.nt = nt;
  shots.dt = dt;
  shots.f0 = f0;
  shots.t0 = default_ricker_delay(shots.f0);
  shots.wavelet = ricker_wavelet(shots.nt, shots.dt, shots.f0, shots.t0);
  return shots;
}

// One gather's traces for `shots` (every receiver, nt samples), uniform in [-1, 1) from `random`.
inline std::vector<float> random_traces(const ShotFile& shots, std::mt19937& random) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> data(shots.receivers.size() * size_t(shots.nt));
  for (float& v : data) v = value(random);
  return data;
}

} // namespace rtm::test
