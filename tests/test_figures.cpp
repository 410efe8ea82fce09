// Figures (io/figure_spec.h, io/figure_source.h, io/figure.h, `rtm plot`): slice positions and their
// refusals, the clip shown against the data, decibels, equal metres per pixel across the views,
// gather against volume detection, and the PNG files themselves (read back with libpng, an
// independent decoder). The drawing tests skip themselves in a build without Cairo; the rest run in
// every build.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>

#include "solvers/contracts/errors.h"
#include "io/figure.h"
#include "io/figure_source.h"
#include "io/figure_spec.h"
#include "solvers/contracts/format.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const rtm::InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

rtm::VelocityModel grid(int nx, int ny, int nz, double dx, double dy, double dz) {
  rtm::VelocityModel m;
  m.nx = nx, m.ny = ny, m.nz = nz;
  m.dx = dx, m.dy = dy, m.dz = dz;
  m.vp.assign(size_t(nx) * ny * nz, 2000.0f);
  return m;
}

struct RgbImage {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  std::array<int, 3> at(int x, int y) const {
    const size_t i = 3 * (size_t(y) * width + x);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

RgbImage read_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  RgbImage result;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return result;
  }
  image.format = PNG_FORMAT_RGB;
  result.width = int(image.width), result.height = int(image.height);
  result.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, result.rgb.data(), 0, nullptr))
    ADD_FAILURE() << path << ": " << image.message;
  return result;
}

class FigureFiles : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("rtm_figures_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

#define SKIP_WITHOUT_FIGURES()                                                                      \
  if (!rtm::figures_supported()) GTEST_SKIP() << "this build has no figure support (no Cairo)"

} // namespace

// ---- Slice positions --------------------------------------------------------------------------

TEST(SliceOption, ParsesAnySubsetOfTheAxesInMetres) {
  const rtm::SlicePosition all = rtm::parse_slice_option("x=600,y=300.5,z=450");
  EXPECT_EQ(all.x, 600.0);
  EXPECT_EQ(all.y, 300.5);
  EXPECT_EQ(all.z, 450.0);
  const rtm::SlicePosition some = rtm::parse_slice_option(" z = -12.5 , x=1e3");
  EXPECT_FALSE(some.y.has_value());
  EXPECT_EQ(some.z, -12.5);
  EXPECT_EQ(some.x, 1000.0);
}

TEST(SliceOption, RefusesBadTextNamingTheOption) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"", "--slice: empty"},
           {"x", "'x' is not axis=metres"},
           {"x=", "x = '' is not a number of metres"},
           {"x=abc", "x = 'abc' is not a number of metres"},
           {"x=12m", "x = '12m' is not a number"},
           {"x=1e999", "is not a number of metres"},
           {"w=3", "unknown axis 'w'; the axes are x, y, z"},
           {"x=1,x=2", "x is given twice"},
           {"x=1,", "'' is not axis=metres"}}) {
    SCOPED_TRACE(text);
    EXPECT_THAT(input_error([&] { rtm::parse_slice_option(text); }),
                AllOf(HasSubstr("--slice"), HasSubstr(expected)));
  }
}

TEST(SliceOption, LocatesTheNearestCellAndDefaultsToTheMiddle) {
  rtm::VelocityModel g = grid(120, 60, 80, 12.5, 10, 5);
  g.ox = 1000; // positions are model coordinates: the origin counts
  const rtm::SliceCells middle = rtm::locate_slices({}, g);
  EXPECT_EQ(middle.i, 60);
  EXPECT_EQ(middle.j, 30);
  EXPECT_EQ(middle.k, 40);
  EXPECT_DOUBLE_EQ(middle.x, 1000 + 60 * 12.5);
  EXPECT_DOUBLE_EQ(middle.z, 200);
  const rtm::SliceCells chosen = rtm::locate_slices(rtm::parse_slice_option("x=1106,z=3.1"), g);
  EXPECT_EQ(chosen.i, 8); // 106 / 12.5 = 8.48
  EXPECT_DOUBLE_EQ(chosen.x, 1100);
  EXPECT_EQ(chosen.j, 30);
  EXPECT_EQ(chosen.k, 1);
  // Within half a cell of the ends counts as the end cell.
  EXPECT_EQ(rtm::locate_slices(rtm::parse_slice_option("x=993.75"), g).i, 0);
  EXPECT_EQ(rtm::locate_slices(rtm::parse_slice_option("z=397.5"), g).k, 79);
}

