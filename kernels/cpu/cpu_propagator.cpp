#include "kernels/cpu/cpu_propagator.h"

#include "kernels/cpu/denormals.h"
#include "solvers/contracts/free_surface.h"
#include "solvers/contracts/ring_codec.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__GNUC__)
#define RTM_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define RTM_ALWAYS_INLINE inline
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define RTM_X86_DISPATCH 1
#endif

namespace rtm {

namespace {

// One row of the step, x = 0 .. nx-1. Pointers are to cell (0, j, k); the row loop is written so
// the compiler vectorises it (restrict pointers, no branch inside). This is the step's arithmetic,
// the one place it is written for the CPU.
template <bool kDamped>
RTM_ALWAYS_INLINE void step_row(int nx, int64_t sy, int64_t sz, const LaplacianWeights& w,
                                const float* __restrict p_cur, float* __restrict p_prev_next,
                                const float* __restrict v2dt2, const float* __restrict damp_x,
                                float damp_yz) {
#pragma omp simd
  for (int i = 0; i < nx; ++i) {
    const float* c = p_cur + i;
    float lap = w.c0 * c[0];
    for (int r = 1; r <= kHalo; ++r) {
      lap += w.wx[r] * (c[-r] + c[r]);
      lap += w.wy[r] * (c[-r * sy] + c[r * sy]);
      lap += w.wz[r] * (c[-r * sz] + c[r * sz]);
    }
    const float undamped = 2.0f * c[0] - p_prev_next[i] + v2dt2[i] * lap;
    if constexpr (kDamped) {
      const float e = damp_x[i] + damp_yz;
      // (2p - (1-e) p_prev + v2dt2 lap) / (1+e), written as a correction of the undamped value
      p_prev_next[i] = (undamped + e * p_prev_next[i]) / (1.0f + e);
    } else {
      p_prev_next[i] = undamped;
    }
  }
}

// The arguments of one step, shared by every row.
struct StepArgs {
  const GridLayout& g;
  const LaplacianWeights& w;
  const float* v2dt2;
  const DampingProfiles& damping;
  const float* p_cur;
  float* p_prev_next;
};

// Row j of plane k.
RTM_ALWAYS_INLINE void step_row_at(const StepArgs& a, int j, int k) {
  const GridLayout& g = a.g;
  const int64_t row = g.index(0, j, k);
  if (!a.damping.empty())
    step_row<true>(g.nx, g.pitch, g.plane, a.w, a.p_cur + row, a.p_prev_next + row, a.v2dt2 + row,
                   a.damping.x.data(), a.damping.y[size_t(j)] + a.damping.z[size_t(k)]);
  else
    step_row<false>(g.nx, g.pitch, g.plane, a.w, a.p_cur + row, a.p_prev_next + row, a.v2dt2 + row,
                    nullptr, 0.0f);
}

// The row compiled twice: for the build's baseline instruction set and, on x86, for AVX2 (8 floats
// per instruction instead of SSE's 4). AVX2 without FMA: every lane performs the same IEEE
// operations in the same order as the baseline code, so both give bit-identical results (no
// multiply-add can be fused: FMA is not enabled). Measured on the 2-core development machine
// (docs/variants.md, "The CPU backend"; docs/results/cpu.md): AVX2 is about 1.2x the baseline
// per core.
void step_row_baseline(const StepArgs& a, int j, int k) { step_row_at(a, j, k); }
#ifdef RTM_X86_DISPATCH
__attribute__((target("avx2"))) void step_row_avx2(const StepArgs& a, int j, int k) {
  step_row_at(a, j, k);
}
#endif

using StepRow = void (*)(const StepArgs&, int, int);

StepRow step_row_of(CpuStepIsa isa) {
#ifdef RTM_X86_DISPATCH
  if (isa == CpuStepIsa::avx2) return &step_row_avx2;
#endif
  (void)isa;
  return &step_row_baseline;
}

// Adds the wall time from construction to destruction to `total_ms`, when timing is on.
class OpClock {
public:
  OpClock(bool on, double& total_ms) : total_ms_(on ? &total_ms : nullptr) {
    if (total_ms_) start_ = std::chrono::steady_clock::now();
  }
  ~OpClock() {
    if (total_ms_)
      *total_ms_ +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  OpClock(const OpClock&) = delete;
  OpClock& operator=(const OpClock&) = delete;

private:
  double* total_ms_;
  std::chrono::steady_clock::time_point start_{};
};

} // namespace

bool cpu_step_isa_available(CpuStepIsa isa) {
  if (isa == CpuStepIsa::baseline) return true;
#ifdef RTM_X86_DISPATCH
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

const char* cpu_step_isa_name(CpuStepIsa isa) { return isa == CpuStepIsa::avx2 ? "avx2" : "baseline"; }

CpuStepIsa best_cpu_step_isa() {
  return cpu_step_isa_available(CpuStepIsa::avx2) ? CpuStepIsa::avx2 : CpuStepIsa::baseline;
}

void cpu_wave_step_isa(CpuStepIsa isa, const GridLayout& g, const LaplacianWeights& w,
                       const float* v2dt2, const DampingProfiles& damping, const float* p_cur,
                       float* p_prev_next, int k_begin, int k_end, const CpmlView* cpml) {
  if (!cpu_step_isa_available(isa))
    throw std::invalid_argument(std::string("cpu_wave_step_isa: this CPU cannot run ") +
                                cpu_step_isa_name(isa));
  const StepRow step_row_isa = step_row_of(isa);
  if (k_end < 0) k_end = g.nz;
  const StepArgs args{g, w, v2dt2, damping, p_cur, p_prev_next};
#pragma omp parallel
  {
    // Every thread that steps flushes subnormals (kernels/cpu/denormals.h): the pool's workers were
    // set at start-up, this covers threads created since by anyone else. One register write.
    flush_denormals_on_this_thread();
    if (!cpml) {
#pragma omp for collapse(2) schedule(static)
      for (int k = k_begin; k < k_end; ++k)
        for (int j = 0; j < g.ny; ++j) step_row_isa(args, j, k);
    } else {
      // With the C-PML each thread walks its own contiguous planes, as a z slab would, and corrects
      // each row right after stepping it, while the row is in cache; psi[n] is stored ahead of the
      // rows that read it (CpuCpmlPlanes, kernels/cpu/cpu_cpml.h). No thread waits for another.
      CpuCpmlPlanes layers(isa, g, *cpml, p_cur, v2dt2, p_prev_next, k_begin, k_end);
      for (int k = layers.k0(); k < layers.k1(); ++k) {
        layers.ahead(k);
        for (int j = 0; j < g.ny; ++j) {
          step_row_isa(args, j, k);
          layers.correct_row(j, k);
        }
      }
    }
  }
}

void cpu_wave_step(const GridLayout& g, const LaplacianWeights& w, const float* v2dt2,
                   const DampingProfiles& damping, const float* p_cur, float* p_prev_next,
                   int k_begin, int k_end, const CpmlView* cpml) {
  static const CpuStepIsa best = best_cpu_step_isa();
  cpu_wave_step_isa(best, g, w, v2dt2, damping, p_cur, p_prev_next, k_begin, k_end, cpml);
}

std::vector<float> pad_array(const GridLayout& g, const std::vector<float>& dense) {
  if (int64_t(dense.size()) != g.interior_cells())
    throw std::invalid_argument("pad_array: expected " + std::to_string(g.interior_cells()) +
                                " values, got " + std::to_string(dense.size()));
  std::vector<float> padded(g.size, 0.0f);
#pragma omp parallel for collapse(2)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        padded[g.index(i, j, k)] = dense[(int64_t(k) * g.ny + j) * g.nx + i];
  return padded;
}

std::vector<float> unpad_array(const GridLayout& g, const std::vector<float>& padded) {
  std::vector<float> dense(g.interior_cells());
#pragma omp parallel for collapse(2)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        dense[(int64_t(k) * g.ny + j) * g.nx + i] = padded[g.index(i, j, k)];
  return dense;
}

CpuWavefield::CpuWavefield(PropagatorSetup setup)
    : Wavefield(setup.layout), setup_(std::move(setup)) {
  // Subnormals would slow every step of a decaying wavefield many times over (kernels/cpu/denormals.h);
  // set here too, for programs that build a wavefield without going through rtm's main().
  flush_denormals_on_all_threads();
  const GridLayout& g = setup_.layout;
  v2dt2_ = pad_array(g, setup_.v2dt2);
  const DampingProfiles& d = setup_.damping;
  if (!d.empty() && (int(d.x.size()) != g.nx || int(d.y.size()) != g.ny || int(d.z.size()) != g.nz))
    throw std::invalid_argument("CpuWavefield: damping profiles must have nx, ny, nz entries");
  const CpmlProfiles& c = setup_.cpml;
  if (!c.empty()) {
    if (c.x.n != g.nx || c.y.n != g.ny || c.z.n != g.nz)
      throw std::invalid_argument("CpuWavefield: C-PML profiles must be for an nx x ny x nz grid");
    if (!d.empty()) throw std::invalid_argument("CpuWavefield: a grid has the sponge or the C-PML, not both");
    cpml_ = CpmlMemory(c, g);
  }
  prev_.assign(g.size, 0.0f);
  cur_.assign(g.size, 0.0f);
}

void CpuWavefield::do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
  prev_ = p_prev;
  cur_ = p_cur;
  cpml_.zero();
}

void CpuWavefield::do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  p_prev = prev_;
  p_cur = cur_;
}

void CpuWavefield::zero_state() {
  std::fill(prev_.begin(), prev_.end(), 0.0f);
  std::fill(cur_.begin(), cur_.end(), 0.0f);
  cpml_.zero();
}

void CpuWavefield::do_step_planes(int k_begin, int k_end) {
  const GridLayout& g = setup_.layout;
  const OpClock timed(timing_on_, timing_.step_ms);
  // Planes 0 .. kHalo-1 read the top halo: the surface's image first (idempotent: it reads
  // interior planes of p[n], which no part of this step writes).
  if (setup_.free_surface && k_begin < kHalo) mirror_free_surface(g, cur_.data());
  const CpmlView cpml = cpml_.view(setup_.cpml, g); // unused without the C-PML
  cpu_wave_step(g, setup_.weights, v2dt2_.data(), setup_.damping, cur_.data(), prev_.data(),
                k_begin, k_end, setup_.cpml.empty() ? nullptr : &cpml);
}

void CpuWavefield::finish_step() {
  if (timing_on_) ++timing_.steps;
  std::swap(prev_, cur_);
  cpml_.swap();
}

PlaneSpan CpuWavefield::do_next_field_planes(int k_begin, int k_end) {
  const GridLayout& g = setup_.layout;
  PlaneSpan span;
  span.data = prev_.data() + g.index(-kHalo, -kHalo, k_begin);
  span.bytes = size_t(k_end - k_begin) * size_t(g.plane) * sizeof(float);
  return span;
}

void CpuWavefield::reverse_time() {
  std::swap(prev_, cur_);
  cpml_.zero();
}

void CpuWavefield::do_copy_current(const Box& box, std::vector<float>& dense) const {
  const OpClock timed(timing_on_, timing_.box_copy_ms);
  dense.resize(size_t(box.cells()));
  const GridLayout& g = layout();
#pragma omp parallel for collapse(2)
  for (int k = box.z0; k < box.z1; ++k)
    for (int j = box.y0; j < box.y1; ++j) {
      float* row = dense.data() + (size_t(k - box.z0) * box.ny() + (j - box.y0)) * box.nx();
      std::copy_n(cur_.data() + g.index(box.x0, j, k), box.nx(), row);
    }
}

void CpuWavefield::do_set_current(const Box& box, const std::vector<float>& dense) {
  const OpClock timed(timing_on_, timing_.box_copy_ms);
  const GridLayout& g = layout();
#pragma omp parallel for collapse(2)
  for (int k = box.z0; k < box.z1; ++k)
    for (int j = box.y0; j < box.y1; ++j) {
      const float* row = dense.data() + (size_t(k - box.z0) * box.ny() + (j - box.y0)) * box.nx();
      std::copy_n(row, box.nx(), cur_.data() + g.index(box.x0, j, k));
    }
}

void CpuWavefield::enable_timing(bool on) {
  if (on) timing_ = PropagatorTiming{};
  timing_on_ = on;
}

FieldHealth CpuWavefield::check_health() const {
  const GridLayout& g = layout();
  WorstCell worst;
#pragma omp parallel
  {
    WorstCell mine;
#pragma omp for schedule(static)
    for (int k = 0; k < g.nz; ++k) mine.merge(worst_cell_in_planes(g, cur_.data(), k, k + 1));
#pragma omp critical(rtm_check_health)
    worst.merge(mine); // merge() breaks ties by index, so the result does not depend on threads
  }
  return field_health_of(g, cur_.data(), worst);
}

// ---- point sets ------------------------------------------------------------------------------

class CpuPointSet final : public PointSet {
public:
  CpuPointSet(CpuWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field), points_(points),
        series_(size_t(nt) * points.size(), 0.0f) {}

private:
  void do_upload_series(const std::vector<float>& series) override { series_ = series; }
  bool do_replace(const std::vector<PointStencil>& points, const std::vector<float>& series) override {
    points_ = points;
    series_ = series;
    return true;
  }
  std::vector<float> do_download_series() const override { return series_; }
  void do_inject(int t, float scale) override;
  void do_record(int t) override;

