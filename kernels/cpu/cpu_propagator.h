// The CPU reference backend: the oracle every CUDA variant is checked against.
// Written to be read: one loop nest per operation, OpenMP over planes and rows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_cpml.h"
#include "kernels/cpu/cpu_isa.h"
#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

// One step of the wave equation on padded arrays (solvers/contracts/propagator.h gives the formula).
// p_prev_next holds p[n-1] on entry and p[n+1] on return. v2dt2 is padded like the wavefields.
// Only planes k_begin <= k < k_end are updated (k_end < 0: to the last plane).
// cpml: the C-PML's memory variables (kernels/cpu/cpu_cpml.h), or none; with them the step adds
// the C-PML's correction on the layer cells in its own plane loop, each thread right after its
// rows of the undamped step (CpuCpmlPlanes): the bits of cpu_wave_step then cpu_cpml_correction.
void cpu_wave_step(const GridLayout& g, const LaplacianWeights& w, const float* v2dt2,
                   const DampingProfiles& damping, const float* p_cur, float* p_prev_next,
                   int k_begin = 0, int k_end = -1, const CpmlView* cpml = nullptr);

// cpu_wave_step uses the best instruction set this CPU has (kernels/cpu/cpu_isa.h).
// cpu_wave_step with a chosen instruction set (for the bench and the tests); throws
// std::invalid_argument if this CPU lacks it.
void cpu_wave_step_isa(CpuStepIsa isa, const GridLayout& g, const LaplacianWeights& w,
                       const float* v2dt2, const DampingProfiles& damping, const float* p_cur,
                       float* p_prev_next, int k_begin = 0, int k_end = -1,
                       const CpmlView* cpml = nullptr);

// Copies a dense [nz][ny][nx] array into a zeroed padded array, and back.
std::vector<float> pad_array(const GridLayout& g, const std::vector<float>& dense);
std::vector<float> unpad_array(const GridLayout& g, const std::vector<float>& padded);

// The CPU reference wavefield (solvers/contracts/wavefield.h). Its point sets and boundary stores
// (CpuPointSet, CpuBoundaryStore) and the shot fields (CpuShotFields) reach its arrays directly:
// they are one backend, written together.
class CpuWavefield final : public Wavefield {
public:
  explicit CpuWavefield(PropagatorSetup setup);

  std::string name() const override { return "cpu"; }
  void zero_state() override;
  void finish_step() override;
  void reverse_time() override;
  FieldHealth check_health() const override; // OpenMP over planes
  void enable_timing(bool on) override;
  PropagatorTiming timing() const override { return timing_; }

private:
  friend class CpuPointSet;
  friend class CpuBoundaryStore;
  friend class CpuShotFields;

  void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override;
  void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override;
  void do_step_planes(int k_begin, int k_end) override;
  PlaneSpan do_next_field_planes(int k_begin, int k_end) override;
  void do_copy_current(const Box& box, std::vector<float>& dense) const override;
  void do_set_current(const Box& box, const std::vector<float>& dense) override;
  std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) override;
  std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                         RingPrecision precision) override;

  PropagatorSetup setup_;
  std::vector<float> v2dt2_; // padded
  std::vector<float> prev_, cur_;
  CpmlMemory cpml_; // empty without the C-PML

  // Profiling: wall time of each operation while timing_on_ (mutable: copy_current is const).
  bool timing_on_ = false;
  mutable PropagatorTiming timing_;
};

// A source and a receiver CpuWavefield with the image, the illumination and the Born perturbation
// as host arrays (solvers/contracts/shot_fields.h).
class CpuShotFields final : public ShotFields {
public:
  explicit CpuShotFields(const PropagatorSetup& setup);
  // Fields with their own velocities on one grid (tests: a stable and an unstable field).
  CpuShotFields(const PropagatorSetup& source, const PropagatorSetup& receiver);

private:
  void do_allocate_image(const Box& box) override;
  void do_accumulate_image(float weight) override;
  std::vector<float> do_download_image(bool illumination) const override {
    return illumination ? illumination_ : image_;
  }
  void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) override;
  void do_set_born_perturbation(const Box& box, const std::vector<float>& m) override;
  void do_inject_born_source() override;
  bool do_supports_imaging_condition(ImagingCondition) const override { return true; }
  void accumulate_derivative_condition(float weight); // the conditions other than cross
  bool do_supports_offset_gathers() const override { return true; }
  void do_allocate_offset_gathers(const OffsetGatherLayout& layout) override;
  void do_accumulate_offset_gathers(float weight) override;
  std::vector<float> do_download_offset_gathers() const override { return gathers_; }

  CpuWavefield source_, receiver_;
  std::vector<float> image_, illumination_; // dense over image_box()
  std::vector<float> born_m_;               // dense over born_box()
  std::vector<float> gathers_;              // as gather_layout() says
};

} // namespace rtm
