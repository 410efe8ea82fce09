// A shot's TTI fields on one GPU (kernels/cuda/tti/cuda_tti_shot_fields.cu) with their two wavefields
// named, for code that queues work on the wavefields' own streams: the GPU halo transports of a
// z-slab (halo_exchange_cuda.cu). Everyone else takes make_cuda_tti_shot_fields (tti_backend.h).
#pragma once

#include <memory>
#include <string>

#include "kernels/cuda/tti/cuda_tti_wavefield.cuh"
#include "solvers/contracts/shot_fields.h"

namespace rtm::cuda {

struct CudaTtiShot {
  std::unique_ptr<ShotFields> fields;
  CudaTtiWavefield* source = nullptr;   // fields->source(), owned by fields
  CudaTtiWavefield* receiver = nullptr; // fields->receiver(), owned by fields
};
// make_cuda_tti_shot_fields with the wavefields' types kept.
CudaTtiShot make_cuda_tti_shot(const PropagatorSetup& setup, const std::string& variant, int device);

} // namespace rtm::cuda