  CpuWavefield& field_;
  std::vector<PointStencil> points_;
  std::vector<float> series_; // [t][point]
};

std::unique_ptr<PointSet> CpuWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  return std::make_unique<CpuPointSet>(*this, points, nt);
}

// Both follow the arithmetic order PointStencil (solvers/contracts/propagator.h) defines; the CUDA kernels
// do the same.
void CpuPointSet::do_inject(int t, float scale) {
  const OpClock timed(field_.timing_on_, field_.timing_.points_ms);
  const GridLayout& g = field_.layout();
  std::vector<float>& cur = field_.cur_;
  const std::vector<float>& v2dt2 = field_.v2dt2_;
  const size_t np = points_.size();
  for (size_t p = 0; p < np; ++p) {
    const float amp = scale * series_[size_t(t) * np + p];
    const PointStencil& s = points_[p];
    for (int c = 0; c < s.nz; ++c)
      for (int b = 0; b < s.ny; ++b) {
        const float wzy = s.wz[c] * s.wy[b];
        const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
        for (int a = 0; a < s.nx; ++a) cur[row + a] += wzy * s.wx[a] * v2dt2[row + a] * amp;
      }
  }
}

void CpuPointSet::do_record(int t) {
  const OpClock timed(field_.timing_on_, field_.timing_.points_ms);
  const GridLayout& g = field_.layout();
  const std::vector<float>& cur = field_.cur_;
  const size_t np = points_.size();
  for (size_t p = 0; p < np; ++p) {
    const PointStencil& s = points_[p];
    float v = 0.0f;
    for (int c = 0; c < s.nz; ++c) {
      float plane = 0.0f;
      for (int b = 0; b < s.ny; ++b) {
        const int64_t row = g.index(s.i0, s.j0 + b, s.k0 + c);
        float sum = 0.0f;
        for (int a = 0; a < s.nx; ++a) sum += s.wx[a] * cur[row + a];
        plane += s.wy[b] * sum;
      }
      v += s.wz[c] * plane;
    }
    series_[size_t(t) * np + p] = v;
  }
}

