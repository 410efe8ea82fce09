// `--variant auto`: the float32 kernel that runs fastest on this very grid (docs/variants.md,
// "Choosing a variant").
#pragma once

#include <iosfwd>
#include <memory>

#include "kernels/cuda/fields/cuda_propagator.cuh"

namespace rtm::cuda {

// Times every auto candidate of the variant table for this GPU (auto_candidates()) for a few
// steps on this grid, on random wavefields, switching kernels on the same buffers, and returns the
// propagator running the fastest, from rest. Says which it chose, with the times, on `log` when given.
std::unique_ptr<CudaWavefield> make_fastest(const PropagatorSetup& setup,
                                             const MemoryOptions& options, int device,
                                             std::ostream* log);

} // namespace rtm::cuda