TEST(SliceOption, RefusesPositionsOutsideNamingTheValidRangeInMetres) {
  rtm::VelocityModel g = grid(120, 60, 80, 12.5, 10, 5);
  g.ox = 1000;
  EXPECT_THAT(input_error([&] { rtm::locate_slices(rtm::parse_slice_option("x=500"), g); }),
              HasSubstr("--slice x=500: outside the model, whose x runs from 1000 m to 2487.5 m "
                        "(120 cells of 12.5 m)"));
  EXPECT_THAT(input_error([&] { rtm::locate_slices(rtm::parse_slice_option("y=-6"), g); }),
              HasSubstr("--slice y=-6: outside the model, whose y runs from 0 m to 590 m"));
  EXPECT_THAT(input_error([&] { rtm::locate_slices(rtm::parse_slice_option("z=398"), g); }),
              HasSubstr("whose z runs from 0 m to 395 m"));
}

// ---- Colour scales ----------------------------------------------------------------------------

TEST(ColourScale, ClipIsThePercentileOfTheMagnitudes) {
  std::vector<float> values;
  for (int n = 1; n <= 1000; ++n) values.push_back(float(n % 2 ? n : -n)); // |v| = 1..1000
  values.push_back(NAN); // ignored
  EXPECT_DOUBLE_EQ(rtm::percentile_clip(values, 99), 990);
  EXPECT_DOUBLE_EQ(rtm::percentile_clip(values, 100), 1000);
  EXPECT_DOUBLE_EQ(rtm::percentile_clip(values, 50), 500);
  EXPECT_DOUBLE_EQ(rtm::percentile_clip(std::vector<float>(10, 0.0f), 99), 1.0) << "all zero";
  std::vector<float> sparse(100, 0.0f);
  sparse[7] = -3;
  EXPECT_DOUBLE_EQ(rtm::percentile_clip(sparse, 90), 3) << "a percentile on zeros: the maximum";
  EXPECT_THAT(input_error([] { rtm::percentile_clip({1.0f}, 0); }), HasSubstr("percentile 0"));
}

TEST(ColourScale, ImageFigureShowsTheClipTheDataGive) {
  // Random-looking signed values with a few huge outliers (a source footprint).
  rtm::VelocityModel g = grid(20, 10, 15, 10, 10, 10);
  std::vector<float> image(g.vp.size());
  for (size_t n = 0; n < image.size(); ++n) image[n] = float(std::sin(0.37 * double(n)) * (1 + n % 7));
  image[5] = 1e6f, image[77] = -1e6f;
  std::vector<float> sorted;
  for (float v : image) sorted.push_back(std::abs(v));
  std::sort(sorted.begin(), sorted.end());
  const double expected = sorted[size_t(std::ceil(0.99 * double(sorted.size()))) - 1];
  rtm::FigureOptions options;
  options.clip_percentile = 99;
  const rtm::Figure f = rtm::volume_figure(g, image, rtm::VolumeKind::signed_field, "image",
                                           "relative amplitude", "image.h5",
                                           rtm::locate_slices({}, g), options);
  EXPECT_DOUBLE_EQ(f.scale.hi, expected);
  EXPECT_DOUBLE_EQ(f.scale.lo, -expected);
  EXPECT_LT(f.scale.hi, 100) << "the outliers do not set the clip";
  EXPECT_THAT(f.scale.caption, HasSubstr("clip \u00b1" + rtm::format_number(expected, 4) +
                                         " = 99th percentile of |image|"));
  EXPECT_EQ(f.scale.label, "image (relative amplitude)");
  EXPECT_THAT(f.title, HasSubstr("image of image.h5: 20 x 10 x 15 cells of 10 x 10 x 10 m"));
}