// ---- boundary store ----------------------------------------------------------------------------

// The ring cells' indices in the padded arrays, and one ring per step coded by the contract's
// encode_rows (solvers/contracts/ring_codec.h): float32, or 16-bit (half or integer) with a scale
// per block of kRingBlock cells from the ring's start. Coded in chunks of whole blocks, in
// parallel: a chunk starts at a block's start, so its blocks, exponents and codes are the whole
// ring's; a step's slot holds the chunks one after the other, each as encode_rows lays it out.
class CpuBoundaryStore final : public BoundaryStore {
public:
  CpuBoundaryStore(CpuWavefield& field, const Box& box, int steps, RingPrecision precision)
      : BoundaryStore(field, box, steps), field_(field),
        index_(boundary_ring_indices(field.layout(), box)), precision_(precision),
        cells_(int64_t(index_.size())), chunks_((cells_ + kChunk - 1) / kChunk),
        chunk_bytes_(coded_rows_bytes(kChunk, 1, precision)),
        step_bytes_(cells_ == 0 ? 0
                                : (chunks_ - 1) * chunk_bytes_ +
                                      coded_rows_bytes(cells_ - (chunks_ - 1) * kChunk, 1, precision)) {
    store_.assign(size_t(step_bytes_) * size_t(steps), 0);
  }

private:
  static constexpr int64_t kChunk = 64 * kRingBlock; // cells coded by one thread at a time

