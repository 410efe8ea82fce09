#include "solvers/drivers/tti_setup.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/tti_propagator.h"
#include "solvers/contracts/errors.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/tti_backend.h"
#endif

namespace rtm {

TtiCoefficients compute_tti_coefficients(const SimulationGrid& sim) {
  if (sim.model.anisotropy.empty()) return {};
  return compute_tti_coefficient_planes(sim, sim.model, 0, 0, sim.layout.nz);
}

TtiCoefficients compute_tti_coefficient_planes(const SimulationGrid& sim, const VelocityModel& planes,
                                               int z_first, int k_begin, int k_end) {
  TtiCoefficients c;
  const VelocityModel& m = sim.model; // the whole model's shape
  const Anisotropy& a = planes.anisotropy;
  const GridLayout& g = sim.layout;
  const size_t cells = size_t(k_end - k_begin) * size_t(g.ny) * size_t(g.nx);
  for (int k = k_begin; k < k_end; ++k) {
    const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1) - z_first;
    if (mk < 0 || mk >= planes.nz)
      throw std::logic_error("compute_tti_coefficient_planes: model plane " + std::to_string(mk + z_first) +
                             " is not among the planes held");
  }
  if (a.epsilon.size() != size_t(planes.cells()))
    throw std::logic_error("compute_tti_coefficient_planes: the planes have no anisotropy");
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
  for (int k = k_begin; k < k_end; ++k)
    for (int j = 0; j < g.ny; ++j) {
      const int mk = std::clamp(k - sim.pad_z_lo, 0, m.nz - 1) - z_first;
      const int mj = std::clamp(j - sim.pad_y_lo, 0, m.ny - 1);
      for (int i = 0; i < g.nx; ++i) {
        const int mi = std::clamp(i - sim.pad_x_lo, 0, m.nx - 1);
        const size_t src = (size_t(mk) * m.ny + mj) * m.nx + mi;
        const size_t dst = (size_t(k - k_begin) * g.ny + j) * g.nx + i;
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

// Where a TTI run steps: on the GPU (the CUDA TTI wavefield, kernels/cuda/tti_backend.h) when
// --backend resolves to cuda, with --variant auto taking tti-pipelined; else the CPU reference.
// An acoustic variant name is refused here: it names a kernel of the other wave equation.
struct TtiChoice {
  bool gpu = false;
  std::string variant; // a TTI variant name when gpu
};

TtiChoice choose_tti_backend(const BackendOptions& options, std::ostream& log) {
  const bool named = options.variant != "auto" && options.variant != "cpu";
#ifdef RTM_HAVE_CUDA
  if (named && !cuda::is_tti_variant(options.variant))
    throw InputError("--variant " + options.variant +
                     " with --physics tti: expected auto, cpu, tti-pipelined or tti-naive (the TTI "
                     "step's kernels; the other variant names are the acoustic step's)");
#else
  if (named)
    throw InputError("--variant '" + options.variant +
                     "': this build of rtm has no CUDA kernels (configured without a CUDA compiler); "
                     "expected auto or cpu");
#endif
  TtiChoice choice;
  if (resolve_backend(options.backend, log) == "cpu") {
    if (named) log << "rtm: --variant " << options.variant << " applies to the CUDA backend only; ignored\n";
    return choice;
  }
  if (options.variant == "cpu")
    throw InputError("--variant cpu runs the CPU reference, but --backend chose cuda; use --backend cpu, "
                     "or --variant auto, tti-pipelined or tti-naive");
  if (options.compressible || options.l2_persist)
    log << "rtm: --compressible and --l2-persist apply to the acoustic kernels only; ignored with "
           "--physics tti\n";
  choice.gpu = true;
#ifdef RTM_HAVE_CUDA
  choice.variant = options.variant == "auto" ? cuda::kDefaultTtiVariant : options.variant;
#endif
  return choice;
}

} // namespace

ShearArtefactPoints shear_artefact_points(const VelocityModel& shape, const Anisotropy& a, int a_first,
                                          int z_begin, int z_end, const std::vector<Position>& points) {
  const int64_t plane = int64_t(shape.nx) * shape.ny;
  ShearArtefactPoints found;
  if (plane == 0 || a.epsilon.size() != a.delta.size() || a.epsilon.size() % size_t(plane) != 0) return found;
  const int a_end = a_first + int(a.epsilon.size() / size_t(plane));
  z_begin = std::max(z_begin, a_first);
  z_end = std::min(z_end, a_end);
  constexpr double kElliptic = 1e-3; // epsilon - delta below this: elliptic for the artefact's sake
  for (const Position& zyx : points) {
    const int64_t c = shape.nearest_cell(zyx); // of the whole model: its plane decides whose it is
    const int k = int(c / plane);
    if (k < z_begin || k >= z_end) continue;
    const size_t local = size_t(c - int64_t(a_first) * plane);
    const double gap = double(a.epsilon[local]) - double(a.delta[local]);
    if (gap > kElliptic) {
      ++found.count;
      found.worst = std::max(found.worst, gap);
    }
  }
  return found;
}

size_t note_shear_artefact_at_points(const VelocityModel& model, const std::vector<Position>& points,
                                     std::ostream& info) {
  const Anisotropy& a = model.anisotropy;
  if (a.epsilon.size() != size_t(model.cells()) || a.delta.size() != size_t(model.cells()) || points.empty())
    return 0;
  const ShearArtefactPoints found = shear_artefact_points(model, a, 0, 0, model.nz, points);
  note_shear_artefact(found, points.size(), info);
  return found.count;
}

void note_shear_artefact(const ShearArtefactPoints& found, size_t points, std::ostream& info) {
  if (found.count == 0) return;
  info << "rtm: note: " << found.count << " of " << points
       << " sources and receivers sit where epsilon > delta (up to epsilon - delta = " << found.worst
       << "): there a point excites the pseudo-acoustic shear artefact, which leaves grid-scale noise in "
          "TTI traces and images; make the model elliptic (delta = epsilon) around the acquisition, "
          "e.g. in the layer that holds it (docs/physics.md, TTI, \"The shear artefact\")\n";
}

TtiBackend tti_backend(const BackendOptions& options, std::ostream& log) {
  const TtiChoice choice = choose_tti_backend(options, log);
  if (!choice.gpu) return {"cpu", ""};
  return {"cuda", choice.variant};
}

std::unique_ptr<Wavefield> make_tti_wavefield(const PropagatorSetup& setup,
                                              const BackendOptions& options, std::ostream& log) {
  if (setup.tti.empty()) throw std::logic_error("make_tti_wavefield: the setup has no TTI coefficients");
  const TtiChoice choice = choose_tti_backend(options, log);
#ifdef RTM_HAVE_CUDA
  if (choice.gpu) return cuda::make_cuda_tti_wavefield(setup, choice.variant, options.device);
#endif
  return std::make_unique<CpuTtiWavefield>(setup);
}

std::unique_ptr<ShotFields> make_tti_shot_fields(const PropagatorSetup& setup,
                                                 const BackendOptions& options, std::ostream& log) {
  if (setup.tti.empty()) throw std::logic_error("make_tti_shot_fields: the setup has no TTI coefficients");
  const TtiChoice choice = choose_tti_backend(options, log);
#ifdef RTM_HAVE_CUDA
  if (choice.gpu) return cuda::make_cuda_tti_shot_fields(setup, choice.variant, options.device);
#endif
  return std::make_unique<CpuTtiShotFields>(setup);
}

} // namespace rtm
