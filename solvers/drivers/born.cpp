#include "solvers/drivers/born.h"

#include "solvers/drivers/modeling.h"

namespace rtm {

std::vector<float> born_model_one_shot(ShotFields& fields, const ShotSets& shot, int nreceivers,
                                       const Box& box, const std::vector<float>& m) {
  Wavefield& background = fields.source();
  Wavefield& scattered = fields.receiver();
  fields.set_born_perturbation(box, m);
  background.zero_state();
  scattered.zero_state();
  for (int n = 0; n < shot.nt; ++n) {
    // Top of the iteration: background holds S[n], scattered holds dp[n].
    shot.receiver->record(n);
    scattered.step();
    fields.inject_born_source(); // dp[n+1] += v2dt2 m S[n]
    background.step();
    shot.source->inject(n, shot.source_scale);
  }
  return series_to_traces(shot.receiver->download_series(), nreceivers, shot.nt);
}

} // namespace rtm
