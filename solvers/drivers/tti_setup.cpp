#include "solvers/drivers/tti_setup.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/tti_propagator.h"
#include "solvers/contracts/errors.h"
#include "solvers/contracts/format.h"
#include "solvers/drivers/slab_model.h"

#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/tti_backend.h"
#endif

namespace rtm {

TtiCoefficients compute_tti_coefficients(const SimulationGrid& sim) {
  if (sim.physics != Physics::tti) return {};
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
  // The shear taper's weights of the model planes these compute planes hold or repeat (a pure
  // function of the plane's index: a z-slab's are the whole model's).
  const int w_first = std::clamp(k_begin - sim.pad_z_lo, 0, m.nz - 1);
  const int w_end = std::clamp(k_end - 1 - sim.pad_z_lo, 0, m.nz - 1) + 1;
  static const ShearTaper kNoTaper;
  const ShearTaperPlanes weights(m, sim.shear_taper ? *sim.shear_taper : kNoTaper, w_first, w_end);
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
        const float* w = weights.plane(mk + z_first);
        const double delta = w ? tapered_delta(a.epsilon[src], a.delta[src], w[size_t(mj) * m.nx + mi])
                               : double(a.delta[src]);
        c.s[dst] = float(std::sqrt(1.0 + 2.0 * delta));
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

ShearTaperSummary shear_taper_summary(const VelocityModel& shape, const Anisotropy& a, int a_first,
                                      int z_begin, int z_end, const ShearTaper& taper) {
  const int64_t plane = int64_t(shape.nx) * shape.ny;
  ShearTaperSummary found;
  if (plane == 0 || a.epsilon.size() != a.delta.size() || a.epsilon.size() % size_t(plane) != 0) return found;
  const int a_end = a_first + int(a.epsilon.size() / size_t(plane));
  z_begin = std::max(z_begin, a_first);
  z_end = std::min(z_end, a_end);
  constexpr double kElliptic = 1e-3; // epsilon - delta below this: elliptic for the artefact's sake
  for (const Position& zyx : taper.points) {
    const int64_t c = shape.nearest_cell(zyx); // of the whole model: its plane decides whose it is
    const int k = int(c / plane);
    if (k < z_begin || k >= z_end) continue;
    const size_t local = size_t(c - int64_t(a_first) * plane);
    const double gap = double(a.epsilon[local]) - double(a.delta[local]);
    if (gap > kElliptic) {
      ++found.anisotropic.count;
      found.anisotropic.worst = std::max(found.anisotropic.worst, gap);
    }
  }
  found.cells = shear_tapered_cells(shape, a, a_first, z_begin, z_end, taper);
  return found;
}

ShearTaperSummary note_shear_taper(const VelocityModel& model, const ShearTaper& taper,
                                   std::ostream& info) {
  const Anisotropy& a = model.anisotropy;
  if (a.epsilon.size() != size_t(model.cells()) || a.delta.size() != size_t(model.cells()) ||
      taper.points.empty())
    return {};
  const ShearTaperSummary found = shear_taper_summary(model, a, 0, 0, model.nz, taper);
  note_shear_taper(found, taper, info);
  return found;
}

void note_shear_taper(const ShearTaperSummary& found, const ShearTaper& taper, std::ostream& info) {
  const size_t points = taper.points.size();
  if (taper.tapers()) {
    if (found.cells == 0) return;
    info << "rtm: TTI shear-artefact taper: delta blended towards epsilon within " << format_number(taper.radius)
         << " m (elliptic within " << format_number(0.5 * taper.radius) << " m) of the " << points
         << " source and receiver position(s), " << found.anisotropic.count << " of them where epsilon > delta";
    if (found.anisotropic.count > 0) info << " (up to epsilon - delta = " << found.anisotropic.worst << ")";
    info << ": " << found.cells
         << " model cell(s) changed (--shear-taper off keeps the model's delta; docs/physics.md, TTI, "
            "\"The shear artefact\")\n";
    return;
  }
  if (found.anisotropic.count == 0) return;
  info << "rtm: note: " << found.anisotropic.count << " of " << points
       << " source and receiver position(s) sit where epsilon > delta (up to epsilon - delta = "
       << found.anisotropic.worst
       << ") and --shear-taper is off: there a point excites the pseudo-acoustic shear artefact, which "
          "leaves grid-scale noise in TTI traces and images; the taper (--shear-taper on, the default) "
          "makes the medium elliptic around them (docs/physics.md, TTI, \"The shear artefact\")\n";
}

ShearTaperSummary set_shear_taper(SimulationGrid& sim, const SlabModel* part, MPI_Comm group,
                                  const ShearTaperOptions& options, std::vector<Position> points,
                                  std::ostream& info) {
  if (!physics_info(sim.physics).shear_taper) return {};
  auto taper = std::make_shared<const ShearTaper>(
      make_shear_taper(options, part ? part->shape : sim.model, std::move(points)));
  sim.shear_taper = taper;
  return part ? note_shear_taper(*part, *taper, group, info) : note_shear_taper(sim.model, *taper, info);
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
