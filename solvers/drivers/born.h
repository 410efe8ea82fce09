// Born (linearised) modeling: the operator whose exact adjoint is the raw RTM image of
// migrate_one_shot (docs/rtm.md, "Born modeling and the adjoint test").
//
// Background field S as in model_one_shot; scattered field
//   dp[n+1] = step(dp[n], dp[n-1]) + v2dt2 * m * S[n]      (over the model box)
//   d[n]    = dp[n] sampled at the receivers.
// m is the parameter of zero-lag RTM: its source m S stands for -ds S_tt of the true
// linearisation in slowness squared s = 1/v^2, so in the frequency domain m ~ omega^2 ds.
#pragma once

#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/drivers/migration.h"

namespace rtm {

// Scattered traces [nrec][nt] of the perturbation m (dense [z][y][x] over `box`). The source field
// of `fields` is the background field S and carries the source set (wavelet uploaded); the
// receiver field is the scattered field dp and carries the receiver set; both are reset.
std::vector<float> born_model_one_shot(ShotFields& fields, const ShotSets& shot, int nreceivers,
                                       const Box& box, const std::vector<float>& m);

} // namespace rtm
