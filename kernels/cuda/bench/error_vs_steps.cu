#include "kernels/cuda/error_vs_steps.h"

#include <cstdio>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "kernels/cuda/fields/cuda_propagator.cuh"
#include "kernels/cuda/fields/field_ops.cuh"
#include "kernels/cuda/steps/variant_table.cuh"

namespace rtm::cuda {

ErrorVsSteps run_error_vs_steps(const BenchConfig& config, const PropagatorSetup& setup,
                                const PointStencil& source, const std::vector<float>& series,
                                float scale, const std::string& reference,
                                const std::vector<std::string>& variants, int every,
                                std::ostream& progress) {
  if (series.empty()) throw std::invalid_argument("bench: the error run needs at least one step");
  if (every < 1) throw std::invalid_argument("bench: the error run samples every N >= 1 steps");
  if (variants.empty()) throw std::invalid_argument("bench: no variant to compare");
  const int steps = int(series.size());

  struct Run {
    std::unique_ptr<CudaWavefield> field;
    std::unique_ptr<PointSet> source;
  };
  auto start = [&](const std::string& name) {
    const VariantSelection chosen = find_variant(name, {}); // throws for unknown names
    Run run;
    run.field = std::make_unique<CudaWavefield>(setup, row_of(*chosen.kernel),
                                                combined(chosen.memory, config.memory), config.device);
    run.source = run.field->add_points({source}, steps);
    run.source->upload_series(series);
    return run;
  };
  Run ref = start(reference);
  std::vector<Run> runs;
  for (const std::string& v : variants) runs.push_back(start(v));

  ErrorVsSteps result;
  result.reference = reference;
  result.variants = variants;
  result.error.resize(variants.size());
  for (int n = 0; n < steps; ++n) {
    ref.source->inject(n, scale);
    ref.field->step();
    for (Run& r : runs) {
      r.source->inject(n, scale);
      r.field->step();
    }
    if ((n + 1) % every != 0 && n + 1 != steps) continue;
    // The reference's field is read on the other fields' streams; each comparison synchronises
    // its own stream, so no later step overwrites a field still being read.
    ref.field->synchronize();
    result.steps.push_back(n + 1);
    std::string line = "bench: error after " + std::to_string(n + 1) + " steps:";
    for (size_t v = 0; v < runs.size(); ++v) {
      const double e = relative_l2_difference(setup.layout, runs[v].field->current_field(),
                                              ref.field->current_field(), runs[v].field->stream());
      result.error[v].push_back(e);
      char text[96];
      std::snprintf(text, sizeof text, " %s %.2e", variants[v].c_str(), e);
      line += text;
    }
    progress << line << "\n" << std::flush;
  }
  return result;
}

} // namespace rtm::cuda
