// Host side of the CUDA TTI kernels (tti_backend.h): device copies of a setup, steps, the bench.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/cuda_stream.cuh"
#include "kernels/cuda/util/device_buffer.cuh"
#include "kernels/cuda/util/device_info.h"
#include "kernels/cuda/util/event_timer.cuh"
#include "kernels/cuda/fields/field_ops.cuh"
#include "kernels/cuda/tti_backend.h"
#include "kernels/cuda/tti/tti_device.cuh"
#include "solvers/contracts/median.h"
#include "solvers/contracts/tti_free_surface.h"

namespace rtm::cuda {
namespace {

std::vector<float> padded(const GridLayout& g, const std::vector<float>& dense) {
  std::vector<float> out(size_t(g.size), 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) out[size_t(g.index(i, j, k))] = dense[(size_t(k) * g.ny + j) * g.nx + i];
  return out;
}

} // namespace

DeviceTti::DeviceTti(const PropagatorSetup& setup)
    : g(setup.layout), t(tti_layout(setup.layout)),
      w(make_tti_weights(setup.tti.hx, setup.tti.hy, setup.tti.hz)),
      v2dt2(g.size, "TTI v2dt2"), e(g.size, "TTI E"), s(g.size, "TTI S"), nx(g.size, "TTI n_x"),
      ny(g.size, "TTI n_y"), nz(g.size, "TTI n_z"), prev(t.size, "TTI previous fields"),
      cur(t.size, "TTI current fields"),
      scratch(kTtiScratchArrays * t.size, "TTI pass-1 scratch") {
  if (setup.tti.empty()) throw std::invalid_argument("CUDA TTI: the setup has no TTI coefficients");
  if (!setup.cpml.empty()) throw std::invalid_argument("CUDA TTI: the C-PML is not available for TTI");
  if (setup.free_surface && g.nz < kTtiFreeSurfaceMinPlanes)
    throw std::invalid_argument("CUDA TTI: the free surface needs at least 3 planes");
  v2dt2.upload(padded(g, setup.v2dt2));
  e.upload(padded(g, setup.tti.e));
  s.upload(padded(g, setup.tti.s));
  {
    std::vector<float> axis_x = padded(g, setup.tti.nx), axis_y = padded(g, setup.tti.ny),
                       axis_z = padded(g, setup.tti.nz);
    if (setup.free_surface) mirror_tti_axis_into_surface_halo(g, axis_x.data(), axis_y.data(), axis_z.data());
    nx.upload(axis_x);
    ny.upload(axis_y);
    nz.upload(axis_z);
  }
  CUDA_CHECK(cudaMemset(scratch.data(), 0, scratch.bytes())); // its halo cells stay zero
  CUDA_CHECK(cudaMemset(prev.data(), 0, prev.bytes()));
  CUDA_CHECK(cudaMemset(cur.data(), 0, cur.bytes()));
  damped = !setup.damping.empty();
  free_surface = setup.free_surface;
  if (damped) {
    dx = DeviceArray<float>(g.nx, "TTI damping x");
    dy = DeviceArray<float>(g.ny, "TTI damping y");
    dz = DeviceArray<float>(g.nz, "TTI damping z");
    dx.upload(setup.damping.x);
    dy.upload(setup.damping.y);
    dz.upload(setup.damping.z);
  }
  CUDA_CHECK(cudaDeviceSynchronize()); // the memsets before work on other streams
}

void DeviceTti::launch(const char* variant, int k_begin, int k_end, cudaStream_t stream) {
  // Pass 1 reaches the top halo from planes below kHalo: the fields' image first, as the CPU
  // reference (kernels/cpu/tti_propagator.cpp); the scratch's follows pass 1 (launch_tti_step).
  if (free_surface && k_begin < 2 * kHalo) {
    mirror_free_surface(t, cur.data(), Storage::fp32, stream);
    mirror_free_surface(t, cur.data() + tti_q_offset(t), Storage::fp32, stream);
  }
  launch_tti_step(args(k_begin, k_end), variant, stream);
}

size_t DeviceTti::bytes(const GridLayout& g) {
  const GridLayout t = tti_layout(g);
  return sizeof(float) * (6 * size_t(g.size) + (2 + kTtiScratchArrays) * size_t(t.size) + size_t(g.nx + g.ny + g.nz));
}

TtiStepArgs DeviceTti::args(int k_begin, int k_end) const {
  TtiStepArgs a;
  a.g = g;
  a.t = t;
  a.w = w;
  a.cur = cur.data();
  a.prev_next = prev.data();
  a.scratch = scratch.data();
  a.v2dt2 = v2dt2.data();
  a.e = e.data();
  a.s = s.data();
  a.nx = nx.data();
  a.ny = ny.data();
  a.nz = nz.data();
  if (damped) {
    a.damp_x = dx.data();
    a.damp_y = dy.data();
    a.damp_z = dz.data();
  }
  a.k_begin = k_begin;
  a.k_end = k_end;
  a.free_surface = free_surface;
  return a;
}

namespace {

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += double(a[i] - b[i]) * (a[i] - b[i]);
    den += double(b[i]) * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

} // namespace

std::vector<std::string> tti_variant_names() {
  return std::vector<std::string>(std::begin(kTtiVariants), std::end(kTtiVariants));
}

bool is_tti_variant(const std::string& name) {
  for (const char* v : kTtiVariants)
    if (name == v) return true;
  return false;
}

TtiState run_tti_steps(const PropagatorSetup& setup, const std::string& variant, const TtiState& start,
                       int steps, int k_begin, int k_end, int device) {
  CUDA_CHECK(cudaSetDevice(device));
  DeviceTti d(setup);
  if (k_end < 0) k_end = d.g.nz;
  d.prev.upload(start.prev);
  d.cur.upload(start.cur);
  Stream stream;
  for (int n = 0; n < steps; ++n) d.step(variant.c_str(), k_begin, k_end, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return {d.prev.download(), d.cur.download()};
}

TtiBench run_tti_bench(const PropagatorSetup& setup, int steps, int repeats, int device) {
  if (steps < 1 || repeats < 1) throw std::invalid_argument("run_tti_bench: steps and repeats must be positive");
  CUDA_CHECK(cudaSetDevice(device));
  TtiBench bench;
  const int64_t cells = setup.layout.interior_cells();
  bench.flops_per_cell = kTtiFlopsPerCell;
  // Ideal traffic per cell and step: pass 1 reads p, q, n (5 floats) and writes u, w_x, w_y, w_z
  // of both fields (8); pass 2 reads p, q, those 8, n (3), p and q of step n-1, v2dt2, E, S (18)
  // and writes p, q (2).
  bench.bytes_per_cell = 4.0 * (5 + 8 + 18 + 2);
  const DeviceInfo info = query_device(device);
  bench.peak_fp32_gflops = info.sm_clock_khz > 0 ? double(info.sm_count) * 128 * 2 * info.sm_clock_khz * 1e3 / 1e9 : 0;
  bench.streaming = measure_streaming_limit(cells, repeats, device);

  // Random fields (a small amplitude: the random-medium steps stay finite for the timed steps).
  std::vector<float> prev(size_t(tti_layout(setup.layout).size), 0.0f), cur = prev;
  const GridLayout t = tti_layout(setup.layout);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24) - 0.5f;
  };
  for (int k = 0; k < t.nz; ++k)
    for (int j = 0; j < t.ny; ++j)
      for (int i = 0; i < t.nx; ++i)
        for (int64_t f : {t.index(i, j, k), t.index(i, j, k) + tti_q_offset(t)}) {
          prev[size_t(f)] = next();
          cur[size_t(f)] = next();
        }
  std::vector<float> reference;
  for (const char* variant : kTtiVariants) {
    DeviceTti d(setup);
    d.prev.upload(prev);
    d.cur.upload(cur);
    Stream stream;
    const std::vector<double> ms = time_launches(stream, {1, repeats}, [&] {
      for (int n = 0; n < steps; ++n) d.step(variant, 0, d.g.nz, stream);
    });
    TtiBenchRun run;
    run.variant = variant;
    run.ms_per_step = median(ms) / steps;
    run.gcells_per_s = double(cells) / (run.ms_per_step * 1e-3) / 1e9;
    // Same start and same number of steps (warm-up included) for every variant.
    const std::vector<float> final_state = d.cur.download();
    if (reference.empty()) reference = final_state;
    else run.error = relative_l2(final_state, reference);
    bench.runs.push_back(run);
  }
  return bench;
}

} // namespace rtm::cuda
