// Data exchange (docs/io.md): SEG-Y volumes and shot gathers through libsegyio, NumPy .npy and raw
// float32 arrays. Round trips keep every sample and coordinate; files written by segyio's own
// Python package (tests/data, made by tests/data/make_segy_fixtures.py) read correctly; bad files
// are refused with a message naming the file and the fault. `rtm import` / `rtm export` end to end.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/array_file.h"
#include "solvers/contracts/errors.h"
#include "io/segy_file.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "tests/support/file_edits.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using rtm::test::copy_edited;
using rtm::test::input_error;

namespace {

class Exchange : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("rtm_exchange_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string data(const std::string& name) { return std::string(RTM_TEST_DATA_DIR) + "/" + name; }
  fs::path dir_;
};

rtm::VelocityModel random_grid(int nx, int ny, int nz, unsigned seed) {
  rtm::VelocityModel g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.dx = 12.5;
  g.dy = 7.25;
  g.dz = 3.125;
  g.ox = 431250.5;
  g.oy = 6478000.25;
  g.oz = 40;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(1400.0f, 4800.0f);
  g.vp.resize(size_t(g.cells()));
  for (float& v : g.vp) v = u(rng);
  return g;
}

// ---- SEG-Y volumes ------------------------------------------------------------------------------

TEST_F(Exchange, SegyVolumeRoundTripKeepsEverySampleAndCoordinate) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  const rtm::VelocityModel g = random_grid(9, 5, 11, 1);
  rtm::write_segy_volume(path("v.sgy"), g, g.vp, "velocity (m/s)");
  const rtm::VelocityModel r = rtm::read_segy_volume(path("v.sgy"));
  EXPECT_EQ(r.nx, g.nx);
  EXPECT_EQ(r.ny, g.ny);
  EXPECT_EQ(r.nz, g.nz);
  EXPECT_EQ(r.dx, g.dx);
  EXPECT_EQ(r.dy, g.dy);
  EXPECT_EQ(r.dz, g.dz);
  EXPECT_EQ(r.ox, g.ox);
  EXPECT_EQ(r.oy, g.oy);
  EXPECT_EQ(r.oz, g.oz);
  EXPECT_EQ(r.vp, g.vp); // IEEE float samples: bit for bit
}

TEST_F(Exchange, SegyVolumeWrittenBySegyioReadsWithItsGridFromTheHeaders) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  // 6 inlines (100..105) x 8 crosslines (20, 22, .., 34) x 7 samples, IBM floats, CDP_X/Y in cm.
  const rtm::VelocityModel v = rtm::read_segy_volume(data("segyio_volume.sgy"));
  ASSERT_EQ(v.nx, 8);
  ASSERT_EQ(v.ny, 6);
  ASSERT_EQ(v.nz, 7);
  EXPECT_DOUBLE_EQ(v.dx, 25.0);
  EXPECT_DOUBLE_EQ(v.dy, 12.5);
  EXPECT_DOUBLE_EQ(v.dz, 4.0); // the sample-interval field, 4000, read as millimetres
  EXPECT_DOUBLE_EQ(v.ox, 1000.0);
  EXPECT_DOUBLE_EQ(v.oy, 2000.0);
  for (int k = 0; k < v.nz; ++k)
    for (int j = 0; j < v.ny; ++j)
      for (int i = 0; i < v.nx; ++i)
        ASSERT_EQ(v.at(i, j, k), 1500.0f + 10.0f * k + 2.0f * j + 0.5f * i) << i << "," << j << "," << k;
}

TEST_F(Exchange, SegyVolumeWithoutCoordinatesNeedsTheSpacing) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  const std::string file = data("segyio_volume_no_coordinates.sgy");
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(file); }),
              HasSubstr("carry no coordinates (CDP_X and CDP_Y"));
  rtm::SegyVolumeReadOptions options;
  options.dx = options.dy = 10;
  const rtm::VelocityModel v = rtm::read_segy_volume(file, options);
  EXPECT_EQ(v.dx, 10);
  EXPECT_EQ(v.at(3, 2, 1), 1500.0f + 10 + 4 + 1.5f);
}

