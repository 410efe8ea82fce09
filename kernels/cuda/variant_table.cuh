// The variant table as the CUDA side sees it: each public VariantInfo row plus the launcher and
// the storage type it needs. Defined once, in variant_table.cu.
#pragma once

#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/wave_step.cuh"

namespace rtm::cuda {

struct VariantRow {
  VariantInfo info;
  Storage storage = Storage::fp32;
  StepLauncher launch = nullptr;
};

const std::vector<VariantRow>& variant_rows();
// The row called `name`; throws std::invalid_argument naming the known variants otherwise.
const VariantRow& find_variant_row(const std::string& name);
// Rows that `--variant auto` times: the float32 kernels without memory presets (fp16 storage
// changes the answer, so it is chosen only by name; memory options come from the command line).
std::vector<const VariantRow*> auto_candidates();

} // namespace rtm::cuda
