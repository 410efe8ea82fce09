// The C-PML on a GPU (solvers/contracts/cpml.h has the equations and the per-cell arithmetic, shared with the
// CPU reference): the coefficients and memory variables in device memory, and the one pass per
// region a step adds after the variant's undamped step (kernels/cuda/fields/cpml.cu). The variants
// themselves know nothing of it.
#pragma once

#include <cuda_runtime.h>

#include "solvers/contracts/cpml.h"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {

class DeviceCpml {
public:
  DeviceCpml() = default;
  // Uploads the coefficients and allocates zeroed memory variables (nothing when c is empty).
  DeviceCpml(const CpmlProfiles& c, const GridLayout& g, int device, cudaStream_t stream);
  bool active() const { return active_; }
  // Device bytes a propagator with these profiles allocates for the C-PML.
  static size_t bytes(const CpmlProfiles& c, const GridLayout& g);

  void zero(cudaStream_t stream); // memory variables back to 0
  void swap() { old_ = 1 - old_; } // after a whole step: psi[n] becomes psi[n-1]
  // The C-PML's update (psi[n] stored, zeta updated, p_next corrected) on the layer cells of planes
  // k_begin <= k < k_end (whole-grid indices and unshifted pointers), after the undamped step has
  // written p_next there: a few launches per region (kernels/cuda/fields/cpml.cu; 9 with layers on
  // every face). Checked launches.
  void apply(Storage storage, const void* p_cur, const void* v2dt2, void* p_next, int k_begin,
             int k_end, cudaStream_t stream);

private:
  bool active_ = false;
  GridLayout layout_;
  CpmlProfiles host_; // n, lo, hi, h per axis (the coefficients also on the device)
  DeviceBuffer a_[3], b_[3], psi_[2][3], zeta_[3];
  int old_ = 0;
};

} // namespace rtm::cuda