TEST_F(Exchange, BadSegyFilesAreRefusedNamingTheFault) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  const std::string good = data("segyio_volume.sgy");
  const int trace_bytes = 240 + 7 * 4;

  copy_edited(good, path("truncated.sgy"), [](std::vector<char>& b) { b.resize(b.size() - 100); });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("truncated.sgy")); }),
              HasSubstr("truncated or inconsistent"));

  // Format 6 (8-byte IEEE float, SEG-Y rev 2) is beyond the libsegyio rtm builds with: named.
  copy_edited(good, path("format6.sgy"), [](std::vector<char>& b) { b[3224] = 0; b[3225] = 6; });
  const std::string format = input_error([&] { rtm::read_segy_volume(path("format6.sgy")); });
  EXPECT_THAT(format, HasSubstr("format6.sgy"));
  EXPECT_THAT(format, HasSubstr("sample format 6 (8-byte IEEE float) (big-endian file)"));
  // A format code that is none either way round names both readings.
  copy_edited(good, path("format99.sgy"), [](std::vector<char>& b) { b[3224] = 0; b[3225] = 99; });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("format99.sgy")); }),
              HasSubstr("hold 99 read big-endian and 25344 read little-endian; neither is a SEG-Y "
                        "sample format code"));
  // Format 1 relabelled 3 (2-byte integers): the traces no longer fill the file evenly.
  copy_edited(good, path("format3.sgy"), [](std::vector<char>& b) { b[3224] = 0; b[3225] = 3; });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("format3.sgy")); }),
              HasSubstr("not a whole number of traces of 254 bytes (the 240-byte header and 7 "
                        "samples of 3 (2-byte integer)"));

  copy_edited(good, path("short.sgy"), [&](std::vector<char>& b) { b.resize(b.size() - trace_bytes); });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("short.sgy")); }),
              HasSubstr("inconsistent trace count: 47 traces for 6 inlines x 8 crosslines"));

  // Trace 10's CDP_X moved by 3 m: off the regular grid.
  copy_edited(good, path("offgrid.sgy"), [&](std::vector<char>& b) {
    unsigned char* x = reinterpret_cast<unsigned char*>(b.data()) + 3600 + 9 * trace_bytes + 180;
    int32_t v = (x[0] << 24) | (x[1] << 16) | (x[2] << 8) | x[3];
    v += 300;
    x[0] = (v >> 24) & 0xff, x[1] = (v >> 16) & 0xff, x[2] = (v >> 8) & 0xff, x[3] = v & 0xff;
  });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("offgrid.sgy")); }),
              HasSubstr("trace 10 (inline 101, crossline 22)"));

  std::ofstream(path("text.sgy")) << "not a seg-y file\n";
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("text.sgy")); }),
              HasSubstr("not a SEG-Y file"));
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("missing.sgy")); }),
              HasSubstr("cannot open"));
}

// ---- SEG-Y shot gathers -------------------------------------------------------------------------

TEST_F(Exchange, SegyShotsRoundTripKeepsEverySampleAndCoordinate) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  rtm::ShotFile f;
  f.nt = 37;
  f.dt = 0.0012345678; // not a whole number of microseconds: the text header keeps it exactly
  f.f0 = 14;
  f.t0 = 0.09;
  f.wavelet.assign(size_t(f.nt), 0.0f);
  f.receivers = {{12.5, 300.0, 100.25}, {12.5, 300.0, 110.5}, {13.0, 325.75, 120.0}, {12.5, 350.0, 130.0}};
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int s = 0; s < 3; ++s) {
    rtm::ShotGather g;
    g.id = s;
    g.source = {7.5, 310.0 + s, 95.0 + 20.125 * s};
    g.data.resize(f.receivers.size() * size_t(f.nt));
    for (float& v : g.data) v = n(rng);
    f.shots.push_back(g);
  }
  rtm::write_segy_shots(path("s.sgy"), f);
  const rtm::ShotFile r = rtm::read_segy_shots(path("s.sgy"));
  EXPECT_EQ(r.nt, f.nt);
  EXPECT_EQ(r.dt, f.dt);
  EXPECT_EQ(r.receivers, f.receivers);
  ASSERT_EQ(r.shots.size(), f.shots.size());
  for (size_t s = 0; s < f.shots.size(); ++s) {
    EXPECT_EQ(r.shots[s].source, f.shots[s].source);
    EXPECT_EQ(r.shots[s].data, f.shots[s].data);
  }
}

TEST_F(Exchange, SegyShotsWrittenBySegyioReadWithTheirGeometry) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  const rtm::ShotFile f = rtm::read_segy_shots(data("segyio_shots.sgy"));
  EXPECT_EQ(f.nt, 50);
  EXPECT_DOUBLE_EQ(f.dt, 0.002);
  ASSERT_EQ(f.receivers.size(), 3u);
  EXPECT_EQ(f.receivers[2], (rtm::Position{15.0, 410.0, 200.0}));
  ASSERT_EQ(f.shots.size(), 2u);
  EXPECT_EQ(f.shots[1].source, (rtm::Position{10.0, 405.5, 180.0}));
  EXPECT_EQ(f.shots[1].data[2 * 50 + 4], 100.0f + 20.0f + 1.0f); // shot 1, receiver 2, sample 4
}

