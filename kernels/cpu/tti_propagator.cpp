#include "kernels/cpu/tti_propagator.h"

#include "kernels/cpu/cpu_propagator.h" // pad_array
#include "kernels/cpu/denormals.h"
#include "solvers/contracts/tti_free_surface.h"
#include "solvers/contracts/tti_ring.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace rtm {

namespace {

// Adds the wall time of its scope to `total_ms` when timing is on.
class TtiClock {
public:
  TtiClock(bool on, double& total_ms) : total_ms_(on ? &total_ms : nullptr) {
    if (total_ms_) start_ = std::chrono::steady_clock::now();
  }
  ~TtiClock() {
    if (total_ms_)
      *total_ms_ +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  TtiClock(const TtiClock&) = delete;
  TtiClock& operator=(const TtiClock&) = delete;

private:
  double* total_ms_;
  std::chrono::steady_clock::time_point start_{};
};

// Pass 1 on row j of plane k, both fields: u = n . D f (tti_axis_derivative) and w_a = n_a^2 R_a f
// (tti_pure_axis), into the scratch (kTtiScratchArrays arrays of tti layout t).
void pass1_row(const GridLayout& g, const GridLayout& t, const TtiWeights& w, const TtiPaddedCoefficients& c,
               const float* cur, float* scratch, int j, int k) {
  const int64_t a = g.index(0, j, k);
  const float* __restrict nx = c.nx.data() + a;
  const float* __restrict ny = c.ny.data() + a;
  const float* __restrict nz = c.nz.data() + a;
  for (int64_t field : {int64_t(0), tti_q_offset(t)}) {
    const int64_t f = t.index(0, j, k) + field;
    const float* __restrict in = cur + f;
    float* __restrict u = scratch + tti_scratch_offset(t, TtiScratch::u) + f;
    float* __restrict wx = scratch + tti_scratch_offset(t, TtiScratch::wx) + f;
    float* __restrict wy = scratch + tti_scratch_offset(t, TtiScratch::wy) + f;
    float* __restrict wz = scratch + tti_scratch_offset(t, TtiScratch::wz) + f;
#pragma omp simd
    for (int i = 0; i < g.nx; ++i) {
      u[i] = tti_axis_derivative(in + i, t.pitch, t.plane, w, nx[i], ny[i], nz[i]);
      wx[i] = tti_pure_axis(in + i, 1, w.rx, nx[i]);
      wy[i] = tti_pure_axis(in + i, t.pitch, w.ry, ny[i]);
      wz[i] = tti_pure_axis(in + i, t.plane, w.rz, nz[i]);
    }
  }
}

// Pass 2's H1 f along a row (tti_h1); n in layout g at offset a, the field's scratch arrays in
// layout t at offset f (p's or q's).
void h1_row(const GridLayout& g, const GridLayout& t, const TtiWeights& w, const TtiPaddedCoefficients& c,
            const float* scratch, int64_t f, int64_t a, float* __restrict h1) {
  const float* nx = c.nx.data() + a;
  const float* ny = c.ny.data() + a;
  const float* nz = c.nz.data() + a;
  const float* u = scratch + tti_scratch_offset(t, TtiScratch::u) + f;
  const float* wx = scratch + tti_scratch_offset(t, TtiScratch::wx) + f;
  const float* wy = scratch + tti_scratch_offset(t, TtiScratch::wy) + f;
  const float* wz = scratch + tti_scratch_offset(t, TtiScratch::wz) + f;
#pragma omp simd
  for (int i = 0; i < g.nx; ++i) {
    float h = tti_first_of_product(nx + i, u + i, 1, 1, w.gx);
    h += tti_first_of_product(ny + i, u + i, g.pitch, t.pitch, w.gy);
    h += tti_first_of_product(nz + i, u + i, g.plane, t.plane, w.gz);
    h1[i] = tti_h1(h, tti_axis_factor_transpose(wx + i, 1, w.rx), tti_axis_factor_transpose(wy + i, t.pitch, w.ry),
                   tti_axis_factor_transpose(wz + i, t.plane, w.rz));
  }
}

} // namespace

TtiPaddedCoefficients::TtiPaddedCoefficients(const GridLayout& g, const std::vector<float>& v2dt2_dense,
                                             const TtiCoefficients& c, bool free_surface)
    : v2dt2(pad_array(g, v2dt2_dense)), e(pad_array(g, c.e)), s(pad_array(g, c.s)),
      nx(pad_array(g, c.nx)), ny(pad_array(g, c.ny)), nz(pad_array(g, c.nz)) {
  if (free_surface) mirror_tti_axis_into_surface_halo(g, nx.data(), ny.data(), nz.data());
}

void cpu_tti_step(const GridLayout& g, const TtiWeights& w, const TtiPaddedCoefficients& c,
                  const DampingProfiles& damping, float* cur, float* prev_next, float* scratch,
                  int k_begin, int k_end, bool free_surface) {
  if (k_end < 0) k_end = g.nz;
  const GridLayout t = tti_layout(g);
  const int64_t qo = tti_q_offset(t);
  // Pass 1 reaches the top halo from planes below kHalo, i.e. for k_begin < 2 kHalo; pass 2 reads
  // the scratch's top halo for k_begin < kHalo (solvers/contracts/tti_free_surface.h).
  const bool image_fields = free_surface && k_begin < 2 * kHalo;
  const bool image_scratch = free_surface && k_begin < kHalo;
  if (image_fields) {
    mirror_free_surface(t, cur);
    mirror_free_surface(t, cur + qo);
  }
  // Pass 2 on planes k reads the scratch on planes k - kHalo .. k + kHalo.
  const int u_begin = std::max(0, k_begin - kHalo), u_end = std::min(g.nz, k_end + kHalo);
  // Small grids (tests) step on one thread: a team's barriers would cost more than they save.
  const bool threaded = g.interior_cells() >= (int64_t(1) << 17);
#pragma omp parallel if (threaded)
  {
    flush_denormals_on_this_thread();
#pragma omp for collapse(2) schedule(static)
    for (int k = u_begin; k < u_end; ++k)
      for (int j = 0; j < g.ny; ++j) pass1_row(g, t, w, c, cur, scratch, j, k);
    if (image_scratch) { // after pass 1's planes 0 .. 2 (the barrier ending the loop above)
#pragma omp for collapse(2) schedule(static)
      for (int k = -kHalo; k <= kFreeSurfacePlane; ++k)
        for (int j = 0; j < g.ny; ++j)
          for (int field = 0; field < 2; ++field) {
            const int64_t f = field * qo;
            for (int i = 0; i < g.nx; ++i)
              tti_surface_scratch_cell(g, t, w, c.nz.data(), cur + f,
                                       scratch + tti_scratch_offset(t, TtiScratch::u) + f,
                                       scratch + tti_scratch_offset(t, TtiScratch::wx) + f,
                                       scratch + tti_scratch_offset(t, TtiScratch::wy) + f,
                                       scratch + tti_scratch_offset(t, TtiScratch::wz) + f, i, j, k);
          }
    }
    std::vector<float> lap(size_t(g.nx)), h1p(size_t(g.nx)), h1q(size_t(g.nx));
#pragma omp for collapse(2) schedule(static)
    for (int k = k_begin; k < k_end; ++k)
      for (int j = 0; j < g.ny; ++j) {
        const int64_t f = t.index(0, j, k), a = g.index(0, j, k);
        const float* __restrict p = cur + f;
#pragma omp simd
        for (int i = 0; i < g.nx; ++i)
          lap[size_t(i)] = (tti_second(p + i, 1, w.c0x, w.wx) + tti_second(p + i, t.pitch, w.c0y, w.wy)) +
                           tti_second(p + i, t.plane, w.c0z, w.wz);
        h1_row(g, t, w, c, scratch, f, a, h1p.data());
        h1_row(g, t, w, c, scratch, f + qo, a, h1q.data());
        const float damp_yz = damping.empty() ? 0.0f : damping.y[size_t(j)] + damping.z[size_t(k)];
        for (int i = 0; i < g.nx; ++i) {
          const float damp = damping.empty() ? 0.0f : damping.x[size_t(i)] + damp_yz;
          const TtiCellUpdate r =
              tti_update(lap[size_t(i)], h1p[size_t(i)], h1q[size_t(i)], cur[f + i], cur[f + qo + i],
                         prev_next[f + i], prev_next[f + qo + i], c.v2dt2[a + i], c.e[a + i],
                         c.s[a + i], damp);
          prev_next[f + i] = r.p;
          prev_next[f + qo + i] = r.q;
        }
      }
  }
}

CpuTtiWavefield::CpuTtiWavefield(PropagatorSetup setup)
    : Wavefield(tti_layout(setup.layout)), setup_(std::move(setup)) {
  flush_denormals_on_all_threads();
  const GridLayout& g = setup_.layout;
  if (!setup_.cpml.empty())
    throw std::invalid_argument("CpuTtiWavefield: the C-PML is not available for TTI (use the sponge)");
  if (setup_.tti.empty()) throw std::invalid_argument("CpuTtiWavefield: no TTI coefficients");
  if (setup_.free_surface && g.nz < kTtiFreeSurfaceMinPlanes)
    throw std::invalid_argument("CpuTtiWavefield: the free surface needs at least 3 planes");
  const DampingProfiles& d = setup_.damping;
  if (!d.empty() && (int(d.x.size()) != g.nx || int(d.y.size()) != g.ny || int(d.z.size()) != g.nz))
    throw std::invalid_argument("CpuTtiWavefield: damping profiles must have nx, ny, nz entries");
  const TtiCoefficients& c = setup_.tti;
  const size_t cells = size_t(g.interior_cells());
  if (c.e.size() != cells || c.s.size() != cells || c.nx.size() != cells || c.ny.size() != cells ||
      c.nz.size() != cells)
    throw std::invalid_argument("CpuTtiWavefield: TTI coefficients must have nx*ny*nz entries each");
  weights_ = make_tti_weights(c.hx, c.hy, c.hz);
  coef_ = TtiPaddedCoefficients(g, setup_.v2dt2, c, setup_.free_surface);
  prev_.assign(size_t(layout().size), 0.0f);
  cur_.assign(size_t(layout().size), 0.0f);
  scratch_.assign(size_t(kTtiScratchArrays) * size_t(layout().size), 0.0f);
}

void CpuTtiWavefield::zero_state() {
  std::fill(prev_.begin(), prev_.end(), 0.0f);
  std::fill(cur_.begin(), cur_.end(), 0.0f);
}

void CpuTtiWavefield::do_step_planes(int k_begin, int k_end) {
  const TtiClock timed(timing_on_, timing_.step_ms);
  cpu_tti_step(setup_.layout, weights_, coef_, setup_.damping, cur_.data(), prev_.data(), scratch_.data(),
               k_begin, k_end, setup_.free_surface);
  if (timing_on_ && k_begin == 0 && k_end == setup_.layout.nz) ++timing_.steps;
}

PlaneSpan CpuTtiWavefield::do_next_field_planes(int k_begin, int k_end) {
  const GridLayout& t = layout();
  PlaneSpan span;
  span.data = prev_.data() + t.index(-kHalo, -kHalo, k_begin);
  span.bytes = size_t(k_end - k_begin) * size_t(t.plane) * sizeof(float);
  return span;
}

void CpuTtiWavefield::do_copy_current(const Box& box, std::vector<float>& dense) const {
  const TtiClock timed(timing_on_, timing_.box_copy_ms);
  dense.resize(size_t(box.cells()));
  const GridLayout& t = layout();
  for (int k = box.z0; k < box.z1; ++k)
    for (int j = box.y0; j < box.y1; ++j)
      std::copy_n(cur_.data() + t.index(box.x0, j, k), box.nx(),
                  dense.data() + (size_t(k - box.z0) * box.ny() + (j - box.y0)) * box.nx());
}

void CpuTtiWavefield::do_set_current(const Box& box, const std::vector<float>& dense) {
  const TtiClock timed(timing_on_, timing_.box_copy_ms);
  const GridLayout& t = layout();
  for (int k = box.z0; k < box.z1; ++k)
    for (int j = box.y0; j < box.y1; ++j)
      std::copy_n(dense.data() + (size_t(k - box.z0) * box.ny() + (j - box.y0)) * box.nx(), box.nx(),
                  cur_.data() + t.index(box.x0, j, k));
}

void CpuTtiWavefield::enable_timing(bool on) {
  if (on) timing_ = PropagatorTiming{};
  timing_on_ = on;
}

FieldHealth CpuTtiWavefield::check_health() const {
  // Both fields: a q that blows up reaches p a step later, but the check names the first.
  const GridLayout& t = layout();
  const float* q = cur_.data() + tti_q_offset(t);
  const WorstCell wp = worst_cell_in_planes(t, cur_.data(), 0, t.nz);
  const WorstCell wq = worst_cell_in_planes(t, q, 0, t.nz);
  return wq.badness > wp.badness ? field_health_of(t, q, wq) : field_health_of(t, cur_.data(), wp);
}

// ---- point sets ------------------------------------------------------------------------------

class CpuTtiPointSet final : public PointSet {
public:
  CpuTtiPointSet(CpuTtiWavefield& field, const std::vector<PointStencil>& points, int nt)
      : PointSet(field, int(points.size()), nt), field_(field), points_(points),
        series_(size_t(nt) * points.size(), 0.0f) {}

private:
  void do_upload_series(const std::vector<float>& series) override { series_ = series; }
  std::vector<float> do_download_series() const override { return series_; }
  // PointStencil's order; with E = S = 1 the p part is the isotropic injection to the bit.
  void do_inject(int t, float scale) override {
    const TtiClock timed(field_.timing_on_, field_.timing_.points_ms);
    const GridLayout& tl = field_.layout();
    const GridLayout& g = field_.setup_.layout;
    const int64_t qo = tti_q_offset(tl);
    const TtiPaddedCoefficients& c = field_.coef_;
    float* cur = field_.cur_.data();
    const size_t np = points_.size();
    for (size_t p = 0; p < np; ++p) {
      const float amp = scale * series_[size_t(t) * np + p];
      const PointStencil& s = points_[p];
      for (int cc = 0; cc < s.nz; ++cc)
        for (int b = 0; b < s.ny; ++b) {
          const float wzy = s.wz[cc] * s.wy[b];
          for (int a = 0; a < s.nx; ++a) {
            const int64_t f = tl.index(s.i0 + a, s.j0 + b, s.k0 + cc);
            const int64_t ci = g.index(s.i0 + a, s.j0 + b, s.k0 + cc);
            const float base = wzy * s.wx[a] * c.v2dt2[ci];
            cur[f] += base * c.e[ci] * amp;
            cur[f + qo] += base * c.s[ci] * amp;
          }
        }
    }
  }
  void do_record(int t) override {
    const TtiClock timed(field_.timing_on_, field_.timing_.points_ms);
    const GridLayout& tl = field_.layout();
    const float* cur = field_.cur_.data();
    const size_t np = points_.size();
    for (size_t p = 0; p < np; ++p) {
      const PointStencil& s = points_[p];
      float v = 0.0f;
      for (int cc = 0; cc < s.nz; ++cc) {
        float plane = 0.0f;
        for (int b = 0; b < s.ny; ++b) {
          const int64_t row = tl.index(s.i0, s.j0 + b, s.k0 + cc);
          float sum = 0.0f;
          for (int a = 0; a < s.nx; ++a) sum += s.wx[a] * cur[row + a];
          plane += s.wy[b] * sum;
        }
        v += s.wz[cc] * plane;
      }
      series_[size_t(t) * np + p] = v;
    }
  }

