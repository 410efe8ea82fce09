// The variant table as the CUDA side sees it: each public VariantInfo row plus the launcher and
// the storage type it needs. Defined once, in variant_table.cu.
#pragma once

#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/steps/wave_step.cuh"

namespace rtm::cuda {

struct VariantRow {
  VariantInfo info;
  Storage storage = Storage::fp32; // the wavefields, and the v2dt2 every other operation reads
  // The v2dt2 the step kernel reads: `storage` for most rows; where it differs, the propagator
  // also holds a copy of v2dt2 in this type for the kernel (half_v2dt2: float fields, half model).
  Storage kernel_model = Storage::fp32;
  StepLauncher launch = nullptr;
};

// One row per kernel, in the order of variant_table().
const std::vector<VariantRow>& variant_rows();
// The row of a kernel of variant_table() (the same object, not a name looked up again).
const VariantRow& row_of(const VariantInfo& kernel);

} // namespace rtm::cuda
