#include "solvers/drivers/cpu_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>

#include "solvers/contracts/median.h"
#include "kernels/cpu/cpu_propagator.h"
#include "kernels/cpu/denormals.h"

namespace rtm {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double unit_random(uint64_t n) { return double(splitmix64(n) >> 11) * (1.0 / 9007199254740992.0); }

// An array of floats that is never initialised by the allocator, so the first touch (and with it
// the page's NUMA placement) happens in the parallel loop that fills it.
struct RawFloats {
  explicit RawFloats(int64_t n) : size(n), data(new float[size_t(n)]) {}
  ~RawFloats() { delete[] data; }
  RawFloats(const RawFloats&) = delete;
  RawFloats& operator=(const RawFloats&) = delete;
  int64_t size;
  float* data;
};

} // namespace

// The largest cache of cpu0 in bytes, from sysfs (0 if unknown). sysconf(_SC_LEVEL3_CACHE_SIZE)
// is not used: in virtual machines it can report ten times the real size.
int64_t largest_cache_bytes() {
  int64_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    int64_t bytes = std::atoll(text.c_str());
    const char unit = text.back();
    if (unit == 'K') bytes <<= 10;
    if (unit == 'M') bytes <<= 20;
    largest = std::max(largest, bytes);
  }
  return largest;
}

int64_t cpu_triad_elements(int64_t cells) {
  int64_t elements = int64_t(1) << 25;
  const int64_t cache = std::min(largest_cache_bytes(), int64_t(1) << 30);
  elements = std::max(elements, 4 * cache / int64_t(sizeof(float)));
  return std::max(elements, cells);
}

CpuTriad measure_cpu_triad(int64_t elements, int repeats) {
  if (elements < 1 || repeats < 1) throw std::invalid_argument("measure_cpu_triad: sizes must be positive");
  RawFloats a(elements), b(elements), c(elements);
  float* __restrict pa = a.data;
  float* __restrict pb = b.data;
  float* __restrict pc = c.data;
  // First touch with the same static schedule as the timed loop: each thread's pages are its own.
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < elements; ++n) {
    pa[n] = 0.0f;
    pb[n] = 1.0f;
    pc[n] = 2.0f;
  }
  const float s = 0.5f;
  std::vector<double> ms;
  for (int r = 0; r < repeats + 1; ++r) { // the first pass is a warm-up
    const double t0 = now_ms();
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < elements; ++n) pa[n] = pb[n] + s * pc[n];
    const double t1 = now_ms();
    if (r > 0) ms.push_back(t1 - t0);
  }
  // Use the result, so the loop cannot be dropped.
  if (pa[elements / 2] != 2.0f) throw std::logic_error("measure_cpu_triad: wrong triad result");
  CpuTriad t;
  t.elements = elements;
  t.ms_median = median(ms);
  t.gbs = 12.0 * double(elements) / (t.ms_median * 1e-3) / 1e9;
  return t;
}

std::vector<CpuStepRun> run_cpu_step_bench(int nx, int ny, int nz, int steps, int repeats,
                                           int warmup_steps, const std::vector<CpuStepIsa>& isas,
                                           std::ostream& progress) {
  if (nx < 1 || ny < 1 || nz < 1 || steps < 1 || repeats < 1 || warmup_steps < 0)
    throw std::invalid_argument("run_cpu_step_bench: sizes, steps and repeats must be positive");
  flush_denormals_on_all_threads(); // as every rtm run does (kernels/cpu/denormals.h)
  const GridLayout g = make_layout(nx, ny, nz);
  const double h = 10.0, v_min = 1500.0, v_max = 4500.0;
  const double dt = 0.4 * h / v_max; // well inside the 3D 8th-order CFL limit
  const LaplacianWeights w = make_laplacian_weights(h, h, h);
  const DampingProfiles no_damping;

  // Padded arrays (halos and padding zero, the interior random), like the propagator's:
  // std::vector, zeroed by this thread.
  auto fill = [&](std::vector<float>& a, uint64_t seed, double lo, double hi) {
    a.assign(size_t(g.size), 0.0f);
    float* p = a.data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const int64_t c = g.index(i, j, k);
          const double u = unit_random(uint64_t(c) ^ seed);
          p[c] = float(lo + (hi - lo) * u);
        }
  };
  std::vector<float> v2dt2;
  fill(v2dt2, 0xA5A5A5A5ull, v_min * v_min * dt * dt, v_max * v_max * dt * dt);
  std::vector<float> start_prev, start_cur;
  fill(start_prev, 0x1234ull, -1.0, 1.0);
  fill(start_cur, 0x5678ull, -1.0, 1.0);

  std::vector<CpuStepRun> runs;
  std::vector<float> reference_result;
  for (const CpuStepIsa isa : isas) {
    std::vector<float> prev = start_prev, cur = start_cur;
    auto run_steps = [&](int n) {
      for (int s = 0; s < n; ++s) {
        cpu_wave_step_isa(isa, g, w, v2dt2.data(), no_damping, cur.data(), prev.data());
        std::swap(prev, cur);
      }
    };
    progress << "rtm bench: cpu step (" << cpu_step_isa_name(isa) << "), " << warmup_steps << " warm-up + " << repeats
             << " x " << steps << " steps\n";
    // The comparison uses the warm-up steps plus the first repeat, from the same start.
    run_steps(warmup_steps);
    CpuStepRun run;
    run.isa = isa;
    for (int r = 0; r < repeats; ++r) {
      const double t0 = now_ms();
      run_steps(steps);
      run.ms_per_step.push_back((now_ms() - t0) / steps);
      if (r == 0) {
        if (reference_result.empty()) {
          reference_result = cur;
        } else {
          for (size_t n = 0; n < cur.size(); ++n)
            run.max_abs_diff = std::max(run.max_abs_diff, std::fabs(cur[n] - reference_result[n]));
        }
      }
    }
    run.ms_per_step_median = median(run.ms_per_step);
    runs.push_back(std::move(run));
  }
  return runs;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    return name;
  }
  return "unknown CPU";
}

} // namespace rtm
