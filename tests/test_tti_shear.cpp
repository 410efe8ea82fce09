// The elliptic taper against the pseudo-acoustic TTI system's shear artefact
// (solvers/drivers/shear_taper.h; docs/physics.md, TTI, "The shear artefact"): its weights, the
// coefficients it changes and those it leaves alone, what the run says, its effect on qP travel
// times, and the flat-layer image of docs/rtm.md with and without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/tti_propagator.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/shear_taper.h"
#include "solvers/drivers/simulation.h"
#include "solvers/drivers/smoothing.h"
#include "solvers/drivers/tti_models.h"
#include "solvers/drivers/tti_setup.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/anisotropic_model.h"

namespace rtm {
namespace {

constexpr double kPi = 3.14159265358979323846;

using test::set_anisotropy;
using test::sponge;

double distance(const Position& a, const Position& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// w(d): 1 up to half the radius, a half-cosine down to 0 at the radius, 0 beyond; continuous and
// never rising with d.
TEST(ShearTaper, WeightIsOneWithinHalfTheRadiusAndFallsToZeroAtIt) {
  const double R = 80;
  EXPECT_EQ(shear_taper_weight(0, R), 1.0);
  EXPECT_EQ(shear_taper_weight(0.5 * R, R), 1.0);
  EXPECT_NEAR(shear_taper_weight(0.75 * R, R), 0.5, 1e-15);
  EXPECT_EQ(shear_taper_weight(R, R), 0.0);
  EXPECT_EQ(shear_taper_weight(3 * R, R), 0.0);
  EXPECT_EQ(shear_taper_weight(1.0, 0.0), 0.0); // no radius, no taper
  double before = 1;
  for (double d = 0; d <= 1.2 * R; d += R / 1000) {
    const double w = shear_taper_weight(d, R);
    EXPECT_LE(w, before) << d;
    EXPECT_LE(before - w, 1.0001 * kPi / 1000) << d; // continuous: the half-cosine's slope is at most pi / R
    before = w;
  }
}

// The weights of a block of planes are those of every cell's distance to its nearest point, by
// brute force: points on and between nodes, near the model's edges, repeated, with an origin and
// unequal spacing; the planes in pieces equal the whole.
TEST(ShearTaper, WeightsAreThoseOfTheNearestPoint) {
  VelocityModel shape;
  shape.nx = 23, shape.ny = 17, shape.nz = 19;
  shape.dx = 8, shape.dy = 10, shape.dz = 6;
  shape.ox = -40, shape.oy = 100, shape.oz = 5;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Position> points;
  for (int p = 0; p < 12; ++p)
    points.push_back({shape.oz + u(rng) * (shape.nz - 1) * shape.dz, shape.oy + u(rng) * (shape.ny - 1) * shape.dy,
                      shape.ox + u(rng) * (shape.nx - 1) * shape.dx});
  points.push_back({shape.oz, shape.oy, shape.ox});                     // a corner, on a node
  points.push_back({shape.oz + 3 * shape.dz, shape.oy + 2 * shape.dy, shape.ox + 9 * shape.dx}); // a node
  points.push_back(points.front());                                     // repeated
  ShearTaperOptions options;
  options.radius = 37;
  const ShearTaper taper = make_shear_taper(options, shape, points);
  EXPECT_EQ(taper.points.size(), points.size() - 1) << "a repeated position is kept once";
  const std::vector<float> w = shear_taper_weights(shape, taper, 0, shape.nz);
  ASSERT_EQ(w.size(), size_t(shape.cells()));
  size_t inside = 0, ramp = 0;
  for (int k = 0; k < shape.nz; ++k)
    for (int j = 0; j < shape.ny; ++j)
      for (int i = 0; i < shape.nx; ++i) {
        const Position cell{shape.oz + k * shape.dz, shape.oy + j * shape.dy, shape.ox + i * shape.dx};
        double nearest = INFINITY;
        for (const Position& p : points) nearest = std::min(nearest, distance(cell, p));
        const float want = float(shear_taper_weight(nearest, options.radius));
        const float got = w[(size_t(k) * shape.ny + j) * shape.nx + i];
        ASSERT_EQ(got, want) << "cell (z,y,x) = (" << k << "," << j << "," << i << "), nearest point " << nearest << " m";
        inside += got == 1.0f;
        ramp += got > 0 && got < 1;
      }
  EXPECT_GT(inside, 100u);
  EXPECT_GT(ramp, 100u);
  // Planes in pieces (a z-slab's own): the whole's bit for bit.
  for (int z0 : {0, 4, 11}) {
    const int z1 = std::min(shape.nz, z0 + 7);
    const std::vector<float> part = shear_taper_weights(shape, taper, z0, z1);
    const size_t plane = size_t(shape.nx) * shape.ny;
    EXPECT_TRUE(same_bits(part, std::vector<float>(w.begin() + ptrdiff_t(z0 * plane), w.begin() + ptrdiff_t(z1 * plane))))
        << "planes " << z0 << " to " << z1;
  }
}

// The default radius: kShearTaperCells cells of the largest spacing; off: radius 0, no weight; a bad
// radius refused naming the option. The checkpoint identity's line says which.
TEST(ShearTaper, DefaultRadiusIsTenCellsOfTheLargestSpacing) {
  VelocityModel shape;
  shape.nx = shape.ny = shape.nz = 10;
  shape.dx = 8, shape.dy = 12.5, shape.dz = 10;
  EXPECT_EQ(kShearTaperCells, 10.0);
  EXPECT_EQ(shear_taper_radius(ShearTaperOptions{}, shape), 125.0);
  EXPECT_TRUE(ShearTaperOptions{}.enabled) << "the taper is on by default";
  EXPECT_TRUE(ModelingParams{}.shear_taper.enabled);
  EXPECT_TRUE(MigrationParams{}.shear_taper.enabled);
  ShearTaperOptions given;
  given.radius = 60;
  EXPECT_EQ(shear_taper_radius(given, shape), 60.0);
  ShearTaperOptions off;
  off.enabled = false;
  EXPECT_EQ(shear_taper_radius(off, shape), 0.0);
  const ShearTaper none = make_shear_taper(off, shape, {{10.0, 10.0, 10.0}});
  EXPECT_FALSE(none.tapers());
  EXPECT_EQ(none.points.size(), 1u) << "the points stay for the note";
  const std::vector<float> w = shear_taper_weights(shape, none, 0, shape.nz);
  EXPECT_EQ(std::count(w.begin(), w.end(), 0.0f), ptrdiff_t(w.size()));
  ShearTaperOptions bad;
  bad.radius = -3;
  try {
    shear_taper_radius(bad, shape);
    FAIL() << "a negative radius was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--shear-taper-radius"), std::string::npos) << e.what();
  }
  EXPECT_EQ(shear_taper_identity(ShearTaperOptions{}, shape), "shear_taper = 125 m\n");
  EXPECT_EQ(shear_taper_identity(off, shape), "shear_taper = off\n");
}

// A TTI migration's checkpoint identity names the taper (a run that tapers otherwise does not
// resume its checkpoints); an isotropic run's identity has no such line.
TEST(ShearTaper, CheckpointIdentityNamesTheTaper) {
  VelocityModel model = constant_model(ModelShape{10, 10, 10, 10, 10, 10}, 2000);
  ShotFile shots;
  shots.nt = 10;
  shots.dt = 1e-3;
  shots.f0 = 15;
  shots.receivers = {{10.0, 10.0, 10.0}};
  ShotGather gather;
  gather.source = {20.0, 20.0, 20.0};
  gather.data.assign(10, 0.0f);
  shots.shots.push_back(gather);
  MigrationParams params;
  EXPECT_EQ(migration_identity(model, shots, "shots.h5", params).parameters.find("shear_taper"), std::string::npos);
  set_anisotropy(model, 0.3, 0.1, 0, 0);
  const std::string on = migration_identity(model, shots, "shots.h5", params).parameters;
  EXPECT_NE(on.find("anisotropy = tti"), std::string::npos) << on;
  EXPECT_NE(on.find("shear_taper = 100 m\n"), std::string::npos) << on;
  params.shear_taper.enabled = false;
  const std::string off = migration_identity(model, shots, "shots.h5", params).parameters;
  EXPECT_NE(off.find("shear_taper = off\n"), std::string::npos) << off;
}

// The TTI coefficients with a taper: within half the radius of a point S = sqrt(1 + 2 epsilon) (the
// medium is elliptic there), beyond the radius S is the untapered one bit for bit, between the two
// it lies between them; E and the axis are untouched everywhere; cells where epsilon = delta
// already stay as they were. The absorbing layers repeat the model's edge. Compute planes in
// pieces (a z-slab's) equal the whole's bit for bit.
TEST(ShearTaper, CoefficientsAreEllipticNearThePointsAndUntouchedBeyondTheRadius) {
  const ModelShape shape{30, 12, 26, 10, 10, 10};
  VelocityModel model = layered_model(shape, {120}, {2000, 2500});
  set_anisotropy(model, 0.3, 0.1, 30, 20);
  for (size_t c = 0; c < size_t(model.cells()); ++c) // an elliptic column at x = 25
    if (c % size_t(model.nx) == 25) model.anisotropy.delta[c] = model.anisotropy.epsilon[c];
  SimulationGrid sim = make_simulation_grid(model, sponge(6), 0.0);
  const TtiCoefficients plain = compute_tti_coefficients(sim);
  const std::vector<Position> points = {{20.0, 55.0, 44.0}, {20.0, 55.0, 150.0}, {173.0, 60.0, 240.0}};
  ShearTaperOptions options;
  options.radius = 60;
  sim.shear_taper = std::make_shared<const ShearTaper>(make_shear_taper(options, sim.model, points));
  const TtiCoefficients tapered = compute_tti_coefficients(sim);
  EXPECT_TRUE(same_bits(tapered.e, plain.e));
  EXPECT_TRUE(same_bits(tapered.nx, plain.nx) && same_bits(tapered.ny, plain.ny) && same_bits(tapered.nz, plain.nz));
  const GridLayout& g = sim.layout;
  const float elliptic = float(std::sqrt(1.0 + 2.0 * 0.3));
  size_t inner = 0, ramp = 0, beyond = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const int mk = std::clamp(k - sim.pad_z_lo, 0, model.nz - 1), mj = std::clamp(j - sim.pad_y_lo, 0, model.ny - 1),
                  mi = std::clamp(i - sim.pad_x_lo, 0, model.nx - 1);
        const Position at{mk * 10.0, mj * 10.0, mi * 10.0};
        double d = INFINITY;
        for (const Position& p : points) d = std::min(d, distance(at, p));
        const size_t c = (size_t(k) * g.ny + j) * g.nx + i;
        if (d >= options.radius || mi == 25) {
          ASSERT_EQ(tapered.s[c], plain.s[c]) << "compute cell (" << k << "," << j << "," << i << "), " << d << " m away";
          beyond += mi != 25;
        } else if (d <= 0.5 * options.radius) {
          ASSERT_EQ(tapered.s[c], elliptic) << "compute cell (" << k << "," << j << "," << i << "), " << d << " m away";
          ++inner;
        } else {
          ASSERT_GT(tapered.s[c], plain.s[c]);
          ASSERT_LT(tapered.s[c], elliptic);
          ++ramp;
        }
      }
  EXPECT_GT(inner, 50u);
  EXPECT_GT(ramp, 50u);
  EXPECT_GT(beyond, 1000u);
  for (int k0 : {0, 9, 17}) {
    const int k1 = std::min(g.nz, k0 + 11);
    const TtiCoefficients part = compute_tti_coefficient_planes(sim, sim.model, 0, k0, k1);
    const size_t plane = size_t(g.nx) * g.ny;
    EXPECT_TRUE(same_bits(part.s, std::vector<float>(tapered.s.begin() + ptrdiff_t(k0 * plane),
                                                     tapered.s.begin() + ptrdiff_t(k1 * plane))))
        << "compute planes " << k0 << " to " << k1;
  }
}

