// The CPU reference propagator: the oracle every CUDA variant is checked against.
// Written to be read: one loop nest per operation, OpenMP over planes and rows.
#pragma once

#include <vector>

#include "solvers/contracts/propagator.h"

namespace rtm {

// One step of the wave equation on padded arrays (see solvers/contracts/propagator.h for the formula).
// p_prev_next holds p[n-1] on entry and p[n+1] on return. v2dt2 is padded like the wavefields.
// Only planes k_begin <= k < k_end are updated (k_end < 0: to the last plane).
void cpu_wave_step(const GridLayout& g, const LaplacianWeights& w, const float* v2dt2,
                   const DampingProfiles& damping, const float* p_cur, float* p_prev_next,
                   int k_begin = 0, int k_end = -1);

// The instruction sets the step's row loop is compiled for. cpu_wave_step uses the best one this
// CPU has; all give bit-identical results (the same IEEE operations in the same order per cell; no
// fused multiply-add), so the choice changes the speed only.
enum class CpuStepIsa { baseline, avx2 }; // baseline: the build's own target (SSE2 on x86-64)
bool cpu_step_isa_available(CpuStepIsa isa);
const char* cpu_step_isa_name(CpuStepIsa isa);
CpuStepIsa best_cpu_step_isa();
// cpu_wave_step with a chosen instruction set (for the bench and the tests); throws
// std::invalid_argument if this CPU lacks it.
void cpu_wave_step_isa(CpuStepIsa isa, const GridLayout& g, const LaplacianWeights& w,
                       const float* v2dt2, const DampingProfiles& damping, const float* p_cur,
                       float* p_prev_next, int k_begin = 0, int k_end = -1);

// The C-PML memory variables of one grid (solvers/contracts/cpml.h): per axis psi double-buffered (old:
// psi[n-1], read; new: psi[n], written) and zeta, compact over the axis' layers.
struct CpmlMemory {
  std::vector<float> psi[2][3]; // [buffer][axis x, y, z]
  std::vector<float> zeta[3];
  int old = 0; // which psi buffer holds psi[n-1]
  CpmlMemory() = default;
  CpmlMemory(const CpmlProfiles& c, const GridLayout& g);
  void zero();
  void swap() { old = 1 - old; }
  // The views the per-cell arithmetic reads and writes.
  CpmlView view(const CpmlProfiles& c, const GridLayout& g);
};

// Adds the C-PML correction (solvers/contracts/cpml.h) to p_next on the layer cells of planes
// k_begin <= k < k_end, after the undamped step has written p_next: pass 1 stores psi[n] of those
// planes, pass 2 adds the corrections (solvers/contracts/cpml.h says why any split gives the same bits).
void cpu_cpml_correction(const GridLayout& g, const CpmlView& v, const float* p_cur,
                         const float* v2dt2, float* p_next, int k_begin, int k_end);

// Copies a dense [nz][ny][nx] array into a zeroed padded array, and back.
std::vector<float> pad_array(const GridLayout& g, const std::vector<float>& dense);
std::vector<float> unpad_array(const GridLayout& g, const std::vector<float>& padded);

class CpuPropagator final : public Propagator {
public:
  explicit CpuPropagator(PropagatorSetup setup);

  std::string name() const override { return "cpu"; }
  const GridLayout& layout() const override { return setup_.layout; }

  void set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void zero_state() override;
  void step_planes(int k_begin, int k_end) override;
  void finish_step() override;
  PlaneSpan next_field_planes(int k_begin, int k_end) override;

  int add_point_set(const std::vector<PointStencil>& points, int nt) override;
  void upload_series(int set, const std::vector<float>& series) override;
  std::vector<float> download_series(int set) const override;
  void inject(int set, int t, float scale) override;
  void record(int set, int t) override;
  FieldHealth check_health() const override; // OpenMP over planes

  void reverse_time() override;
  void allocate_boundary_store(const Box& box, int steps) override;
  void save_boundary(int step) override;
  void restore_boundary(int step) override;
  void copy_current(const Box& box, std::vector<float>& dense) const override;
  void set_current(const Box& box, const std::vector<float>& dense) override;
  void allocate_image(const Box& box) override;
  void accumulate_image(const Propagator& source_field, float weight) override;
  std::vector<float> download_image() const override { return image_; }
  std::vector<float> download_illumination() const override { return illumination_; }
  void set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void inject_born_source(const Propagator& background) override;

  void enable_timing(bool on) override;
  PropagatorTiming timing() const override { return timing_; }

private:
  struct PointSet {
    std::vector<PointStencil> points;
    int nt = 0;
    std::vector<float> series; // [t][point]
  };
  const PointSet& point_set(int set) const;
  void check_box(const Box& box, const char* what) const;
  // The other propagator of a two-field operation, which must be a CpuPropagator on this grid.
  const CpuPropagator& same_backend(const Propagator& other, const char* what) const;

  PropagatorSetup setup_;
  std::vector<float> v2dt2_; // padded
  std::vector<float> prev_, cur_;
  CpmlMemory cpml_; // empty without the C-PML
  std::vector<PointSet> sets_;

  // Boundary saving: the ring cells' indices in the padded arrays, and one ring per step.
  Box ring_box_;
  std::vector<int64_t> ring_index_;
  int ring_steps_ = 0;
  std::vector<float> ring_store_; // [step][ring cell]

  // Imaging and Born modeling, dense over their boxes.
  Box image_box_;
  std::vector<float> image_, illumination_;
  Box born_box_;
  std::vector<float> born_m_;

  // Profiling: wall time of each operation while timing_on_ (mutable: copy_current is const).
  bool timing_on_ = false;
  mutable PropagatorTiming timing_;
};

} // namespace rtm