TEST(SideBySide, RightFigureBesideTheLeftOnTheLeftsScaleEachClippedAtItsOwnPercentile) {
  rtm::VelocityModel g = grid(20, 10, 15, 10, 10, 10);
  std::vector<float> a(g.vp.size()), b(g.vp.size());
  for (size_t n = 0; n < a.size(); ++n) {
    a[n] = float(std::sin(0.37 * double(n)));
    b[n] = 10.0f * a[n]; // ten times louder: the same picture once each is clipped at its own
  }
  const rtm::SliceCells at = rtm::locate_slices({}, g);
  const rtm::Figure left = rtm::volume_figure(g, a, rtm::VolumeKind::signed_field, "image", "", "a.h5", at);
  const rtm::Figure right = rtm::volume_figure(g, b, rtm::VolumeKind::signed_field, "image", "", "b.h5", at);
  const rtm::Figure f = rtm::side_by_side(left, right, "a.h5", "b.h5");
  ASSERT_EQ(f.views.size(), left.views.size() + right.views.size());
  const size_t n = left.views.size();
  for (size_t v = 0; v < n; ++v) {
    const rtm::View& l = f.views[v];
    const rtm::View& r = f.views[n + v];
    EXPECT_GE(r.box.x, left.colour_bar.x) << "right's views lie right of the left figure";
    EXPECT_DOUBLE_EQ(r.box.x - right.views[v].box.x, f.views[n].box.x - right.views[0].box.x);
    ASSERT_EQ(r.values.size(), l.values.size());
    for (size_t c = 0; c < r.values.size(); ++c) EXPECT_NEAR(r.values[c], l.values[c], 1e-6f) << c;
  }
  EXPECT_THAT(f.views[0].title, HasSubstr("a.h5: "));
  EXPECT_THAT(f.views[n].title, HasSubstr("b.h5: "));
  EXPECT_GT(f.colour_bar.x, f.views[n].box.x);
  EXPECT_GE(f.width, int(f.colour_bar.x + f.colour_bar.w));
  EXPECT_DOUBLE_EQ(f.scale.hi, left.scale.hi);
  const rtm::Figure speed = rtm::volume_figure(g, g.vp, rtm::VolumeKind::velocity, "vp", "m/s", "m.h5", at);
  EXPECT_THROW(rtm::side_by_side(left, speed, "a.h5", "m.h5"), std::invalid_argument);
}

TEST(ColourScale, VelocitySpansItsRangeInMetresPerSecond) {
  rtm::VelocityModel g = grid(4, 3, 5, 10, 10, 10);
  for (size_t n = 0; n < g.vp.size(); ++n) g.vp[n] = 1500.0f + float(n);
  const rtm::Figure f = rtm::volume_figure(g, g.vp, rtm::VolumeKind::velocity, "vp", "m/s", "m.h5",
                                           rtm::locate_slices({}, g));
  EXPECT_EQ(f.scale.map, rtm::ColourMap::velocity);
  EXPECT_EQ(f.scale.lo, 1500);
  EXPECT_EQ(f.scale.hi, 1500 + 59);
  EXPECT_EQ(f.scale.label, "velocity (m/s)");
  EXPECT_THAT(f.scale.caption, HasSubstr("1500 to 1559 m/s"));
}

TEST(ColourScale, IlluminationInDecibelsReItsMaximum) {
  const std::vector<float> db = rtm::to_decibels({100, 10, 1, 0, -1}, 100);
  EXPECT_FLOAT_EQ(db[0], 0);
  EXPECT_FLOAT_EQ(db[1], -10);
  EXPECT_FLOAT_EQ(db[2], -20);
  EXPECT_TRUE(std::isinf(db[3]) && db[3] < 0);
  EXPECT_TRUE(std::isinf(db[4]) && db[4] < 0);
  // The floor: the 1st percentile of the finite decibels, never below -60 dB.
  std::vector<float> spread;
  for (int n = 0; n <= 100; ++n) spread.push_back(-float(n) * 0.4f); // 0 .. -40 dB
  EXPECT_FLOAT_EQ(float(rtm::decibel_floor(spread)), -39.6f);
  std::vector<float> deep;
  for (int n = 0; n <= 100; ++n) deep.push_back(-float(n) * 2); // 0 .. -200 dB
  EXPECT_EQ(rtm::decibel_floor(deep), rtm::kDecibelFloorLimit);

  rtm::VelocityModel g = grid(10, 10, 10, 10, 10, 10);
  std::vector<float> illumination(g.vp.size());
  for (size_t n = 0; n < illumination.size(); ++n) illumination[n] = float(1000.0 / (1.0 + double(n)));
  const rtm::Figure f = rtm::volume_figure(g, illumination, rtm::VolumeKind::illumination,
                                           "illumination", "", "image.h5", rtm::locate_slices({}, g));
  EXPECT_EQ(f.scale.hi, 0);
  // The 1st percentile of 1000 values: the 10th smallest, 1000 / (1 + 990) of the maximum 1000.
  EXPECT_NEAR(f.scale.lo, 10 * std::log10(1.0 / 991.0), 1e-4);
  EXPECT_EQ(f.scale.label, "illumination (dB re maximum)");
  // What the views show are decibels: the volume's first cell, its maximum, is 0 dB.
  EXPECT_FLOAT_EQ(rtm::to_decibels(illumination, 1000)[0], 0.0f);
}

