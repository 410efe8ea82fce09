#include "solvers/drivers/born.h"

#include "solvers/drivers/modeling.h"

namespace rtm {

std::vector<float> born_model_one_shot(Propagator& background, Propagator& scattered,
                                       const ShotSets& shot, int nreceivers, const Box& box,
                                       const std::vector<float>& m) {
  scattered.set_born_perturbation(box, m);
  background.zero_state();
  scattered.zero_state();
  for (int n = 0; n < shot.nt; ++n) {
    // Top of the iteration: background holds S[n], scattered holds dp[n].
    scattered.record(shot.receiver_set, n);
    scattered.step();
    scattered.inject_born_source(background); // dp[n+1] += v2dt2 m S[n]
    background.step();
    background.inject(shot.source_set, n, shot.source_scale);
  }
  return series_to_traces(scattered.download_series(shot.receiver_set), nreceivers, shot.nt);
}

} // namespace rtm