  CpuTtiWavefield& field_;
  std::vector<PointStencil> points_;
  std::vector<float> series_;
};

std::unique_ptr<PointSet> CpuTtiWavefield::do_add_points(const std::vector<PointStencil>& points, int nt) {
  return std::make_unique<CpuTtiPointSet>(*this, points, nt);
}

// ---- boundary store: the ring of p and of q ------------------------------------------------------

class CpuTtiBoundaryStore final : public BoundaryStore {
public:
  CpuTtiBoundaryStore(CpuTtiWavefield& field, const Box& box, int steps)
      : BoundaryStore(field, box, steps), field_(field),
        index_(tti_ring_indices(field.layout(), box)), qo_(tti_q_offset(field.layout())),
        store_(2 * index_.size() * size_t(steps), 0.0f) {}

private:
  void do_save(int step) override {
    const TtiClock timed(field_.timing_on_, field_.timing_.boundary_ms);
    float* slot = store_.data() + 2 * size_t(step) * index_.size();
    const float* cur = field_.cur_.data();
    const size_t n = index_.size();
    for (size_t c = 0; c < n; ++c) {
      slot[c] = cur[index_[c]];
      slot[n + c] = cur[index_[c] + qo_];
    }
  }
  void do_restore(int step) override {
    const TtiClock timed(field_.timing_on_, field_.timing_.boundary_ms);
    const float* slot = store_.data() + 2 * size_t(step) * index_.size();
    float* cur = field_.cur_.data();
    const size_t n = index_.size();
    for (size_t c = 0; c < n; ++c) {
      cur[index_[c]] = slot[c];
      cur[index_[c] + qo_] = slot[n + c];
    }
  }