  void do_save(int step) override {
    const OpClock timed(field_.timing_on_, field_.timing_.boundary_ms);
    unsigned char* slot = store_.data() + size_t(step) * size_t(step_bytes_);
    const float* cur = field_.cur_.data();
#pragma omp parallel
    {
      std::vector<float> values(size_t(std::min(kChunk, cells_)));
#pragma omp for
      for (int64_t j = 0; j < chunks_; ++j) {
        const int64_t c0 = j * kChunk, n = std::min(kChunk, cells_ - c0);
        for (int64_t c = 0; c < n; ++c) values[size_t(c)] = cur[index_[size_t(c0 + c)]];
        encode_rows(values.data(), n, 1, precision_, slot + j * chunk_bytes_);
      }
    }
  }
  void do_restore(int step) override {
    const OpClock timed(field_.timing_on_, field_.timing_.boundary_ms);
    const unsigned char* slot = store_.data() + size_t(step) * size_t(step_bytes_);
    float* cur = field_.cur_.data();
#pragma omp parallel
    {
      std::vector<float> values(size_t(std::min(kChunk, cells_)));
#pragma omp for
      for (int64_t j = 0; j < chunks_; ++j) {
        const int64_t c0 = j * kChunk, n = std::min(kChunk, cells_ - c0);
        decode_rows(slot + j * chunk_bytes_, n, 1, precision_, values.data());
        for (int64_t c = 0; c < n; ++c) cur[index_[size_t(c0 + c)]] = values[size_t(c)];
      }
    }
  }