// What the run says: with the taper, the radius, the points, how many of them sat where epsilon >
// delta and the cells changed; with it off, the points where epsilon > delta and the remedy;
// nothing where the model is elliptic around the points, or for an isotropic model.
TEST(ShearTaper, NoteSaysWhatWasTapered) {
  VelocityModel model = constant_model(ModelShape{10, 10, 10, 10, 10, 10}, 2000);
  set_anisotropy(model, 0.3, 0.1, 20, 0);
  for (size_t c = 0; c < 500; ++c) model.anisotropy.delta[c] = 0.3f; // the top half elliptic
  const std::vector<Position> points = {{10.0, 20.0, 30.0}, {60.0, 50.0, 50.0}, {90.0, 0.0, 0.0}, {60.0, 50.0, 50.0}};
  ShearTaperOptions options;
  options.radius = 20;
  const ShearTaper taper = make_shear_taper(options, model, points);
  std::ostringstream info;
  const ShearTaperSummary s = note_shear_taper(model, taper, info);
  EXPECT_EQ(s.anisotropic.count, 2u);
  EXPECT_NEAR(s.anisotropic.worst, 0.2, 1e-6);
  uint64_t want_cells = 0;
  const std::vector<float> w = shear_taper_weights(model, taper, 0, model.nz);
  for (size_t c = 500; c < w.size(); ++c) want_cells += w[c] > 0;
  EXPECT_EQ(s.cells, want_cells);
  EXPECT_GT(s.cells, 20u);
  EXPECT_NE(info.str().find("delta blended towards epsilon within 20 m (elliptic within 10 m) of the 3 source and "
                            "receiver position(s), 2 of them where epsilon > delta (up to epsilon - delta = 0.2"),
            std::string::npos)
      << info.str();
  EXPECT_NE(info.str().find(": " + std::to_string(want_cells) + " model cell(s) changed"), std::string::npos) << info.str();

  ShearTaperOptions off;
  off.enabled = false;
  std::ostringstream off_info;
  EXPECT_EQ(note_shear_taper(model, make_shear_taper(off, model, points), off_info).cells, 0u);
  EXPECT_NE(off_info.str().find("2 of 3 source and receiver position(s) sit where epsilon > delta"), std::string::npos)
      << off_info.str();
  EXPECT_NE(off_info.str().find("--shear-taper is off"), std::string::npos) << off_info.str();

  std::ostringstream quiet; // points in the elliptic half, out of reach of the rest
  EXPECT_EQ(note_shear_taper(model, make_shear_taper(options, model, {{10.0, 20.0, 30.0}}), quiet).cells, 0u);
  const VelocityModel iso = constant_model(ModelShape{10, 10, 10, 10, 10, 10}, 2000);
  EXPECT_EQ(note_shear_taper(iso, make_shear_taper(options, iso, points), quiet).cells, 0u);
  EXPECT_EQ(quiet.str(), "");
}

