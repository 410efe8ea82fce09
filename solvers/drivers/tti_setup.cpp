#include "solvers/drivers/tti_setup.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/cpu/tti_propagator.h"
#include "solvers/contracts/errors.h"


namespace rtm {

TtiCoefficients compute_tti_coefficients(const SimulationGrid& sim) {
  TtiCoefficients c;
  const VelocityModel& m = sim.model;
  if (m.anisotropy.empty()) return c;
  const Anisotropy& a = m.anisotropy;
  const GridLayout& g = sim.layout;
  const size_t cells = size_t(g.interior_cells());
  c.e.resize(cells);
  c.s.resize(cells);
  c.nx.resize(cells);
  c.ny.resize(cells);
  c.nz.resize(cells);
  c.hx = sim.hx();
  c.hy = sim.hy();
  c.hz = sim.hz();
  const double degree = 3.14159265358979323846 / 180.0;
#pragma omp parallel for collapse(2)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j) {
      const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1);
      const int mj = std::clamp(j - sim.pad_y_lo, 0, m.ny - 1);
      for (int i = 0; i < g.nx; ++i) {
        const int mi = std::clamp(i - sim.pad_x_lo, 0, m.nx - 1);
        const size_t src = (size_t(mk) * m.ny + mj) * m.nx + mi;
        const size_t dst = (size_t(k) * g.ny + j) * g.nx + i;
        const double theta = a.theta[src] * degree, phi = a.phi[src] * degree;
        c.e[dst] = float(1.0 + 2.0 * a.epsilon[src]);
        c.s[dst] = float(std::sqrt(1.0 + 2.0 * a.delta[src]));
        c.nx[dst] = float(std::sin(theta) * std::cos(phi));
        c.ny[dst] = float(std::sin(theta) * std::sin(phi));
        c.nz[dst] = float(std::cos(theta));
      }
    }
  return c;
}

namespace {

// The TTI step runs on the CPU reference: the CUDA TTI kernels (kernels/cuda/tti_step.cuh) are
// tested and benchmarked (`rtm bench --physics tti`) but not yet behind a Wavefield. An explicit
// --backend cuda is refused rather than quietly run on the CPU.
void choose_tti_backend(const BackendOptions& options, std::ostream& log) {
  if (options.backend == "cuda")
    throw InputError("--backend cuda with --physics tti: the CUDA TTI kernels are benchmarked by "
                     "`rtm bench --physics tti` but do not yet run modeling or migration; use "
                     "--backend cpu (or auto)");
  if (options.backend != "cpu" && options.backend != "auto")
    throw InputError("--backend " + options.backend + ": expected auto, cpu or cuda");
  if (options.backend == "auto" && cuda_usable())
    log << "rtm: note: --physics tti steps on the CPU reference (the CUDA TTI kernels are not yet "
           "behind a wavefield)\n";
}

} // namespace

std::unique_ptr<Wavefield> make_tti_wavefield(const PropagatorSetup& setup,
                                              const BackendOptions& options, std::ostream& log) {
  if (setup.tti.empty()) throw std::logic_error("make_tti_wavefield: the setup has no TTI coefficients");
  choose_tti_backend(options, log);
  return std::make_unique<CpuTtiWavefield>(setup);
}

std::unique_ptr<ShotFields> make_tti_shot_fields(const PropagatorSetup& setup,
                                                 const BackendOptions& options, std::ostream& log) {
  if (setup.tti.empty()) throw std::logic_error("make_tti_shot_fields: the setup has no TTI coefficients");
  choose_tti_backend(options, log);
  return std::make_unique<CpuTtiShotFields>(setup);
}

} // namespace rtm
