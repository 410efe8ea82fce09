// The state of a least-squares RTM between two iterations (docs/rtm.md, section 12), so that
// `rtm lsrtm --resume` continues exactly where a run stopped, or adds iterations to a finished one:
//
//   <output>.lsrtm-state.h5
//     /model          float32 [nz][ny][nx]   the model perturbation m after `iteration` iterations
//     /gradient       float32 [nz][ny][nx]   g = L'(d - L m), the normal equations' residual
//     /direction      float32 [nz][ny][nx]   the next search direction p
//     /illumination   float32 [nz][ny][nx]   sum over shots and steps of S^2 (the preconditioner's)
//     /residual_norm  float64 [iteration+1]  the data residual |d - L m| after 0, 1, ... iterations
//     root attributes format ("rtm-lsrtm-state 1"), iteration, gamma (<g, P g>, float64), the
//                     run's identity (as a migration checkpoint's, io/checkpoint_file.h)
// Written under a temporary name and renamed: a kill at any moment leaves the previous state or
// the new one, never a damaged one.
#pragma once

#include <string>
#include <vector>

#include "io/checkpoint_file.h"

namespace rtm {

struct LsrtmState {
  CheckpointIdentity identity;
  int iteration = 0;   // iterations done
  double gamma = 0;    // <g, P g> of the current gradient
  int nx = 0, ny = 0, nz = 0;
  std::vector<float> model, gradient, direction, illumination; // [nz][ny][nx] each
  std::vector<double> residual_norm;                           // iteration + 1 values
};

// "<output>.lsrtm-state.h5"
std::string lsrtm_state_path(const std::string& output);

void write_lsrtm_state(const std::string& path, const LsrtmState& state);
// InputError naming the file for anything that is not a complete state of this format.
LsrtmState read_lsrtm_state(const std::string& path);

} // namespace rtm