// model_shots tapers by default around every source and receiver (it says so) and not with the
// taper off (it says that too): the traces differ.
TEST(ShearTaper, ModelingTapersEverySourceAndReceiverByDefault) {
  VelocityModel model = constant_model(ModelShape{24, 10, 24, 10, 10, 10}, 2000);
  set_anisotropy(model, 0.3, 0.1, 30, 0);
  Acquisition acq;
  acq.sources = {{50.0, 45.0, 60.0}};
  acq.receivers = {{50.0, 45.0, 170.0}, {180.0, 45.0, 120.0}};
  ModelingParams params;
  params.wavelet.f0 = 15;
  params.record_time = 0.2;
  params.boundary = sponge(6);
  params.backend.backend = "cpu";
  std::ostringstream log;
  const ShotFile on = model_shots(model, acq, params, log);
  EXPECT_NE(log.str().find("TTI shear-artefact taper: delta blended towards epsilon within 100 m (elliptic within "
                           "50 m) of the 3 source and receiver position(s), 3 of them where epsilon > delta"),
            std::string::npos)
      << log.str();
  params.shear_taper.enabled = false;
  std::ostringstream off_log;
  const ShotFile off = model_shots(model, acq, params, off_log);
  EXPECT_NE(off_log.str().find("3 of 3 source and receiver position(s) sit where epsilon > delta"), std::string::npos)
      << off_log.str();
  ASSERT_EQ(on.shots.size(), 1u);
  ASSERT_EQ(off.shots.size(), 1u);
  EXPECT_FALSE(on.shots[0].data == off.shots[0].data) << "the taper changed nothing";
}