  CpuTtiWavefield& field_;
  std::vector<int64_t> index_;
  int64_t qo_;
  std::vector<float> store_; // [step][p ring, q ring]
};

std::unique_ptr<BoundaryStore> CpuTtiWavefield::do_make_boundary_store(const Box& box, int steps,
                                                                    RingPrecision precision) {
  if (precision != RingPrecision::full)
    throw std::invalid_argument("cpu/tti: the TTI boundary store keeps float32 rings only "
                                "(--ring-precision float32)");
  return std::make_unique<CpuTtiBoundaryStore>(*this, box, steps);
}

// ---- shot fields ---------------------------------------------------------------------------------

CpuTtiShotFields::CpuTtiShotFields(const PropagatorSetup& setup) : source_(setup), receiver_(setup) {
  bind(source_, receiver_);
}

void CpuTtiShotFields::do_allocate_image(const Box& box) {
  image_.assign(size_t(box.cells()), 0.0f);
  illumination_.assign(size_t(box.cells()), 0.0f);
}

void CpuTtiShotFields::do_accumulate_image(float weight) {
  const TtiClock timed(receiver_.timing_on_, receiver_.timing_.imaging_ms);
  const std::vector<float>& s = source_.cur_;
  const std::vector<float>& r = receiver_.cur_;
  const Box& b = image_box();
  const GridLayout& t = receiver_.layout();
#pragma omp parallel for collapse(2)
  for (int k = b.z0; k < b.z1; ++k)
    for (int j = b.y0; j < b.y1; ++j) {
      const size_t row = (size_t(k - b.z0) * b.ny() + (j - b.y0)) * b.nx();
      const int64_t c0 = t.index(b.x0, j, k);
      for (int i = 0; i < b.nx(); ++i) {
        const float sv = s[c0 + i];
        image_[row + i] += weight * sv * r[c0 + i];
        illumination_[row + i] += weight * sv * sv;
      }
    }
}

// The Born source C (m S_p, 0): into p with v2dt2 E, into q with v2dt2 S (docs/physics.md, TTI),
// so that the image S_p R_p is its exact adjoint.
void CpuTtiShotFields::do_inject_born_source() {
  const TtiClock timed(receiver_.timing_on_, receiver_.timing_.born_ms);
  const std::vector<float>& s = source_.cur_;
  std::vector<float>& r = receiver_.cur_;
  const TtiPaddedCoefficients& c = receiver_.coef_;
  const Box& b = born_box();
  const GridLayout& t = receiver_.layout();
  const GridLayout& g = receiver_.setup_.layout;
  const int64_t qo = tti_q_offset(t);
#pragma omp parallel for collapse(2)
  for (int k = b.z0; k < b.z1; ++k)
    for (int j = b.y0; j < b.y1; ++j) {
      const size_t row = (size_t(k - b.z0) * b.ny() + (j - b.y0)) * b.nx();
      for (int i = 0; i < b.nx(); ++i) {
        const int64_t f = t.index(b.x0 + i, j, k), a = g.index(b.x0 + i, j, k);
        const float base = c.v2dt2[a] * born_m_[row + i] * s[f];
        r[f] += base * c.e[a];
        r[f + qo] += base * c.s[a];
      }
    }
}

} // namespace rtm
