// The instruction sets the CPU backend's row loops are compiled for (the step's, in
// kernels/cpu/cpu_propagator.cpp, and the C-PML's, in kernels/cpu/cpu_cpml.cpp). Each loop is
// compiled once per set and chosen once per process; all sets give bit-identical results (the same
// IEEE operations in the same order per cell, no fused multiply-add), so the choice changes the
// speed only. Defined in kernels/cpu/cpu_propagator.cpp.
#pragma once

namespace rtm {

enum class CpuStepIsa { baseline, avx2 }; // baseline: the build's own target (SSE2 on x86-64)
bool cpu_step_isa_available(CpuStepIsa isa);
const char* cpu_step_isa_name(CpuStepIsa isa);
CpuStepIsa best_cpu_step_isa();

} // namespace rtm