// The qP wave's phase velocity at angle theta from the axis: the fast root of the dispersion
// relation of docs/physics.md (TTI), and its group velocity and angle.
double qp_phase_velocity(double vp, double eps, double delta, double theta) {
  const double s2 = std::sin(theta) * std::sin(theta), c2 = std::cos(theta) * std::cos(theta);
  const double a = (1 + 2 * eps) * s2 + c2;
  return vp * std::sqrt(0.5 * (a + std::sqrt(a * a - 8 * (eps - delta) * s2 * c2)));
}
struct Ray {
  double velocity = 0, angle = 0; // group velocity and group angle from the axis
};
Ray qp_ray(double vp, double eps, double delta, double theta) {
  const double h = 1e-6, v = qp_phase_velocity(vp, eps, delta, theta);
  const double dv = (qp_phase_velocity(vp, eps, delta, theta + h) - qp_phase_velocity(vp, eps, delta, theta - h)) / (2 * h);
  return {std::hypot(v, dv), theta + std::atan2(dv, v)};
}
// The group velocity along a ray at `angle` from the axis (0 to pi/2): the phase angle whose ray
// that is, by bisection (the qP wavefront is convex: the group angle grows with the phase angle).
double qp_group_velocity(double vp, double eps, double delta, double angle) {
  double lo = 0, hi = kPi / 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (qp_ray(vp, eps, delta, mid).angle < angle ? lo : hi) = mid;
  }
  return qp_ray(vp, eps, delta, 0.5 * (lo + hi)).velocity;
}