  CpuWavefield& field_;
  std::vector<int64_t> index_;
  RingPrecision precision_ = RingPrecision::full;
  int64_t cells_ = 0, chunks_ = 0;
  int64_t chunk_bytes_ = 0, step_bytes_ = 0; // a whole chunk's coded bytes; a step's
  std::vector<unsigned char> store_;         // [step][chunk]: encode_rows' bytes
};

std::unique_ptr<BoundaryStore> CpuWavefield::do_make_boundary_store(const Box& box, int steps,
                                                                 RingPrecision precision) {
  return std::make_unique<CpuBoundaryStore>(*this, box, steps, precision);
}

// ---- shot fields -------------------------------------------------------------------------------

CpuShotFields::CpuShotFields(const PropagatorSetup& setup) : CpuShotFields(setup, setup) {}

CpuShotFields::CpuShotFields(const PropagatorSetup& source, const PropagatorSetup& receiver)
    : source_(source), receiver_(receiver) {
  bind(source_, receiver_);
}

void CpuShotFields::do_allocate_image(const Box& box) {
  image_.assign(size_t(box.cells()), 0.0f);
  illumination_.assign(size_t(box.cells()), 0.0f);
}

void CpuShotFields::do_allocate_offset_gathers(const OffsetGatherLayout& layout) {
  gathers_.assign(size_t(layout.values()), 0.0f);
}

// The contract's per-value arithmetic (solvers/contracts/offset_gathers.h), shared with the CUDA
// kernel; timed with the imaging, on the receiver field's clock.
void CpuShotFields::do_accumulate_offset_gathers(float weight) {
  const OpClock timed(receiver_.timing_on_, receiver_.timing_.imaging_ms);
  const OffsetGatherLayout l = gather_layout();
  const GridLayout& g = receiver_.layout();
  const float* s = source_.cur_.data();
  const float* r = receiver_.cur_.data();
  float* gathers = gathers_.data();
  const auto load = [](const float* p, int64_t c) { return p[c]; };
  const int64_t count = l.values();
#pragma omp parallel for
  for (int64_t e = 0; e < count; ++e)
    gathers[e] += offset_gather_increment(l, g, e, s, r, weight, load);
}

void CpuShotFields::do_accumulate_image(float weight) {
  // Timed on the receiver field's clock, like the other receiver-side operations.
  const OpClock timed(receiver_.timing_on_, receiver_.timing_.imaging_ms);
  const std::vector<float>& s = source_.cur_;
  const std::vector<float>& r = receiver_.cur_;
  const Box& b = image_box();
  const GridLayout& g = receiver_.layout();
  if (imaging_condition() != ImagingCondition::cross) {
    accumulate_derivative_condition(weight);
    return;
  }
#pragma omp parallel for collapse(2)
  for (int k = b.z0; k < b.z1; ++k)
    for (int j = b.y0; j < b.y1; ++j) {
      const size_t row = (size_t(k - b.z0) * b.ny() + (j - b.y0)) * b.nx();
      const int64_t c0 = g.index(b.x0, j, k);
      for (int i = 0; i < b.nx(); ++i) {
        const float sv = s[c0 + i];
        image_[row + i] += weight * sv * r[c0 + i];
        illumination_[row + i] += weight * sv * sv;
      }
    }
}