TEST(ColourScale, TicksAreRoundNumbersCoveringTheRange) {
  EXPECT_EQ(rtm::nice_ticks(0, 1000, 5), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(rtm::nice_ticks(-6.25, 1193.75, 6), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(rtm::nice_ticks(-0.003, 0.003, 3), (std::vector<double>{-0.002, 0, 0.002}));
  EXPECT_EQ(rtm::tick_label(0.002), "0.002");
  EXPECT_EQ(rtm::tick_label(1200), "1200");
}

// ---- Layout -----------------------------------------------------------------------------------

TEST(Layout, EveryViewHasTheSameMetresPerPixelInBothDirections) {
  for (const std::array<double, 3>& e :
       {std::array<double, 3>{1200, 600, 900}, {3000, 200, 1500}, {500, 2000, 300},
        {10, 10, 10}, {12800, 6400, 9600}}) {
    SCOPED_TRACE(std::to_string(e[0]) + " x " + std::to_string(e[1]) + " x " + std::to_string(e[2]));
    const rtm::VolumeLayout l = rtm::layout_volume(e[0], e[1], e[2], 1000, 800);
    const double s = l.pixels_per_metre;
    EXPECT_DOUBLE_EQ(l.inline_view.w / e[0], s);
    EXPECT_DOUBLE_EQ(l.inline_view.h / e[2], s);
    EXPECT_DOUBLE_EQ(l.crossline_view.w / e[1], s);
    EXPECT_DOUBLE_EQ(l.crossline_view.h / e[2], s);
    EXPECT_DOUBLE_EQ(l.depth_view.w / e[0], s);
    EXPECT_DOUBLE_EQ(l.depth_view.h / e[1], s);
    // The views fill the data area in one direction and stay within it in the other.
    EXPECT_LE(l.inline_view.w + l.crossline_view.w, 1000 + 1e-9);
    EXPECT_LE(l.inline_view.h + l.depth_view.h, 800 + 1e-9);
    EXPECT_TRUE(std::abs(l.inline_view.w + l.crossline_view.w - 1000) < 1e-9 ||
                std::abs(l.inline_view.h + l.depth_view.h - 800) < 1e-9);
    // Shared axes line up; nothing overlaps; everything is on the page.
    EXPECT_EQ(l.crossline_view.y, l.inline_view.y);
    EXPECT_EQ(l.depth_view.x, l.inline_view.x);
    EXPECT_GT(l.crossline_view.x, l.inline_view.x + l.inline_view.w);
    EXPECT_GT(l.depth_view.y, l.inline_view.y + l.inline_view.h);
    EXPECT_GT(l.colour_bar.x, l.crossline_view.x + l.crossline_view.w);
    EXPECT_LE(l.colour_bar.x + l.colour_bar.w, l.width);
    EXPECT_LE(l.depth_view.y + l.depth_view.h, l.height);
  }
}

TEST(Layout, VolumeViewsHoldTheSlicesWithDepthDownAndNorthUp) {
  rtm::VelocityModel g = grid(4, 3, 2, 10, 20, 5);
  g.ox = 100, g.oy = -50, g.oz = 0;
  std::vector<float> v(g.vp.size());
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) v[(size_t(k) * 3 + j) * 4 + i] = float(100 * k + 10 * j + i);
  const rtm::SliceCells at = rtm::locate_slices(rtm::parse_slice_option("x=120,y=-30,z=5"), g);
  const rtm::Figure f =
      rtm::volume_figure(g, v, rtm::VolumeKind::signed_field, "image", "", "i.h5", at);
  ASSERT_EQ(f.views.size(), 3u);
  const rtm::View &in = f.views[0], &cross = f.views[1], &depth = f.views[2];
  EXPECT_EQ(in.title, "inline at y = -30 m");
  EXPECT_EQ(cross.title, "crossline at x = 120 m");
  EXPECT_EQ(depth.title, "depth slice at z = 5 m");
  // Inline: x across, z down, at j = 1.
  EXPECT_EQ(in.columns, 4);
  EXPECT_EQ(in.rows, 2);
  EXPECT_EQ(in.values, (std::vector<float>{10, 11, 12, 13, 110, 111, 112, 113}));
  EXPECT_DOUBLE_EQ(in.left, 95);
  EXPECT_DOUBLE_EQ(in.right, 135);
  EXPECT_DOUBLE_EQ(in.top, -2.5);
  EXPECT_DOUBLE_EQ(in.bottom, 7.5);
  // Crossline: y across, z down, at i = 2.
  EXPECT_EQ(cross.values, (std::vector<float>{2, 12, 22, 102, 112, 122}));
  EXPECT_FALSE(cross.vertical_tick_labels);
  // Depth slice: a map with y upwards (the last row of y at the top), at k = 1.
  EXPECT_EQ(depth.values, (std::vector<float>{120, 121, 122, 123, 110, 111, 112, 113, 100, 101, 102, 103}));
  EXPECT_DOUBLE_EQ(depth.top, -50 + 2.5 * 20);
  EXPECT_DOUBLE_EQ(depth.bottom, -60);
  EXPECT_EQ(in.cut_vertical_at, 120.0);
  EXPECT_EQ(in.cut_horizontal_at, 5.0);
  // The boxes keep one scale: 40 m of x and 60 m of y and 10 m of z.
  EXPECT_DOUBLE_EQ(in.box.w / 40, cross.box.w / 60);
  EXPECT_DOUBLE_EQ(in.box.h / 10, depth.box.h / 60);
}

// ---- Gathers ----------------------------------------------------------------------------------

TEST(Gather, SignedOffsetsFollowTheSpreadsLongerDirection) {
  const rtm::Position source = {10, 100, 500}; // z, y, x
  const std::vector<rtm::Position> line = {{0, 100, 300}, {0, 100, 500}, {0, 130, 540}};
  const std::vector<double> o = rtm::signed_offsets(source, line);
  EXPECT_DOUBLE_EQ(o[0], -200);
  EXPECT_DOUBLE_EQ(o[1], 0);
  EXPECT_DOUBLE_EQ(o[2], 50); // hypot(40, 30), on the +x side
  const std::vector<rtm::Position> along_y = {{0, 0, 500}, {0, 400, 500}};
  EXPECT_DOUBLE_EQ(rtm::signed_offsets(source, along_y)[0], -100);
  EXPECT_DOUBLE_EQ(rtm::signed_offsets(source, along_y)[1], 300);
}

TEST(Gather, TimeDownAgainstReceiverOrSortedOffset) {
  const int nrec = 3, nt = 4;
  const std::vector<float> traces = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  const std::vector<rtm::Position> receivers = {{0, 0, 200}, {0, 0, 0}, {0, 0, 100}};
  rtm::GatherOptions options;
  const rtm::Figure f = rtm::gather_figure(traces, nrec, nt, 0.002, {0, 0, 50}, receivers, "g", options);
  ASSERT_EQ(f.views.size(), 1u);
  const rtm::View& v = f.views[0];
  EXPECT_EQ(v.columns, 3);
  EXPECT_EQ(v.rows, 4);
  EXPECT_EQ((std::vector<float>(v.values.begin(), v.values.begin() + 3)), (std::vector<float>{0, 10, 20}));
  EXPECT_DOUBLE_EQ(v.top, -0.001);
  EXPECT_DOUBLE_EQ(v.bottom, 0.007);
  EXPECT_EQ(v.vertical_label, "time (s)");
  EXPECT_TRUE(v.column_edges.empty());
  EXPECT_GT(f.colour_bar.w, 0);
  EXPECT_DOUBLE_EQ(f.scale.hi, rtm::percentile_clip(traces, 99));

  options.axis = rtm::GatherAxis::offset;
  options.wiggles = true;
  const rtm::Figure o = rtm::gather_figure(traces, nrec, nt, 0.002, {0, 0, 50}, receivers, "g", options);
  const rtm::View& w = o.views[0];
  EXPECT_EQ(w.column_centres, (std::vector<double>{-50, 50, 150})); // sorted by offset
  EXPECT_EQ((std::vector<float>(w.values.begin(), w.values.begin() + 3)), (std::vector<float>{10, 20, 0}));
  EXPECT_EQ(w.column_edges, (std::vector<double>{-100, 0, 100, 200}));
  EXPECT_TRUE(w.wiggles);
  EXPECT_EQ(o.colour_bar.w, 0) << "wiggles need no colour bar";
  EXPECT_EQ(w.horizontal_label, "signed offset (m)");
}

// ---- Reading rtm's files ----------------------------------------------------------------------

namespace {
rtm::ShotFile small_shots() {
  rtm::ShotFile s;
  s.nt = 50, s.dt = 0.002, s.f0 = 15, s.t0 = 0.08;
  s.wavelet.assign(50, 0.0f);
  s.receivers = {{0, 0, 0}, {0, 0, 10}, {0, 0, 20}};
  for (int id = 0; id < 2; ++id) {
    rtm::ShotGather g;
    g.id = id;
    g.source = {5, 0, 10.0 * id};
    g.data.assign(3 * 50, 0.0f);
    for (size_t n = 0; n < g.data.size(); ++n) g.data[n] = float(std::sin(0.3 * double(n)));
    s.shots.push_back(g);
  }
  return s;
}
} // namespace

TEST_F(FigureFiles, TellsGathersFromVolumes) {
  rtm::VelocityModel m = grid(6, 5, 4, 10, 10, 10);
  rtm::write_velocity_model(path("model.h5"), m);
  std::vector<float> image(m.vp.size(), 0.5f), illumination(m.vp.size(), 2.0f);
  rtm::write_volumes(path("image.h5"), m, {{"image", &image, "relative amplitude (x)"},
                                           {"illumination", &illumination, ""}});
  rtm::write_shot_file(path("shots.h5"), small_shots());
  using rtm::PlotKind;
  EXPECT_EQ(rtm::detect_plot_subject(path("shots.h5")).kind, PlotKind::gather);
  EXPECT_EQ(rtm::detect_plot_subject(path("model.h5")).kind, PlotKind::volume);
  EXPECT_EQ(rtm::detect_plot_subject(path("model.h5")).dataset, "vp");
  EXPECT_EQ(rtm::detect_plot_subject(path("image.h5")).dataset, "image");
  EXPECT_EQ(rtm::detect_plot_subject(path("image.h5"), "illumination").kind, PlotKind::volume);
  EXPECT_EQ(rtm::volume_kind_of("vp"), rtm::VolumeKind::velocity);
  EXPECT_EQ(rtm::volume_kind_of("illumination"), rtm::VolumeKind::illumination);
  EXPECT_EQ(rtm::volume_kind_of("image_raw"), rtm::VolumeKind::signed_field);
  EXPECT_THAT(input_error([&] { rtm::detect_plot_subject(path("image.h5"), "vp"); }),
              HasSubstr("--dataset vp: no /vp in the file"));
  rtm::write_volumes(path("other.h5"), m, {{"stack", &image, ""}});
  EXPECT_THAT(input_error([&] { rtm::detect_plot_subject(path("other.h5")); }),
              HasSubstr("holds no /shots (a shot file), /vp (a model) or /image"));
  EXPECT_EQ(rtm::default_plot_output(path("image.h5"), {PlotKind::volume, "illumination"}, 0),
            path("image_illumination.png"));
  EXPECT_EQ(rtm::default_plot_output(path("shots.h5"), {PlotKind::gather, "shots"}, 1),
            path("shots_shot1.png"));

  // What plot_figure reads: the units attribute, short; the chosen shot; refusals.
  rtm::PlotRequest request;
  const rtm::Figure f = rtm::plot_figure(path("image.h5"), request);
  EXPECT_EQ(f.scale.label, "image (relative amplitude)");
  request.shot = 1;
  const rtm::Figure g = rtm::plot_figure(path("shots.h5"), request);
  EXPECT_THAT(g.title, HasSubstr("shot 1 (id 1)"));
  EXPECT_THAT(g.title, HasSubstr("source at x = 10, y = 0, z = 5 m"));
  request.shot = 2;
  EXPECT_THAT(input_error([&] { rtm::plot_figure(path("shots.h5"), request); }),
              HasSubstr("--shot 2: " + path("shots.h5") + " holds 2 shot(s), numbered 0 to 1"));
  request.shot = 0;
  request.slice = "x=20";
  EXPECT_THAT(input_error([&] { rtm::plot_figure(path("shots.h5"), request); }),
              HasSubstr("--slice is for volumes"));
  request.slice = "x=200";
  EXPECT_THAT(input_error([&] { rtm::plot_figure(path("model.h5"), request); }),
              HasSubstr("--slice x=200: outside the model, whose x runs from 0 m to 50 m"));
}

// ---- PNG files --------------------------------------------------------------------------------

TEST_F(FigureFiles, VolumeFigureIsAPngOfThePagesSize) {
  SKIP_WITHOUT_FIGURES();
  rtm::VelocityModel m = grid(40, 20, 30, 12.5, 12.5, 12.5);
  for (size_t n = 0; n < m.vp.size(); ++n) m.vp[n] = 1500.0f + float(n % 1000);
  const rtm::Figure f = rtm::volume_figure(m, m.vp, rtm::VolumeKind::velocity, "vp", "m/s", "m.h5",
                                           rtm::locate_slices({}, m));
  rtm::write_figure(path("model.png"), f);
  const RgbImage png = read_png(path("model.png"));
  EXPECT_EQ(png.width, f.width);
  EXPECT_EQ(png.height, f.height);
  // 500 m x 250 m x 375 m: (500 + 250) wide, (375 + 250) tall within 1000 x 800 of data: the
  // height decides, 800 / 625 pixels per metre.
  EXPECT_DOUBLE_EQ(f.views[0].box.w, 500 * 800.0 / 625);
  // Inside the inline view the colours are viridis (no white, the page's colour); the page around
  // the title is white; the colour bar's top (the maximum) is viridis' yellow.
  const rtm::PixelBox& in = f.views[0].box;
  EXPECT_NE(png.at(int(in.x + in.w / 2), int(in.y + in.h / 2)), (std::array<int, 3>{255, 255, 255}));
  EXPECT_EQ(png.at(5, 5), (std::array<int, 3>{255, 255, 255}));
  const std::array<int, 3> top = png.at(int(f.colour_bar.x + f.colour_bar.w / 2), int(f.colour_bar.y + 2));
  EXPECT_GT(top[0], 200);
  EXPECT_GT(top[1], 200);
  EXPECT_LT(top[2], 80);
  EXPECT_EQ(files(), std::vector<std::string>{"model.png"}) << "no temporary left behind";
}

TEST_F(FigureFiles, GatherFiguresInColoursAndWiggles) {
  SKIP_WITHOUT_FIGURES();
  const rtm::ShotFile s = small_shots();
  for (bool wiggles : {false, true}) {
    rtm::GatherOptions options;
    options.wiggles = wiggles;
    options.axis = wiggles ? rtm::GatherAxis::offset : rtm::GatherAxis::receiver;
    options.width = 400, options.height = 300;
    const rtm::Figure f = rtm::gather_figure(s.shots[0].data, 3, s.nt, s.dt, s.shots[0].source,
                                             s.receivers, "shot 0", options);
    const std::string name = wiggles ? "wiggles.png" : "density.png";
    rtm::write_figure(path(name), f);
    const RgbImage png = read_png(path(name));
    EXPECT_EQ(png.width, f.width);
    EXPECT_EQ(png.height, f.height);
    EXPECT_EQ(png.height, int(std::ceil(f.views[0].box.y + 300 + 56)));
  }
}

TEST_F(FigureFiles, LinePlotDrawsEachSeriesInItsOwnColour) {
  SKIP_WITHOUT_FIGURES();
  rtm::PlotSeries a{"naive_32x32", {}, {}}, b{"blockz_128x8", {}, {}};
  for (int step = 0; step < 50; ++step) {
    a.x.push_back(step), a.y.push_back(2.0e-3 + 1e-4 * std::sin(step));
    b.x.push_back(step), b.y.push_back(1.2e-3 + 1e-4 * std::cos(step));
  }
  rtm::write_line_plot(path("plot.png"), "Time per step", "step", "time (s)", {a, b});
  const RgbImage image = read_png(path("plot.png"));
  ASSERT_EQ(image.width, 900);
  ASSERT_EQ(image.height, 500);
  int blue = 0, orange = 0, black = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const std::array<int, 3> c = image.at(x, y);
      blue += c == std::array<int, 3>{31, 119, 180};
      orange += c == std::array<int, 3>{255, 127, 14};
      black += c == std::array<int, 3>{0, 0, 0};
    }
  EXPECT_GT(blue, 200);
  EXPECT_GT(orange, 200);
  EXPECT_GT(black, 300);
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
}