// Time of the largest value of trace r ([receiver][t]) within [t_lo, t_hi] seconds, refined by the
// parabola through it and its neighbours.
double peak_time(const std::vector<float>& data, int r, int nt, double dt, double t_lo, double t_hi) {
  const float* t = data.data() + size_t(r) * size_t(nt);
  const int first = std::max(1, int(t_lo / dt)), last = std::min(nt - 2, int(t_hi / dt));
  int best = first;
  for (int i = first; i <= last; ++i)
    if (t[i] > t[best]) best = i;
  const double a = t[best - 1], b = t[best], c = t[best + 1];
  return (best + 0.5 * (a - c) / (a - 2 * b + c)) * dt;
}

// qP travel times away from the taper's regions: a homogeneous medium (vp 2000, epsilon 0.3, delta
// 0.1: the flat-layer case's anisotropy), its axis vertical (VTI) or tilted 45 degrees in the x-z
// plane, modeled by model_shots with the default taper (radius 100 m = 10 cells) around the source
// and each receiver. For each direction (along the axis, across it, 45 degrees from it) a receiver
// 24 cells from the source on one side and 44 on the other (on nodes, 17 and 31 cells along both
// axes for the diagonal directions): both outside the source's region, the regions apart, each
// receiver's own region crossed by its wave alike (the medium is centrally symmetric), and 11 cells
// or more inside the model's edges. The travel time from the near distance to the far one,
// t_far - t_near, from the traces' peaks, against the analytic (r_far - r_near) / v_group of the
// untapered medium (the qP root of docs/physics.md's TTI dispersion relation): within 0.5% in
// every direction. f0 20 Hz on 10 m cells: 4 points per shortest wavelength (f_max = 2.5 f0), the
// dispersion rule's limit, and the time-dispersion transforms on (model_shots' default), so that
// the stencil's error is small; a lower f0 puts the receivers fewer wavelengths from the source and
// the sponge, and the peaks move by up to 0.4% without any taper. The times from the source are
// checked too: along and across the axis within 0.5% of r / v_group (the phase velocity there does
// not depend on delta, so the taper changes nothing), 45 degrees from it early by the estimate of
// docs/physics.md within 25%, at both distances: the elliptic regions are faster. With the taper
// over the whole model (radius 10 km) the 45-degree travel time is 3.2% short and the test fails.
TEST(ShearTaperKinematics, QpTravelTimesAwayFromTheTaperAreTheAnalyticOnes) {
  const double vp = 2000, eps = 0.3, delta = 0.1, h = 10, f0 = 20;
  const int half = 55, nxz = 2 * half + 1, ny = 31;
  for (const double tilt : {0.0, 45.0}) {
    VelocityModel model = constant_model(ModelShape{nxz, ny, nxz, h, h, h}, vp);
    set_anisotropy(model, eps, delta, tilt, 0);
    const Position src{half * h, (ny / 2) * h, half * h};
    // Unit directions in (x, z) cells: along the axis, across it, 45 degrees from it.
    struct Direction {
      const char* name;
      int x, z;         // the near receiver's offset in cells (the far one: -x, -z scaled)
      int far_x, far_z;
      double angle;     // from the axis, radians
    };
    std::vector<Direction> dirs;
    if (tilt == 0)
      dirs = {{"along the axis (z)", 0, 24, 0, -44, 0}, {"across the axis (x)", 24, 0, -44, 0, kPi / 2},
              {"45 degrees from the axis (x = z)", 17, 17, -31, -31, kPi / 4}};
    else
      dirs = {{"along the axis (x = z)", 17, 17, -31, -31, 0}, {"across the axis (x = -z)", 17, -17, -31, 31, kPi / 2},
              {"45 degrees from the axis (z)", 0, 24, 0, -44, kPi / 4}};
    Acquisition acq;
    acq.sources = {src};
    for (const Direction& d : dirs) {
      acq.receivers.push_back({src[0] + d.z * h, src[1], src[2] + d.x * h});
      acq.receivers.push_back({src[0] + d.far_z * h, src[1], src[2] + d.far_x * h});
    }
    ModelingParams params;
    params.wavelet.f0 = f0;
    params.boundary = sponge(10);
    params.backend.backend = "cpu";
    const double slowest = qp_group_velocity(vp, eps, delta, 0);
    params.record_time = default_ricker_delay(f0) + 44 * h / slowest + 1.0 / f0;
    std::ostringstream log;
    const ShotFile shots = model_shots(model, acq, params, log);
    ASSERT_NE(log.str().find("TTI shear-artefact taper"), std::string::npos) << log.str();
    ASSERT_EQ(shots.shots.size(), 1u);
    const std::vector<float>& data = shots.shots[0].data;
    for (size_t d = 0; d < dirs.size(); ++d) {
      const double r_near = std::hypot(dirs[d].x, dirs[d].z) * h, r_far = std::hypot(dirs[d].far_x, dirs[d].far_z) * h;
      const double v = qp_group_velocity(vp, eps, delta, dirs[d].angle);
      auto pick = [&](int r, double distance) {
        const double expected = shots.t0 + distance / v;
        return peak_time(data, r, shots.nt, shots.dt, expected - 0.5 / f0, expected + 0.5 / f0);
      };
      const double t_near = pick(int(2 * d), r_near), t_far = pick(int(2 * d + 1), r_far);
      const double measured = t_far - t_near, analytic = (r_far - r_near) / v;
      std::printf("tilt %2.0f, %-34s group velocity %.1f m/s: t_far - t_near %.5f s, analytic %.5f s (%+.3f%%); from "
                  "the source %+.3f%% (near), %+.3f%% (far)\n",
                  tilt, dirs[d].name, v, measured, analytic, 100 * (measured / analytic - 1),
                  100 * ((t_near - shots.t0) / (r_near / v) - 1), 100 * ((t_far - shots.t0) / (r_far / v) - 1));
      EXPECT_NEAR(measured / analytic, 1.0, 0.005) << "tilt " << tilt << ", " << dirs[d].name;
      if (dirs[d].angle == 0 || dirs[d].angle == kPi / 2) { // delta plays no part: nothing changes
        EXPECT_NEAR((t_near - shots.t0) / (r_near / v), 1.0, 0.005) << "tilt " << tilt << ", " << dirs[d].name;
        EXPECT_NEAR((t_far - shots.t0) / (r_far / v), 1.0, 0.005) << "tilt " << tilt << ", " << dirs[d].name;
      } else { // early by the two regions' 0.75 R (1 / v - 1 / v_elliptic) each (docs/physics.md)
        const double radius = shear_taper_radius(params.shear_taper, model);
        const double advance = 2 * 0.75 * radius * (1 / v - 1 / qp_group_velocity(vp, eps, eps, dirs[d].angle));
        std::printf("  45 degrees: early by %.2f ms (near) and %.2f ms (far); estimate %.2f ms\n",
                    1e3 * (shots.t0 + r_near / v - t_near), 1e3 * (shots.t0 + r_far / v - t_far), 1e3 * advance);
        EXPECT_NEAR(shots.t0 + r_near / v - t_near, advance, 0.25 * advance);
        EXPECT_NEAR(shots.t0 + r_far / v - t_far, advance, 0.25 * advance);
      }
    }
  }
}

