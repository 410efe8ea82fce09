#include "app/bench_tti.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "solvers/contracts/tti.h"
#include "solvers/drivers/backend.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/simulation.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/tti_backend.h"
#endif

namespace rtm::app {

void run_tti_bench_command(const std::vector<int>& grid, int steps, int repeats, int device) {
#ifndef RTM_HAVE_CUDA
  (void)grid, (void)steps, (void)repeats, (void)device;
  throw std::runtime_error("rtm bench --physics tti runs the CUDA TTI kernels, and this build of rtm has "
                           "none (configured without a CUDA compiler)");
#else
  std::string why;
  if (!cuda_usable(&why)) throw std::runtime_error("rtm bench --physics tti: no usable GPU (" + why + ")");
  // A homogeneous tilted medium, no absorbing layers: every cell does the same work.
  VelocityModel model = constant_model(ModelShape{grid[0], grid[1], grid[2], 10, 10, 10}, 2000);
  const size_t n = size_t(model.cells());
  model.anisotropy.epsilon.assign(n, 0.2f);
  model.anisotropy.delta.assign(n, 0.1f);
  model.anisotropy.theta.assign(n, 30.0f);
  model.anisotropy.phi.assign(n, 40.0f);
  BoundaryConfig none;
  none.width = 0;
  none.absorber = Absorber::sponge;
  const PropagatorSetup setup = make_propagator_setup(make_simulation_grid(model, none, 0.0));
  const cuda::TtiBench b = cuda::run_tti_bench(setup, steps, repeats, device);
  std::printf("TTI grid %dx%dx%d, %d x %d steps; %.0f flops and %.0f bytes (ideal) per cell and step\n",
              grid[0], grid[1], grid[2], repeats, steps, b.flops_per_cell, b.bytes_per_cell);
  std::printf("memory roofline (streaming kernel, this run): %.1f GB/s; compute roofline (FP32 peak): "
              "%.0f GFLOP/s\n",
              b.streaming.gbs, b.peak_fp32_gflops);
  std::printf("%-14s %9s %9s %9s %10s %12s %13s %9s %11s\n", "variant", "Gcells/s", "ms/step", "GB/s",
              "GFLOP/s", "of_memory", "of_compute", "speedup", "error");
  for (const cuda::TtiBenchRun& r : b.runs) {
    const double gbs = r.gcells_per_s * b.bytes_per_cell, gflops = r.gcells_per_s * b.flops_per_cell;
    std::printf("%-14s %9.2f %9.4f %9.0f %10.0f %12.3f %13.3f %9.2f %11.2e\n", r.variant.c_str(),
                r.gcells_per_s, r.ms_per_step, gbs, gflops, gbs / b.streaming.gbs,
                b.peak_fp32_gflops > 0 ? gflops / b.peak_fp32_gflops : 0.0,
                b.runs.front().ms_per_step / r.ms_per_step, r.error);
  }
  std::printf("the binding roofline is the larger fraction; %.2f flops per ideal byte against the "
              "device's %.1f\n",
              b.flops_per_cell / b.bytes_per_cell, b.peak_fp32_gflops / b.streaming.gbs);
#endif
}

} // namespace rtm::app
