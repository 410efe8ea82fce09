// The CPU reference of the pseudo-acoustic TTI step (solvers/contracts/tti.h, docs/physics.md "TTI"):
// the oracle the CUDA TTI kernels are checked against. Same contracts as the isotropic CPU backend
// (kernels/cpu/cpu_propagator.h); the wavefield is the pair (p, q) in one array of
// tti_layout(setup.layout), and layout() is that layout (g.index(i, j, k) is p's cell).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solvers/contracts/shot_fields.h"
#include "solvers/contracts/tti.h"
#include "solvers/contracts/wavefield.h"

namespace rtm {

// The per-cell coefficients padded like a scalar field of layout g (zero in the halo; with a free
// surface the axis n is mirrored into the top halo, solvers/contracts/tti_free_surface.h).
struct TtiPaddedCoefficients {
  std::vector<float> v2dt2, e, s, nx, ny, nz;
  TtiPaddedCoefficients() = default;
  TtiPaddedCoefficients(const GridLayout& g, const std::vector<float>& v2dt2_dense,
                        const TtiCoefficients& c, bool free_surface = false);
};

// One TTI step on planes k_begin <= k < k_end (k_end < 0: to the last plane). g: the scalar layout
// (coefficients), fields in tti_layout(g): cur holds (p[n], q[n]), prev_next holds (p[n-1], q[n-1])
// on entry and (p[n+1], q[n+1]) on return. scratch: kTtiScratchArrays x tti_layout(g).size floats,
// zero on halo cells (pass 1 writes u = n . D f and w_a = n_a^2 R_a f of both fields on planes
// k_begin - kHalo .. k_end + kHalo, clipped to the grid; tti.h TtiScratch). OpenMP over planes and rows.
// free_surface (c made with it): the image method of solvers/contracts/tti_free_surface.h; cur's
// top halo is written (the image of p and q) when pass 1 reaches it, the scratch's when pass 2 does.
void cpu_tti_step(const GridLayout& g, const TtiWeights& w, const TtiPaddedCoefficients& c,
                  const DampingProfiles& damping, float* cur, float* prev_next, float* scratch,
                  int k_begin = 0, int k_end = -1, bool free_surface = false);

// The TTI wavefield (solvers/contracts/wavefield.h). Point sets inject f into p and q with the
// weights of C (v2dt2 E and v2dt2 S) and record p; the boundary store keeps the ring of both,
// kTtiRing = 2 kHalo cells thick (solvers/contracts/tti_ring.h: the step's two passes reach that far);
// copy_current and set_current move p only (RTM images p; snapshots are refused for TTI by the
// drivers). The C-PML is refused (std::invalid_argument): the sponge only.
class CpuTtiWavefield final : public Wavefield {
public:
  explicit CpuTtiWavefield(PropagatorSetup setup);

  std::string name() const override { return "cpu/tti"; }
  void zero_state() override;
  void finish_step() override { std::swap(prev_, cur_); }
  void reverse_time() override { std::swap(prev_, cur_); }
  FieldHealth check_health() const override; // both fields
  void enable_timing(bool on) override;
  PropagatorTiming timing() const override { return timing_; }

private:
  friend class CpuTtiPointSet;
  friend class CpuTtiBoundaryStore;
  friend class CpuTtiShotFields;

  void do_set_state(const std::vector<float>& p_prev, const std::vector<float>& p_cur) override {
    prev_ = p_prev;
    cur_ = p_cur;
  }
  void do_get_state(std::vector<float>& p_prev, std::vector<float>& p_cur) const override {
    p_prev = prev_;
    p_cur = cur_;
  }
  void do_step_planes(int k_begin, int k_end) override;
  PlaneSpan do_next_field_planes(int k_begin, int k_end) override;
  void do_copy_current(const Box& box, std::vector<float>& dense) const override;
  void do_set_current(const Box& box, const std::vector<float>& dense) override;
  std::unique_ptr<PointSet> do_add_points(const std::vector<PointStencil>& points, int nt) override;
  // Float32 rings only: a 16-bit ring (RingPrecision) is refused for TTI (std::invalid_argument).
  std::unique_ptr<BoundaryStore> do_make_boundary_store(const Box& box, int steps,
                                                        RingPrecision precision) override;

  PropagatorSetup setup_; // setup_.layout: the scalar layout
  TtiWeights weights_;
  TtiPaddedCoefficients coef_;
  std::vector<float> prev_, cur_; // tti_layout
  std::vector<float> scratch_;    // pass 1's u and w_x, w_y, w_z of both fields (TtiScratch, zero halo)
  bool timing_on_ = false;
  mutable PropagatorTiming timing_;
};

// Source and receiver TTI fields with the image (S_p R_p) and the Born source (C (m S_p, 0)).
class CpuTtiShotFields final : public ShotFields {
public:
  explicit CpuTtiShotFields(const PropagatorSetup& setup);

private:
  void do_allocate_image(const Box& box) override;
  void do_accumulate_image(float weight) override;
  std::vector<float> do_download_image(bool illumination) const override {
    return illumination ? illumination_ : image_;
  }
  void do_set_image(const std::vector<float>& image, const std::vector<float>& illumination) override {
    image_ = image;
    illumination_ = illumination;
  }
  void do_set_born_perturbation(const Box&, const std::vector<float>& m) override { born_m_ = m; }
  void do_inject_born_source() override;

  CpuTtiWavefield source_, receiver_;
  std::vector<float> image_, illumination_, born_m_;
};

} // namespace rtm