// A shot whose spread differs from the others' is imported with its own receivers (per-shot
// receivers, docs/io.md); before per-shot receivers this file was refused.
TEST_F(Exchange, SegyShotsWithAnotherSpreadPerShotKeepTheirOwnReceivers) {
  if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
  // The second shot's first receiver (trace 4) moved from x = 100 m to 101.6 m (1000 ^ 0x10 dm).
  copy_edited(data("segyio_shots.sgy"), path("moved.sgy"), [](std::vector<char>& b) {
    b[3600 + 3 * (240 + 200) + 83] ^= 0x10; // GroupX, low byte
  });
  const rtm::ShotFile f = rtm::read_segy_shots(path("moved.sgy"));
  EXPECT_TRUE(f.receivers.empty());
  ASSERT_EQ(f.shots.size(), 2u);
  ASSERT_EQ(f.shots[0].receivers.size(), 3u);
  ASSERT_EQ(f.shots[1].receivers.size(), 3u);
  EXPECT_EQ(f.shots[0].receivers[0], (rtm::Position{15.0, 400.0, 100.0}));
  EXPECT_EQ(f.shots[1].receivers[0], (rtm::Position{15.0, 400.0, 101.6}));
  EXPECT_EQ(f.shots[1].receivers[2], f.shots[0].receivers[2]);
}

// ---- NumPy and raw ------------------------------------------------------------------------------

TEST_F(Exchange, NpyRoundTripAndAxisOrders) {
  const rtm::VelocityModel g = random_grid(6, 4, 5, 2);
  const rtm::ArrayShape shape{g.nx, g.ny, g.nz};
  rtm::write_npy(path("a.npy"), g.vp, shape);
  rtm::ArrayShape read_shape;
  EXPECT_EQ(rtm::read_npy(path("a.npy"), rtm::AxisOrder::zyx, read_shape), g.vp);
  EXPECT_EQ(read_shape.nx, 6);
  EXPECT_EQ(read_shape.nz, 5);
  // The same file read as xyz is the transposed array: shape (nz, ny, nx) taken as (x, y, z).
  const std::vector<float> t = rtm::read_npy(path("a.npy"), rtm::AxisOrder::xyz, read_shape);
  EXPECT_EQ(read_shape.nx, 5);
  EXPECT_EQ(read_shape.nz, 6);
  EXPECT_EQ(t[(size_t(1) * 4 + 2) * 5 + 3], g.at(1, 2, 3)); // z=1, y=2, x=3 of t is (x=1,y=2,z=3) of g
}

TEST_F(Exchange, RawFloat32InEitherOrderAndByteOrder) {
  // A raw file in xyz order (z fastest), big-endian.
  const int nx = 3, ny = 2, nz = 4;
  std::vector<unsigned char> bytes;
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      for (int k = 0; k < nz; ++k) {
        const float v = 1000.0f * i + 100.0f * j + k;
        unsigned char b[4];
        std::memcpy(b, &v, 4);
        for (int c = 3; c >= 0; --c) bytes.push_back(b[c]);
      }
  std::ofstream(path("a.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  const std::vector<float> v =
      rtm::read_raw_float32(path("a.bin"), {nx, ny, nz}, rtm::AxisOrder::xyz, true);
  EXPECT_EQ(v[(size_t(3) * ny + 1) * nx + 2], 2000.0f + 100.0f + 3.0f);
  EXPECT_THAT(input_error([&] { rtm::read_raw_float32(path("a.bin"), {nx, ny, 5}, rtm::AxisOrder::xyz, true); }),
              HasSubstr("holds 96 bytes; --shape 3,2,5 of float32 needs exactly 120 (24 values found)"));
}

TEST_F(Exchange, BadNpyFilesAreRefused) {
  std::ofstream(path("text.npy")) << "hello";
  rtm::ArrayShape s;
  EXPECT_THAT(input_error([&] { rtm::read_npy(path("text.npy"), rtm::AxisOrder::zyx, s); }),
              HasSubstr("not a NumPy .npy file"));
  auto npy = [&](const std::string& name, const std::string& header, size_t data_bytes) {
    std::string h = header;
    h.resize(((10 + h.size() + 1 + 63) / 64) * 64 - 11, ' ');
    h += '\n';
    std::ofstream out(path(name), std::ios::binary);
    const char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(h.size() & 0xff), char(h.size() >> 8)};
    out.write(pre, 10);
    out << h << std::string(data_bytes, '\0');
  };
  npy("int.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2, 2), }", 32);
  EXPECT_THAT(input_error([&] { rtm::read_npy(path("int.npy"), rtm::AxisOrder::zyx, s); }),
              HasSubstr("is not float32 or float64"));
  npy("rank2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }", 32);
  EXPECT_THAT(input_error([&] { rtm::read_npy(path("rank2.npy"), rtm::AxisOrder::zyx, s); }),
              HasSubstr("rank 2; expected a 3-D array"));
  npy("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", 16);
  EXPECT_THAT(input_error([&] { rtm::read_npy(path("short.npy"), rtm::AxisOrder::zyx, s); }),
              HasSubstr("truncated"));
  // Fortran order, float64: shape (x, y, z) stored with x fastest is rtm's order when read as xyz.
  npy("fortran.npy", "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1, 3), }", 0);
  {
    std::ofstream out(path("fortran.npy"), std::ios::binary | std::ios::app);
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 2; ++i) {
        const double v = 10.0 * k + i;
        out.write(reinterpret_cast<const char*>(&v), 8);
      }
  }
  const std::vector<float> f = rtm::read_npy(path("fortran.npy"), rtm::AxisOrder::xyz, s);
  EXPECT_EQ(s.nx, 2);
  EXPECT_EQ(s.nz, 3);
  EXPECT_EQ(f[2 * 2 + 1], 21.0f); // z = 2, x = 1
}

