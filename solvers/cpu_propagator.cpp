#include "solvers/cpu_propagator.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace rtm {

namespace {

// One row of the step, x = 0 .. nx-1. Pointers are to cell (0, j, k); the row loop is written so
// the compiler vectorises it (restrict pointers, no branch inside).
template <bool kDamped>
void step_row(int nx, int64_t sy, int64_t sz, const LaplacianWeights& w,
              const float* __restrict p_cur, float* __restrict p_prev_next,
              const float* __restrict v2dt2, const float* __restrict damp_x, float damp_yz) {
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

} // namespace

void cpu_wave_step(const GridLayout& g, const LaplacianWeights& w, const float* v2dt2,
                   const DampingProfiles& damping, const float* p_cur, float* p_prev_next) {
  const bool damped = !damping.empty();
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < g.nz; ++k) {
    for (int j = 0; j < g.ny; ++j) {
      const int64_t row = g.index(0, j, k);
      if (damped)
        step_row<true>(g.nx, g.pitch, g.plane, w, p_cur + row, p_prev_next + row, v2dt2 + row,
                       damping.x.data(), damping.y[size_t(j)] + damping.z[size_t(k)]);
      else
        step_row<false>(g.nx, g.pitch, g.plane, w, p_cur + row, p_prev_next + row, v2dt2 + row,
                        nullptr, 0.0f);
    }
  }
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

CpuPropagator::CpuPropagator(PropagatorSetup setup) : setup_(std::move(setup)) {
  const GridLayout& g = setup_.layout;
  v2dt2_ = pad_array(g, setup_.v2dt2);
  const DampingProfiles& d = setup_.damping;
  if (!d.empty() && (int(d.x.size()) != g.nx || int(d.y.size()) != g.ny || int(d.z.size()) != g.nz))
    throw std::invalid_argument("CpuPropagator: damping profiles must have nx, ny, nz entries");
  prev_.assign(g.size, 0.0f);
  cur_.assign(g.size, 0.0f);
}

void CpuPropagator::set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) {
  const auto n = size_t(layout().size);
  if (p_prev.size() != n || p_cur.size() != n)
    throw std::invalid_argument("CpuPropagator::set_state: arrays must have layout().size floats");
  prev_ = p_prev;
  cur_ = p_cur;
}

void CpuPropagator::get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const {
  p_prev = prev_;
  p_cur = cur_;
}

void CpuPropagator::zero_state() {
  std::fill(prev_.begin(), prev_.end(), 0.0f);
  std::fill(cur_.begin(), cur_.end(), 0.0f);
}

void CpuPropagator::step() {
  cpu_wave_step(setup_.layout, setup_.weights, v2dt2_.data(), setup_.damping, cur_.data(),
                prev_.data());
  std::swap(prev_, cur_);
}

int CpuPropagator::add_point_set(const std::vector<PointStencil>& points, int nt) {
  if (nt <= 0) throw std::invalid_argument("add_point_set: nt must be positive");
  for (const PointStencil& p : points)
    for (int c = 0; c < p.count; ++c)
      if (p.index[c] < 0 || p.index[c] >= layout().size)
        throw std::out_of_range("add_point_set: point cell index outside the grid");
  sets_.push_back(PointSet{points, nt, std::vector<float>(size_t(nt) * points.size(), 0.0f)});
  return int(sets_.size()) - 1;
}

const CpuPropagator::PointSet& CpuPropagator::point_set(int set) const {
  if (set < 0 || set >= int(sets_.size()))
    throw std::out_of_range("CpuPropagator: no point set " + std::to_string(set));
  return sets_[size_t(set)];
}

void CpuPropagator::upload_series(int set, const std::vector<float>& series) {
  const PointSet& ps = point_set(set);
  if (series.size() != ps.series.size())
    throw std::invalid_argument("upload_series: expected nt x points = " +
                                std::to_string(ps.series.size()) + " values, got " +
                                std::to_string(series.size()));
  sets_[size_t(set)].series = series;
}

std::vector<float> CpuPropagator::download_series(int set) const { return point_set(set).series; }

void CpuPropagator::inject(int set, int t, float scale) {
  const PointSet& ps = point_set(set);
  if (t < 0 || t >= ps.nt) throw std::out_of_range("inject: time index outside the series");
  const size_t np = ps.points.size();
  for (size_t p = 0; p < np; ++p) {
    const float amp = scale * ps.series[size_t(t) * np + p];
    const PointStencil& s = ps.points[p];
    for (int c = 0; c < s.count; ++c) cur_[s.index[c]] += s.weight[c] * v2dt2_[s.index[c]] * amp;
  }
}

void CpuPropagator::record(int set, int t) {
  PointSet& ps = sets_.at(size_t(set));
  if (t < 0 || t >= ps.nt) throw std::out_of_range("record: time index outside the series");
  const size_t np = ps.points.size();
  for (size_t p = 0; p < np; ++p) {
    const PointStencil& s = ps.points[p];
    float v = 0.0f;
    for (int c = 0; c < s.count; ++c) v += s.weight[c] * cur_[s.index[c]];
    ps.series[size_t(t) * np + p] = v;
  }
}

FieldHealth CpuPropagator::check_health() const {
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

} // namespace rtm