// ISIC and the separated condition (solvers/contracts/imaging_condition.h, whose per-cell
// arithmetic the CUDA kernel shares): the illumination as for cross, the image with the
// condition's value in place of S R.
void CpuShotFields::accumulate_derivative_condition(float weight) {
  const float* s = source_.cur_.data();
  const float* s_prev = source_.prev_.data();
  const float* r = receiver_.cur_.data();
  const float* r_prev = receiver_.prev_.data();
  const Box& b = image_box();
  const GridLayout& g = receiver_.layout();
  const ImagingStencil w = make_imaging_stencil(receiver_.setup_.weights);
  const ImagingCondition condition = imaging_condition();
  const auto load = [](const float* p, int64_t c) { return p[c]; };
  float* image = image_.data();
  float* illumination = illumination_.data();
#pragma omp parallel for collapse(2)
  for (int k = b.z0; k < b.z1; ++k)
    for (int j = b.y0; j < b.y1; ++j) {
      const size_t row = (size_t(k - b.z0) * b.ny() + (j - b.y0)) * b.nx();
      // Near the box's faces the clamped offsets (condition_term); along an interior row's middle
      // the plain ones in a loop over the row (GCC vectorises ISIC's; each cell's arithmetic as it
      // is, so the values are the same bit for bit).
      const bool inner_row = j >= b.y0 + 4 && j < b.y1 - 4 && k >= b.z0 + 4 && k < b.z1 - 4;
      const int inner0 = inner_row ? std::min(b.x0 + 4, b.x1) : b.x1;
      const int inner1 = inner_row ? std::max(inner0, b.x1 - 4) : b.x1;
      auto edge = [&](int i) {
        const float sv = s[g.index(i, j, k)];
        const float weighted = weight * sv;
        image[row + size_t(i - b.x0)] +=
            condition_term(condition, w, g, b, i, j, k, s, s_prev, r, r_prev, weight, weighted, load);
        illumination[row + size_t(i - b.x0)] += weighted * sv;
      };
      for (int i = b.x0; i < inner0; ++i) edge(i);
      if (inner1 > inner0) {
        const int64_t c0 = g.index(inner0, j, k);
        float* image_row = image + row + size_t(inner0 - b.x0);
        float* illumination_row = illumination + row + size_t(inner0 - b.x0);
        const int n = inner1 - inner0;
        if (condition == ImagingCondition::isic) {
#pragma omp simd
          for (int i = 0; i < n; ++i) {
            const InteriorCell cell{c0 + i, g.pitch, g.plane};
            const float sv = s[c0 + i];
            const float weighted = weight * sv;
            image_row[i] += weight * isic_value(w, cell, s, r, load);
            illumination_row[i] += weighted * sv;
          }
        } else if (condition == ImagingCondition::separated) {
#pragma omp simd
          for (int i = 0; i < n; ++i) {
            const InteriorCell cell{c0 + i, g.pitch, g.plane};
            const float sv = s[c0 + i];
            const float weighted = weight * sv;
            const bool keep = down_source_up_receiver(w, cell, s, s_prev, r, r_prev, load);
            image_row[i] += keep ? weighted * r[c0 + i] : 0.0f; // (w S) R, as cross rounds it
            illumination_row[i] += weighted * sv;
          }
        } else { // a condition without a loop of its own here: condition_term cell by cell
          for (int i = inner0; i < inner1; ++i) edge(i);
        }
      }
      for (int i = inner1; i < b.x1; ++i) edge(i);
    }
}

void CpuShotFields::do_set_image(const std::vector<float>& image,
                                 const std::vector<float>& illumination) {
  image_ = image;
  illumination_ = illumination;
}

void CpuShotFields::do_set_born_perturbation(const Box&, const std::vector<float>& m) { born_m_ = m; }

void CpuShotFields::do_inject_born_source() {
  const OpClock timed(receiver_.timing_on_, receiver_.timing_.born_ms);
  const std::vector<float>& s = source_.cur_;
  std::vector<float>& r = receiver_.cur_;
  const std::vector<float>& v2dt2 = receiver_.v2dt2_;
  const Box& b = born_box();
  const GridLayout& g = receiver_.layout();
#pragma omp parallel for collapse(2)
  for (int k = b.z0; k < b.z1; ++k)
    for (int j = b.y0; j < b.y1; ++j) {
      const size_t row = (size_t(k - b.z0) * b.ny() + (j - b.y0)) * b.nx();
      const int64_t c0 = g.index(b.x0, j, k);
      for (int i = 0; i < b.nx(); ++i)
        r[c0 + i] += v2dt2[c0 + i] * born_m_[row + i] * s[c0 + i];
    }
}

} // namespace rtm