// What the radius buys near an isolated point (docs/physics.md, "The shear artefact", the radius):
// a homogeneous medium (vp 2000, epsilon 0.3, delta 0.1, axis tilted 45 degrees), a source off the
// grid (its sinc stencil spread over 8 nodes per axis), tapered around it alone with radii of 0 to
// 14 cells. When the qP wave's peak has travelled 30 cells along the axis (its slowest direction;
// its tail past 17 cells), p's energy within 12 cells of the source is what the slow artefact left
// behind: printed against the untapered run's, with the energy of the whole model.
//   build/tests/test_tti_shear --gtest_also_run_disabled_tests --gtest_filter='*Measure*'
TEST(ShearTaperMeasure, DISABLED_MeasureArtefactLeftNearAPointAgainstTheRadius) {
  const double vp = 2000, eps = 0.3, delta = 0.1, h = 10, f0 = 15;
  const int half = 44, n = 2 * half + 1, near = 12;
  VelocityModel model = constant_model(ModelShape{n, n, n, h, h, h}, vp);
  set_anisotropy(model, eps, delta, 45, 0);
  const Position src{half * h + 3.0, half * h + 5.0, half * h + 4.0};
  double untapered = 0;
  for (const double cells : {0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 14.0}) {
    SimulationGrid sim = make_simulation_grid(model, sponge(10), 0.0);
    ShearTaperOptions options;
    options.enabled = cells > 0;
    options.radius = cells * h;
    sim.shear_taper = std::make_shared<const ShearTaper>(make_shear_taper(options, sim.model, {src}));
    CpuTtiWavefield field(make_propagator_setup(sim));
    const int nt = int((default_ricker_delay(f0) + 30 * h / vp) / sim.dt);
    auto source = field.add_points({locate_point(sim, src, "source")}, nt);
    source->upload_series(ricker_wavelet(nt, sim.dt, f0, default_ricker_delay(f0)));
    auto receiver = field.add_points({locate_point(sim, {0.0, 0.0, 0.0}, "receiver")}, nt);
    field.zero_state();
    model_one_shot(field, sim.injection_scale(), *source, *receiver, 1, nt);
    std::vector<float> p;
    field.copy_current(model_box(sim), p);
    double inside = 0, all = 0;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const double v = p[(size_t(k) * n + j) * n + i];
          all += v * v;
          if (distance({k * h, j * h, i * h}, src) < near * h) inside += v * v;
        }
    if (cells == 0) untapered = inside;
    std::printf("radius %4.1f cells: energy within %d cells %.3e (%.4f of the untapered run's), %.4f of the model's\n",
                cells, near, inside, inside / untapered, inside / all);
  }
}

