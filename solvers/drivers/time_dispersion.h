// Time-dispersion transforms (Koene, Robertsson, Broggini and Andersson 2018, "Eliminating time
// dispersion from seismic wave modeling", Geophys. J. Int. 213(1), 169-180; docs/physics.md,
// "Time dispersion").
//
// The 2nd-order time stepping answers at frequency w what the time-continuous equation answers at
// w_fd = (2/dt) sin(w dt/2). Two linear operators on a trace sampled at the time step undo that:
//   add    (FTDT): Y(w) = X( 2/dt sin(w dt/2) )                    for the source wavelet, before;
//   remove (ITDT): Y(W) = X( 2/dt arcsin(W dt/2) ) for W dt < 2, 0 above, for recorded traces, after.
// Both are dt-free in samples (w dt is all that enters) and exact up to the band W dt < 2 (far
// above any wavelet the grid resolves) and the trace's own length: the trace is taken as zero
// outside [0, nt), and the result is computed on a grid twice as long so nothing wraps around.
#pragma once

#include <vector>

namespace rtm {

enum class TimeDispersion {
  add,    // forward transform (FTDT): makes a wavelet what the time stepping needs
  remove, // inverse transform (ITDT): makes a modelled trace the time-continuous one
};

// One transform for traces of nt samples, as an nt x nt matrix (nt^2 x 4 bytes, built in
// O(nt N log N), N the padded length >= 2 nt) applied as y = M x: nt^2 multiply-adds per trace.
// Traces longer than kMaxMatrixSamples are transformed by direct evaluation instead (no matrix,
// about 8 nt N flops per trace).
class TimeDispersionTransform {
 public:
  TimeDispersionTransform(int nt, TimeDispersion direction);
  int nt() const { return nt_; }
  // traces: [ntraces][nt], transformed in place (traces in parallel; each trace's result does
  // not depend on the thread count).
  void apply(std::vector<float>& traces) const;

  static constexpr int kMaxMatrixSamples = 12000; // 576 MB of matrix

 private:
  int nt_;
  TimeDispersion direction_;
  std::vector<float> matrix_; // [m][n]: output sample m from input sample n; empty: direct
};

// The transform of one trace by direct evaluation of the two sums (the definition; O(nt N)).
// The reference the matrix is checked against.
std::vector<double> time_dispersion_direct(const std::vector<double>& trace, TimeDispersion direction);

// One trace (a wavelet) transformed by direct evaluation: no matrix is built.
std::vector<float> time_dispersion_transformed(const std::vector<float>& trace, TimeDispersion direction);

// The padded length the transforms use for nt samples: the power of two >= 2 nt.
int time_dispersion_padded_length(int nt);

} // namespace rtm
