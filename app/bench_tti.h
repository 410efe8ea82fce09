// `rtm bench --physics tti`: the CUDA TTI kernels (kernels/cuda/tti/tti_step.cuh) on a homogeneous
// tilted medium, with the memory roofline (the streaming kernel) measured in the same run and the
// compute roofline from the device's FP32 lanes and clock (docs/variants.md, TTI).
#pragma once

#include <vector>

namespace rtm::app {

// grid: NX, NY, NZ. Throws std::runtime_error without CUDA or a usable GPU.
void run_tti_bench_command(const std::vector<int>& grid, int steps, int repeats, int device);

} // namespace rtm::app