// The taper's set-up cost on a large survey: a 512^3 model of 10 m cells, a receiver on every cell
// of the surface 20 m down (262144) and 256 sources between them, the default radius (10 cells): the
// weights of every plane a point reaches (ShearTaperPlanes, as the coefficients take them) and the
// note's count of the cells changed, in seconds of this machine, with the threads OpenMP gives.
TEST(ShearTaperMeasure, DISABLED_MeasureCostOfTheWeights) {
  const int n = 512;
  VelocityModel shape = constant_model(ModelShape{n, n, 1, 10, 10, 10}, 2000);
  shape.nz = n; // the shape alone: no values are read
  std::vector<Position> points;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) points.push_back({20.0, j * 10.0, i * 10.0});
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i) points.push_back({20.0, 5.0 + j * 320.0, 5.0 + i * 320.0});
  const auto start = std::chrono::steady_clock::now();
  const ShearTaper taper = make_shear_taper(ShearTaperOptions{}, shape, points);
  const auto made = std::chrono::steady_clock::now();
  const ShearTaperPlanes planes(shape, taper, 0, n);
  const auto done = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(done - made).count();
  std::printf("%zu positions (%zu distinct), radius %g m: sorted in %.2f s; weights of %d planes (%.0f MB) in %.2f s\n",
              points.size(), taper.points.size(), taper.radius, std::chrono::duration<double>(made - start).count(),
              planes.reached(), planes.reached() * double(n) * n * 4 / 1e6, seconds);
  EXPECT_EQ(planes.reached(), 12); // z = 0 to 110 m: within 100 m of the points at 20 m
}

// The share of an image's energy ([z][y][x]) from plane k_first down in the top quarter of the x
// wavenumbers: docs/rtm.md's NumPy measure (rfft along x, the bins from 3/4 of their count on).
double grid_scale_share(const std::vector<float>& image, int nx, int ny, int nz, int k_first) {
  const int bins = nx / 2 + 1, top = 3 * bins / 4; // numpy's rfft bins; the top quarter from `top` on
  double all = 0, high = 0;
  for (int k = k_first; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      const float* row = image.data() + (size_t(k) * ny + j) * size_t(nx);
      for (int m = 0; m < bins; ++m) {
        double re = 0, im = 0;
        for (int i = 0; i < nx; ++i) {
          re += row[i] * std::cos(2 * kPi * m * i / nx);
          im -= row[i] * std::sin(2 * kPi * m * i / nx);
        }
        const double power = re * re + im * im;
        all += power;
        if (m >= top) high += power;
      }
    }
  return high / all;
}

