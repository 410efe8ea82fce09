// A TTI setup's arrays on one GPU (solvers/contracts/tti.h): the per-cell coefficients padded like
// a scalar field, the damping profiles, the two field pairs and pass 1's scratch, with the step
// arguments of tti_step.cuh. Shared by the test and bench entry points (tti_device.cu) and the
// TTI wavefield (cuda_tti_wavefield.cuh).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/tti/tti_step.cuh"
#include "solvers/contracts/propagator.h"

namespace rtm::cuda {

struct DeviceTti {
  GridLayout g, t;
  TtiWeights w;
  DeviceArray<float> v2dt2, e, s, nx, ny, nz, dx, dy, dz, prev, cur, scratch;
  bool damped = false;
  bool free_surface = false; // the setup's: the image of p and q in the top halo before a step

  // On the current device; the fields start at zero (the scratch's halo cells stay zero for good). Returns
  // with every upload done. std::invalid_argument without TTI coefficients or with the C-PML.
  explicit DeviceTti(const PropagatorSetup& setup);
  // Device bytes the constructor allocates for a setup of scalar layout g (damping included).
  static size_t bytes(const GridLayout& g);

  // Pass 1 and 2 of planes [k_begin, k_end): cur -> prev.
  TtiStepArgs args(int k_begin, int k_end) const;
  // Pass 1 and 2 of planes [k_begin, k_end) queued on `stream`: with a free surface, the image
  // of p and q written into the top halo first when pass 1 reaches it (planes below 2 kHalo), and
  // the scratch's between the passes (solvers/contracts/tti_free_surface.h).
  void launch(const char* variant, int k_begin, int k_end, cudaStream_t stream);
  // One step: the new fields go where the previous were; then the two swap roles.
  void step(const char* variant, int k_begin, int k_end, cudaStream_t stream) {
    launch(variant, k_begin, k_end, stream);
    std::swap(prev, cur);
  }
};

} // namespace rtm::cuda