TEST_F(FigureFiles, WithoutFigureSupportEveryWriterSaysSo) {
  if (rtm::figures_supported()) GTEST_SKIP() << "this build has figure support (Cairo)";
  rtm::VelocityModel m = grid(4, 4, 4, 10, 10, 10);
  const rtm::Figure f = rtm::volume_figure(m, m.vp, rtm::VolumeKind::velocity, "vp", "m/s", "m.h5",
                                           rtm::locate_slices({}, m));
  EXPECT_THAT(input_error([&] { rtm::write_figure(path("m.png"), f); }),
              HasSubstr("built without figure support"));
  EXPECT_THAT(input_error([&] { rtm::write_line_plot(path("p.png"), "t", "x", "y", {}); }),
              HasSubstr("libcairo2-dev"));
  EXPECT_TRUE(files().empty());
}

// ---- rtm plot ---------------------------------------------------------------------------------

namespace {
struct Outcome {
  int status = -1;
  std::string out, err;
};
std::string quoted(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
} // namespace

class PlotCommand : public FigureFiles {
protected:
  Outcome run(const std::vector<std::string>& args) const {
    std::string command = quoted(RTM_EXECUTABLE);
    for (const std::string& a : args) command += " " + quoted(a);
    const std::string out = (dir_.parent_path() / ("plot_out_" + std::to_string(::getpid()))).string();
    command += " >" + quoted(out) + " 2>" + quoted(out + ".err");
    const int raw = std::system(command.c_str());
    Outcome o;
    o.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
    o.out = slurp(out), o.err = slurp(out + ".err");
    fs::remove(out), fs::remove(out + ".err");
    return o;
  }
};

TEST_F(PlotCommand, DrawsModelsImagesAndGathersOrSaysItCannot) {
  rtm::VelocityModel m = grid(24, 12, 16, 10, 10, 10);
  rtm::write_velocity_model(path("model.h5"), m);
  rtm::write_shot_file(path("shots.h5"), small_shots());
  if (!rtm::figures_supported()) {
    const Outcome o = run({"plot", path("model.h5")});
    EXPECT_EQ(o.status, 2);
    EXPECT_THAT(o.err, HasSubstr("rtm plot: this rtm was built without figure support"));
    EXPECT_FALSE(fs::exists(path("model_vp.png")));
    GTEST_SKIP() << "this build has no figure support: only the refusal was checked";
  }
  const Outcome model = run({"plot", path("model.h5"), "--slice", "x=50,z=100"});
  EXPECT_EQ(model.status, 0) << model.err;
  EXPECT_THAT(model.out, HasSubstr("wrote " + path("model_vp.png")));
  EXPECT_GT(read_png(path("model_vp.png")).width, 700);
  const Outcome gather = run({"plot", path("shots.h5"), "--shot", "1", "--wiggles", "--axis",
                              "offset", "-o", path("g.png")});
  EXPECT_EQ(gather.status, 0) << gather.err;
  EXPECT_GT(read_png(path("g.png")).height, 700);
  const Outcome bad = run({"plot", path("model.h5"), "--slice", "y=1000", "-o", path("bad.png")});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("--slice y=1000: outside the model, whose y runs from 0 m to 110 m"));
  EXPECT_FALSE(fs::exists(path("bad.png")));
}