// The depth (cells) of the largest value of the laterally averaged trace (x from 10 to 49) within
// 12 cells from k0, refined by a parabola.
double reflector_depth(const std::vector<float>& image, int nx, int ny, int k0) {
  std::vector<double> trace;
  for (int k = k0 - 1; k <= k0 + 12; ++k) {
    double sum = 0;
    for (int j = 0; j < ny; ++j)
      for (int i = 10; i < 50; ++i) sum += image[(size_t(k) * ny + j) * size_t(nx) + i];
    trace.push_back(sum);
  }
  int best = 1;
  for (int t = 1; t <= 12; ++t)
    if (trace[size_t(t)] > trace[size_t(best)]) best = t;
  const double a = trace[size_t(best - 1)], b = trace[size_t(best)], c = trace[size_t(best + 1)];
  return k0 - 1 + best + 0.5 * (a - c) / (a - 2 * b + c);
}

// The flat-layer case of docs/rtm.md ("Isotropic against TTI migration of an anisotropic model")
// with epsilon 0.3 and delta 0.1 in every layer, the acquisition included: modeled and migrated as
// the page's commands do (3 shots, 60 receivers at 20 m, f0 15 Hz, 0.5 s, sponge of 15 cells,
// migration velocity smoothed over 40 m, mute to 60 m, direct wave muted at 2600 m/s), both with
// the taper as `options` say. The final image, [z][y][x].
constexpr int kFlatNx = 60, kFlatNy = 8, kFlatNz = 50;
constexpr double kFlatInterfaces[2] = {14.5, 31.5}; // cells: between the layers' last and first rows
constexpr int kBelowMute = 7; // the first plane below the 60 m mute, as docs/rtm.md's script takes it

std::vector<float> flat_layer_image(const ShearTaperOptions& options) {
  const ModelShape shape{kFlatNx, kFlatNy, kFlatNz, 10, 10, 10};
  VelocityModel model = layered_model(shape, {150, 320}, {2000, 2400, 2800});
  set_layered_anisotropy(model, {150, 320}, {0.3, 0.3, 0.3}, {0.1, 0.1, 0.1}, 45, 0);
  const Acquisition acq = default_line_survey(model, 3, 20);
  ModelingParams modeling;
  modeling.wavelet.f0 = 15;
  modeling.record_time = 0.5;
  modeling.boundary = sponge(15);
  modeling.backend.backend = "cpu";
  modeling.shear_taper = options;
  std::ostringstream log;
  const ShotFile shots = model_shots(model, acq, modeling, log);
  MigrationParams params;
  params.boundary = sponge(15);
  params.image_mute_depth = 60;
  params.direct_wave_velocity = 2600;
  params.backend.backend = "cpu";
  params.shear_taper = options;
  return migrate_shots(smooth_model(model, 40), shots, params, log).image;
}

// With the default taper at most 3% of the image's energy below the mute lies in the top quarter
// of the lateral (x) wavenumbers, and both reflectors are within a cell of their interfaces.
TEST(ShearTaperImage, FlatLayerTtiImageHoldsAtMostThreePercentAtGridScale) {
  const std::vector<float> image = flat_layer_image(ShearTaperOptions{});
  const double share = grid_scale_share(image, kFlatNx, kFlatNy, kFlatNz, kBelowMute);
  const double z1 = reflector_depth(image, kFlatNx, kFlatNy, int(kFlatInterfaces[0]) - 5);
  const double z2 = reflector_depth(image, kFlatNx, kFlatNy, int(kFlatInterfaces[1]) - 5);
  std::printf("flat layers, epsilon 0.3 and delta 0.1 everywhere, the default taper: top quarter of the x "
              "wavenumbers %.4f of the image; reflectors at %.2f and %.2f cells (interfaces %.1f and %.1f)\n",
              share, z1, z2, kFlatInterfaces[0], kFlatInterfaces[1]);
  EXPECT_LE(share, 0.03);
  EXPECT_NEAR(z1, kFlatInterfaces[0], 1.0);
  EXPECT_NEAR(z2, kFlatInterfaces[1], 1.0);
}

// The same modeled and migrated with --shear-taper off: the artefact covers the image, far above the
// 3% of the test above, so that test sees what the taper removes (docs/rtm.md: 28%).
TEST(ShearTaperImage, WithoutTheTaperTheFlatLayerImageIsGridScaleNoise) {
  ShearTaperOptions off;
  off.enabled = false;
  const std::vector<float> image = flat_layer_image(off);
  const double share = grid_scale_share(image, kFlatNx, kFlatNy, kFlatNz, kBelowMute);
  std::printf("flat layers, epsilon 0.3 and delta 0.1 everywhere, no taper: top quarter of the x wavenumbers "
              "%.4f of the image\n", share);
  EXPECT_GT(share, 0.2);
}

} // namespace
} // namespace rtm