// ---- through the executable ---------------------------------------------------------------------

int run_rtm(const std::string& dir, const std::string& args) {
  const std::string command = "cd '" + dir + "' && '" RTM_EXECUTABLE "' " + args + " >out.txt 2>err.txt";
  const int raw = std::system(command.c_str());
  return (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
}

TEST_F(Exchange, ImportAndExportCommands) {
  // A km/s NumPy array in xyz order becomes an m/s model in rtm's order.
  rtm::VelocityModel g = random_grid(5, 3, 4, 3);
  std::vector<float> xyz(g.vp.size());
  for (int i = 0; i < g.nx; ++i)
    for (int j = 0; j < g.ny; ++j)
      for (int k = 0; k < g.nz; ++k) xyz[(size_t(i) * g.ny + j) * g.nz + k] = g.at(i, j, k) / 1000.0f;
  rtm::write_npy(path("kms.npy"), xyz, {g.nz, g.ny, g.nx}); // C shape (nx, ny, nz)
  ASSERT_EQ(run_rtm(dir_.string(), "import model kms.npy --order xyz --units km/s --spacing 10,20,5 "
                                   "--origin 1,2,3 -o m.h5"),
            0);
  const rtm::VelocityModel m = rtm::read_velocity_model(path("m.h5"));
  EXPECT_EQ(m.nx, g.nx);
  EXPECT_EQ(m.nz, g.nz);
  EXPECT_EQ(m.dy, 20);
  EXPECT_EQ(m.oz, 3);
  EXPECT_NEAR(m.at(4, 2, 3), g.at(4, 2, 3), 1e-3f * g.at(4, 2, 3));

  // A raw file without --spacing is refused with exit 2 and no output.
  std::ofstream(path("a.bin"), std::ios::binary).write(reinterpret_cast<const char*>(xyz.data()), std::streamsize(xyz.size() * 4));
  EXPECT_EQ(run_rtm(dir_.string(), "import model a.bin --shape 5,3,4 -o n.h5"), 2);
  EXPECT_FALSE(fs::exists(path("n.h5")));

  if (!rtm::segy_supported()) return;
  // Model -> SEG-Y -> model, and a shot file -> SEG-Y -> shot file.
  ASSERT_EQ(run_rtm(dir_.string(), "export m.h5 -o m.sgy"), 0);
  ASSERT_EQ(run_rtm(dir_.string(), "import model m.sgy -o back.h5"), 0);
  const rtm::VelocityModel back = rtm::read_velocity_model(path("back.h5"));
  EXPECT_EQ(back.vp, m.vp);
  EXPECT_EQ(back.ox, m.ox);
  ASSERT_EQ(run_rtm(dir_.string(), "import shots " + data("segyio_shots.sgy") + " --f0 15 -o shots.h5"), 0);
  const rtm::ShotFile shots = rtm::read_shot_file(path("shots.h5"));
  EXPECT_EQ(shots.shots.size(), 2u);
  EXPECT_EQ(shots.f0, 15);
  EXPECT_EQ(shots.wavelet.size(), 50u);
  ASSERT_EQ(run_rtm(dir_.string(), "export shots.h5 -o shots.sgy"), 0);
  const rtm::ShotFile again = rtm::read_segy_shots(path("shots.sgy"));
  EXPECT_EQ(again.shots[1].data, shots.shots[1].data);
  EXPECT_EQ(again.receivers, shots.receivers);
}

} // namespace
