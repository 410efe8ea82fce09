// SEG-Y files other programs wrote, against what segyio's Python package reads of them
// (docs/io.md, "SEG-Y"): segyio's own test files (tests/data/segyio-test-data/, copied from
// equinor/segyio) and files its Python package wrote (tests/data/make_segy_fixtures.py, which also
// wrote tests/data/segy_expected.csv: per trace, the header numbers, coordinates with their scalar
// applied and the samples as segyio reads them). Both byte orders, IBM floats, 2- and 1-byte
// integers, rotated and scaled coordinates, 40000 samples per trace; a velocity cube and shot
// gathers of one survey that line up without options; export writing the survey back; the
// refusals naming the real cause.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/segy_file.h"
#include "io/shot_file.h"
#include "io/survey_frame.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "solvers/contracts/errors.h"
#include "tests/support/file_edits.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using rtm::test::copy_edited;
using rtm::test::input_error;

namespace {

std::string data(const std::string& name) { return std::string(RTM_TEST_DATA_DIR) + "/" + name; }
std::string segyio_file(const std::string& name) { return data("segyio-test-data/" + name); }

// One row of segy_expected.csv: what segyio reads of one trace.
struct Expected {
  int trace = 0, format = 0, samples = 0;
  std::string endian;
  double interval = 0;
  long long inline_number = 0, crossline = 0, record = 0;
  double cdp_x = 0, cdp_y = 0, source_x = 0, source_y = 0, group_x = 0, group_y = 0;
  double sum = 0, first = 0, last = 0;
};

std::vector<Expected> expected_traces(const std::string& file,
                                     const std::string& table = data("segy_expected.csv")) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line); // the column names
  std::vector<Expected> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream split(line);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    if (cells.size() != 18 || cells[0] != file) continue;
    Expected e;
    e.trace = std::stoi(cells[1]);
    e.endian = cells[2];
    e.format = std::stoi(cells[3]);
    e.samples = std::stoi(cells[4]);
    e.interval = std::stod(cells[5]);
    e.inline_number = std::stoll(cells[6]);
    e.crossline = std::stoll(cells[7]);
    e.record = std::stoll(cells[8]);
    e.cdp_x = std::stod(cells[9]);
    e.cdp_y = std::stod(cells[10]);
    e.source_x = std::stod(cells[11]);
    e.source_y = std::stod(cells[12]);
    e.group_x = std::stod(cells[13]);
    e.group_y = std::stod(cells[14]);
    e.sum = std::stod(cells[15]);
    e.first = std::stod(cells[16]);
    e.last = std::stod(cells[17]);
    rows.push_back(e);
  }
  return rows;
}

// Checks a volume rtm read against segyio's reading trace by trace: every (inline, crossline)
// is at the cell the frame numbers so, with segyio's samples, at segyio's coordinates (to
// `position_tolerance` metres) when the file has them.
void expect_matches_segyio(const rtm::SegyVolume& v, const std::string& file, double position_tolerance,
                           const std::string& table = data("segy_expected.csv")) {
  const std::vector<Expected> rows = expected_traces(file, table);
  ASSERT_EQ(rows.size(), size_t(v.grid.nx) * v.grid.ny) << file;
  std::map<std::pair<long long, long long>, std::pair<int, int>> cell;
  for (int j = 0; j < v.grid.ny; ++j)
    for (int i = 0; i < v.grid.nx; ++i) cell[{v.frame.inline_at(i, j), v.frame.crossline_at(i, j)}] = {i, j};
  for (const Expected& e : rows) {
    SCOPED_TRACE(file + " trace " + std::to_string(e.trace));
    ASSERT_EQ(v.grid.nz, e.samples);
    EXPECT_DOUBLE_EQ(v.grid.dz, e.interval / 1000.0);
    const auto it = cell.find({e.inline_number, e.crossline});
    ASSERT_NE(it, cell.end()) << "inline " << e.inline_number << " crossline " << e.crossline;
    const auto [i, j] = it->second;
    double sum = 0;
    for (int k = 0; k < v.grid.nz; ++k) sum += v.grid.at(i, j, k);
    EXPECT_NEAR(sum, e.sum, 1e-12 * std::max(1.0, std::abs(e.sum)));
    EXPECT_EQ(double(v.grid.at(i, j, 0)), e.first);
    EXPECT_EQ(double(v.grid.at(i, j, v.grid.nz - 1)), e.last);
    if (v.frame.georeferenced) {
      const std::array<double, 2> w =
          v.frame.to_world(v.grid.ox + i * v.grid.dx, v.grid.oy + j * v.grid.dy);
      EXPECT_NEAR(w[0], e.cdp_x, position_tolerance);
      EXPECT_NEAR(w[1], e.cdp_y, position_tolerance);
    }
  }
}

class SegySurvey : public ::testing::Test {
protected:
  void SetUp() override {
    if (!rtm::segy_supported()) GTEST_SKIP() << "this build has no libsegyio";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("rtm_segy_survey_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  int run_rtm(const std::string& args) {
    const std::string command =
        "cd '" + dir_.string() + "' && '" RTM_EXECUTABLE "' " + args + " >out.txt 2>err.txt";
    const int raw = std::system(command.c_str());
    return (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  }
  std::string file_text(const std::string& name) {
    std::ifstream in(path(name));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::path dir_;
};

// A big-endian 4-byte header field of a file's bytes (byte: 1-based within the trace header).
int32_t trace_field(const std::vector<char>& bytes, int trace, int trace_bytes, int byte) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + 3600 + size_t(trace) * trace_bytes + byte - 1;
  return int32_t(uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3]);
}
std::vector<char> file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

// ---- segyio's own test files --------------------------------------------------------------------

TEST_F(SegySurvey, IbmFloatsBigAndLittleEndianReadAsSegyioReadsThem) {
  rtm::SegyVolumeReadOptions options;
  options.dx = options.dy = 10; // small.sgy has no coordinates
  const rtm::SegyVolume big = rtm::read_segy_survey_volume(segyio_file("small.sgy"), options);
  const rtm::SegyVolume little = rtm::read_segy_survey_volume(segyio_file("small-lsb.sgy"), options);
  expect_matches_segyio(big, "small.sgy", 0);
  expect_matches_segyio(little, "small-lsb.sgy", 0);
  EXPECT_EQ(little.grid.vp, big.grid.vp);
  // Inlines 1..5 along y, crosslines 20..24 along x, in the file's order (no coordinates).
  EXPECT_EQ(big.frame.inline_axis, 'y');
  EXPECT_EQ(big.frame.inline_first, 1);
  EXPECT_EQ(big.frame.crossline_first, 20);
  EXPECT_FALSE(big.frame.georeferenced);
}

TEST_F(SegySurvey, TwoByteIntegersWithRotatedCoordinatesReadAsSegyioReadsThem) {
  // f3.sgy: format 3, 23 inlines x 18 crosslines x 75 samples, coordinates in decimetres (scalar
  // -10) of a survey turned 1.59 degrees from CDP_X, the first sample 4 "ms" down.
  const rtm::SegyVolume v = rtm::read_segy_survey_volume(segyio_file("f3.sgy"));
  EXPECT_EQ(v.grid.nx, 18);
  EXPECT_EQ(v.grid.ny, 23);
  EXPECT_NEAR(v.frame.rotation_deg, 1.5907, 1e-3);
  EXPECT_NEAR(v.grid.dx, 25.0, 0.01);
  EXPECT_NEAR(v.grid.dy, 25.0, 0.01);
  EXPECT_EQ(v.grid.oz, 4.0); // byte 109 (delay), read as metres like the interval's millimetres
  // Coordinates rounded to 0.1 m in the file sit within 0.25 m (1% of a cell) of the grid.
  expect_matches_segyio(v, "f3.sgy", 0.25);
}

TEST_F(SegySurvey, RotatedAndScaledCopiesKeepTheirCoordinates) {
  // normal-small: inlines along CDP_X (scalar 10): the world's own frame, inlines along x.
  const rtm::SegyVolume normal = rtm::read_segy_survey_volume(segyio_file("normal-small.sgy"));
  EXPECT_EQ(normal.frame.rotation_deg, 0);
  EXPECT_EQ(normal.frame.inline_axis, 'x');
  EXPECT_EQ(normal.grid.dx, 10);
  EXPECT_THAT(normal.frame.note, HasSubstr("x runs along inlines 1 to 5"));
  expect_matches_segyio(normal, "normal-small.sgy", 1e-9);
  // right-small: 90 degrees, scalar 1: still the world's frame, inlines numbered down y.
  const rtm::SegyVolume right = rtm::read_segy_survey_volume(segyio_file("right-small.sgy"));
  EXPECT_EQ(right.frame.rotation_deg, 0);
  EXPECT_EQ(right.frame.inline_step, -1);
  expect_matches_segyio(right, "right-small.sgy", 1e-9);
  // acute-small: 45 degrees, scalar -10 (decimetres): its own frame, turned 45 degrees.
  const rtm::SegyVolume acute = rtm::read_segy_survey_volume(segyio_file("acute-small.sgy"));
  EXPECT_NEAR(acute.frame.rotation_deg, 45, 1e-9);
  EXPECT_NEAR(acute.grid.dx, std::sqrt(0.02), 1e-12);
  expect_matches_segyio(acute, "acute-small.sgy", 1e-9);
}

// Every file of segyio's test data that segyio opens, when a checkout of it is at hand
// (make_segy_fixtures.py says how): rtm reads it as segyio does, or refuses it with a message.
TEST_F(SegySurvey, EveryFileOfSegyiosTestDataReadsAsSegyioReadsItOrIsRefused) {
  const char* folder = std::getenv("RTM_SEGYIO_TEST_DATA");
  const char* table = std::getenv("RTM_SEGYIO_EXPECTED");
  if (!folder || !table) GTEST_SKIP() << "RTM_SEGYIO_TEST_DATA and RTM_SEGYIO_EXPECTED not set";
  std::vector<std::string> files;
  {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      const std::string name = line.substr(0, line.find(','));
      if (files.empty() || files.back() != name) files.push_back(name);
    }
  }
  ASSERT_FALSE(files.empty());
  int read = 0;
  for (const std::string& name : files) {
    const std::string file = std::string(folder) + "/" + name;
    rtm::SegyVolumeReadOptions options;
    std::string outcome;
    try {
      rtm::SegyVolume v;
      try {
        v = rtm::read_segy_survey_volume(file, options);
      } catch (const rtm::InputError& e) {
        if (std::string(e.what()).find("--spacing") == std::string::npos) throw;
        options.dx = options.dy = 10;
        v = rtm::read_segy_survey_volume(file, options);
      }
      // Coordinates rounded in the file sit within 1% of a cell of the grid.
      expect_matches_segyio(v, name, 0.01 * std::min(v.grid.dx, v.grid.dy), table);
      outcome = "read as segyio reads it";
      ++read;
    } catch (const rtm::InputError& e) {
      outcome = std::string("refused: ") + e.what();
      EXPECT_THAT(outcome, HasSubstr(name)) << "the message names the file";
    }
    std::printf("%s: %s\n", name.c_str(), outcome.c_str());
  }
  EXPECT_GT(read, 20);
}

// ---- one survey: a velocity cube and its shots ---------------------------------------------------

TEST_F(SegySurvey, VelocityCubeAndShotsOfOneSurveyLineUpWithoutOptions) {
  // The cube's inline numbers increase along CDP_X: before the survey frame its origin was
  // dropped and the shots fell outside it.
  const rtm::SegyVolume cube = rtm::read_segy_survey_volume(data("survey_velocity.sgy"));
  expect_matches_segyio(cube, "survey_velocity.sgy", 1e-9);
  EXPECT_EQ(cube.grid.ox, 1000);
  EXPECT_EQ(cube.grid.oy, 5000);
  EXPECT_EQ(cube.grid.dx, 12.5);
  EXPECT_EQ(cube.grid.dy, 10);

  ASSERT_EQ(run_rtm("import model " + data("survey_velocity.sgy") + " -o model.h5"), 0) << file_text("err.txt");
  EXPECT_THAT(file_text("out.txt"), HasSubstr("x runs along inlines 201 to 206"));
  ASSERT_EQ(run_rtm("import shots " + data("survey_shots.sgy") + " --f0 15 -o shots.h5"), 0) << file_text("err.txt");
  const rtm::VelocityModel model = rtm::read_velocity_model(path("model.h5"));
  const rtm::ShotFile shots = rtm::read_shot_file(path("shots.h5"));
  ASSERT_EQ(shots.shots.size(), 3u);
  auto inside = [&](const rtm::Position& p) {
    return p[2] >= model.ox && p[2] <= model.ox + (model.nx - 1) * model.dx && p[1] >= model.oy &&
           p[1] <= model.oy + (model.ny - 1) * model.dy && p[0] >= model.oz &&
           p[0] <= model.oz + (model.nz - 1) * model.dz;
  };
  const std::vector<Expected> rows = expected_traces("survey_shots.sgy");
  size_t row = 0;
  for (const rtm::ShotGather& s : shots.shots) {
    EXPECT_TRUE(inside(s.source)) << s.source[2] << ", " << s.source[1];
    ASSERT_TRUE(s.field_record.has_value());
    EXPECT_EQ(*s.field_record, 1001 + s.id);
    for (const rtm::Position& r : shots.receivers_of(s)) {
      EXPECT_TRUE(inside(r)) << r[2] << ", " << r[1];
      ASSERT_LT(row, rows.size());
      EXPECT_EQ(r[2], rows[row].group_x);
      EXPECT_EQ(r[1], rows[row].group_y);
      EXPECT_EQ(s.source[2], rows[row].source_x);
      ++row;
    }
  }
  // And the modelling run places them (it refuses a source or receiver outside the model before any
  // shot runs: 0.1 s of record do, where the default 1 s took 40 s under ASan).
  EXPECT_EQ(run_rtm("model -m model.h5 --geometry shots.h5 --backend cpu --record-time 0.1 "
                    "-o modelled.h5"),
            0)
      << file_text("err.txt");
  // --origin would move the model off its survey: refused, naming the file's origin.
  EXPECT_EQ(run_rtm("import model " + data("survey_velocity.sgy") + " --origin 1000,5000,0 -o moved.h5"), 2);
  EXPECT_THAT(file_text("err.txt"), HasSubstr("places its traces by their CDP coordinates (origin (1000, 5000)"));
  EXPECT_FALSE(fs::exists(path("moved.h5")));
}

TEST_F(SegySurvey, ExportWritesTheSurveysNumberingAndCoordinatesBack) {
  ASSERT_EQ(run_rtm("import model " + data("survey_velocity.sgy") + " -o model.h5"), 0) << file_text("err.txt");
  const rtm::SurveyFrame frame = rtm::read_survey_frame(path("model.h5"), "vp");
  ASSERT_TRUE(frame.known);
  EXPECT_EQ(frame.inline_axis, 'x');
  EXPECT_EQ(frame.inline_first, 201);
  EXPECT_EQ(frame.crossline_first, 101);
  ASSERT_EQ(run_rtm("export model.h5 -o back.sgy"), 0) << file_text("err.txt");
  // Trace by trace as the original: inline 201 crossline 101 at (1000, 5000) m first.
  const std::vector<char> out = file_bytes(path("back.sgy")), in = file_bytes(data("survey_velocity.sgy"));
  ASSERT_EQ(out.size(), in.size());
  const int trace_bytes = 240 + 30 * 4;
  for (int t = 0; t < 48; ++t) {
    EXPECT_EQ(trace_field(out, t, trace_bytes, 189), trace_field(in, t, trace_bytes, 189));
    EXPECT_EQ(trace_field(out, t, trace_bytes, 193), trace_field(in, t, trace_bytes, 193));
    // Written with the finest scalar that fits: compare in metres.
    const auto* o = reinterpret_cast<const unsigned char*>(out.data()) + 3600 + size_t(t) * trace_bytes + 70;
    const int16_t scalar = int16_t(o[0] << 8 | o[1]);
    ASSERT_LT(scalar, 0);
    EXPECT_DOUBLE_EQ(trace_field(out, t, trace_bytes, 181) / double(-scalar), trace_field(in, t, trace_bytes, 181) / 100.0);
    EXPECT_DOUBLE_EQ(trace_field(out, t, trace_bytes, 185) / double(-scalar), trace_field(in, t, trace_bytes, 185) / 100.0);
  }
  // Shots: the field records come back as they were.
  ASSERT_EQ(run_rtm("import shots " + data("survey_shots.sgy") + " --f0 15 -o shots.h5"), 0);
  ASSERT_EQ(run_rtm("export shots.h5 -o shots_back.sgy"), 0) << file_text("err.txt");
  const std::vector<char> shots = file_bytes(path("shots_back.sgy"));
  const std::vector<Expected> shot_rows = expected_traces("survey_shots.sgy");
  for (int t = 0; t < 12; ++t) {
    EXPECT_EQ(trace_field(shots, t, 240 + 40 * 4, 9), 1001 + t / 4);
    // Coordinates in metres as the original's, and the midpoint as CDP (the original has none).
    const auto* o = reinterpret_cast<const unsigned char*>(shots.data()) + 3600 + size_t(t) * (240 + 160) + 70;
    const double scalar = -double(int16_t(o[0] << 8 | o[1]));
    EXPECT_DOUBLE_EQ(trace_field(shots, t, 400, 73) / scalar, shot_rows[size_t(t)].source_x);
    EXPECT_DOUBLE_EQ(trace_field(shots, t, 400, 85) / scalar, shot_rows[size_t(t)].group_y);
    EXPECT_DOUBLE_EQ(trace_field(shots, t, 400, 185) / scalar,
                     0.5 * (shot_rows[size_t(t)].source_y + shot_rows[size_t(t)].group_y));
  }
  // An image migrated on the model has no survey of its own: --survey gives it the model's.
  const rtm::VelocityModel model = rtm::read_velocity_model(path("model.h5"));
  rtm::write_volumes(path("image.h5"), model, {{"image", &model.vp, "1"}});
  ASSERT_EQ(run_rtm("export image.h5 --survey model.h5 -o image.sgy"), 0) << file_text("err.txt");
  const std::vector<char> image = file_bytes(path("image.sgy"));
  for (int t = 0; t < 48; ++t) {
    EXPECT_EQ(trace_field(image, t, trace_bytes, 189), trace_field(in, t, trace_bytes, 189));
    EXPECT_EQ(trace_field(image, t, trace_bytes, 193), trace_field(in, t, trace_bytes, 193));
  }
  // ... and not another grid's.
  rtm::VelocityModel other = model;
  other.ox += 1;
  rtm::write_volumes(path("other.h5"), other, {{"image", &model.vp, "1"}});
  EXPECT_EQ(run_rtm("export other.h5 --survey model.h5 -o other.sgy"), 2);
  EXPECT_THAT(file_text("err.txt"), HasSubstr("the survey numbers the model's grid only"));
  EXPECT_FALSE(fs::exists(path("other.sgy")));
  // A rotated survey back to its world coordinates: f3 through rtm's writer and reader.
  const rtm::SegyVolume f3 = rtm::read_segy_survey_volume(segyio_file("f3.sgy"));
  rtm::write_segy_volume(path("f3_back.sgy"), f3.grid, f3.grid.vp, "amplitude", f3.frame);
  const rtm::SegyVolume again = rtm::read_segy_survey_volume(path("f3_back.sgy"));
  EXPECT_EQ(again.grid.vp, f3.grid.vp);
  EXPECT_EQ(again.grid.ox, f3.grid.ox);
  EXPECT_EQ(again.frame.rotation_deg, f3.frame.rotation_deg);
  expect_matches_segyio(again, "f3.sgy", 0.25);
}

TEST_F(SegySurvey, ShotsImportedIntoATurnedModelsFrame) {
  // acute-small is turned 45 degrees: the import says so and --frame puts shots into its frame.
  ASSERT_EQ(run_rtm("import model " + segyio_file("acute-small.sgy") + " --units km/s -o acute.h5"), 0)
      << file_text("err.txt");
  EXPECT_THAT(file_text("out.txt"), HasSubstr("turned 45 degrees from CDP_X (import its shots with --frame acute.h5)"));
  ASSERT_EQ(run_rtm("import shots " + data("survey_shots.sgy") + " --f0 15 --frame acute.h5 -o turned.h5"), 0)
      << file_text("err.txt");
  const rtm::ShotFile turned = rtm::read_shot_file(path("turned.h5"));
  EXPECT_NEAR(turned.survey_rotation, 45, 1e-9);
  const double c = std::sqrt(0.5);
  EXPECT_NEAR(turned.shots[0].source[2], c * 1010.25 + c * 5035.0, 1e-9); // x = cos X + sin Y
  EXPECT_NEAR(turned.shots[0].source[1], -c * 1010.25 + c * 5035.0, 1e-9);
  // A model without a survey is no frame.
  EXPECT_EQ(run_rtm("import shots " + data("survey_shots.sgy") + " --f0 15 --frame turned.h5 -o x.h5"), 2);
}

TEST_F(SegySurvey, ShotsInARotatedModelsFrameGoBackToTheWorldOnExport) {
  rtm::SurveyFrame frame;
  frame.known = true;
  frame.rotation_deg = 30;
  rtm::SegyShotReadOptions options;
  options.frame = frame;
  const rtm::ShotFile world = rtm::read_segy_shots(data("survey_shots.sgy"));
  const rtm::ShotFile turned = rtm::read_segy_shots(data("survey_shots.sgy"), options);
  EXPECT_EQ(turned.survey_rotation, 30);
  const std::array<double, 2> w = frame.to_world(turned.shots[1].source[2], turned.shots[1].source[1]);
  EXPECT_NEAR(w[0], world.shots[1].source[2], 1e-9);
  EXPECT_NEAR(w[1], world.shots[1].source[1], 1e-9);
  rtm::ShotFile out = turned;
  out.wavelet.assign(size_t(out.nt), 0.0f);
  rtm::write_segy_shots(path("turned.sgy"), out);
  const rtm::ShotFile back = rtm::read_segy_shots(path("turned.sgy"));
  for (size_t s = 0; s < back.shots.size(); ++s) {
    EXPECT_NEAR(back.shots[s].source[2], world.shots[s].source[2], 1e-4);
    EXPECT_NEAR(back.shots[s].source[1], world.shots[s].source[1], 1e-4);
  }
}

// ---- more samples than a signed 2-byte field, 1-byte integers -----------------------------------

TEST_F(SegySurvey, FortyThousandSamplesOfOneByteIntegers) {
  const rtm::ShotFile f = rtm::read_segy_shots(data("segyio_long_int8.sgy"));
  const std::vector<Expected> rows = expected_traces("segyio_long_int8.sgy");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(f.nt, 40000);
  EXPECT_DOUBLE_EQ(f.dt, 250e-6);
  ASSERT_EQ(f.shots.size(), 1u);
  for (size_t r = 0; r < 2; ++r) {
    const float* trace = f.shots[0].data.data() + r * 40000;
    double sum = 0;
    for (int k = 0; k < 40000; ++k) sum += trace[k];
    EXPECT_EQ(sum, rows[r].sum);
    EXPECT_EQ(double(trace[0]), rows[r].first);
    EXPECT_EQ(double(trace[39999]), rows[r].last);
    EXPECT_EQ(f.receivers[r][2], rows[r].group_x);
  }
  // And out again: 40000 fits the unsigned field.
  rtm::ShotFile out = f;
  out.wavelet.assign(40000, 0.0f);
  rtm::write_segy_shots(path("long.sgy"), out);
  EXPECT_EQ(rtm::read_segy_shots(path("long.sgy")).shots[0].data, f.shots[0].data);
}

// ---- refusals that name the real cause ----------------------------------------------------------

TEST_F(SegySurvey, RefusalsNameTheFieldItsValueAndTheWayOut) {
  // A little-endian file of a format libsegyio does not read: the byte order in the message.
  copy_edited(segyio_file("small-lsb.sgy"), path("f6.sgy"), [](std::vector<char>& b) { b[3224] = 6; b[3225] = 0; });
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("f6.sgy")); }),
              HasSubstr("sample format 6 (8-byte IEEE float) (little-endian file)"));
  // No usable sample interval: both fields quoted (segyio's interval-neg-bin-neg-trace.sgy).
  copy_edited(segyio_file("small.sgy"), path("interval.sgy"), [](std::vector<char>& b) {
    b[3216] = char(0xf8), b[3217] = char(0x30);           // -2000
    for (int t = 0; t < 25; ++t) {
      char* h = b.data() + 3600 + t * (240 + 200);
      h[116] = char(0x9e), h[117] = char(0x58);           // -25000
    }
  });
  rtm::SegyVolumeReadOptions spacing;
  spacing.dx = spacing.dy = 10;
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(path("interval.sgy"), spacing); }),
              HasSubstr("binary header bytes 3217-3218 hold -2000, trace 1's bytes 117-118 hold -25000"));
  // Shots given as a model, a model given as shots: the other command named.
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(data("survey_shots.sgy")); }),
              HasSubstr("use `rtm import shots`"));
  EXPECT_THAT(input_error([&] { rtm::read_segy_shots(data("survey_velocity.sgy")); }),
              HasSubstr("use `rtm import model`"));
  // Traces of one field record fired from two places: the rule and the fix.
  copy_edited(data("survey_shots.sgy"), path("mixed.sgy"), [](std::vector<char>& b) {
    b[3600 + 2 * (240 + 160) + 75] ^= 1; // trace 3's source x
  });
  const std::string mixed = input_error([&] { rtm::read_segy_shots(path("mixed.sgy")); });
  EXPECT_THAT(mixed, HasSubstr("trace 3 of field record 1001 (byte 9) has its source at"));
  EXPECT_THAT(mixed, HasSubstr("one field record as one shot, fired from one place"));
  EXPECT_THAT(mixed, HasSubstr("--record-byte"));
  // Header bytes that are no 4-byte field.
  EXPECT_THAT(input_error([&] { rtm::check_header_byte(190, "--iline-byte"); }),
              HasSubstr("--iline-byte 190: not the first byte of a 4-byte field"));
  EXPECT_EQ(run_rtm("import model " + segyio_file("small.sgy") + " --iline-byte 190 -o m.h5"), 2);
  // Lines numbered elsewhere: --iline-byte and --xline-byte read them (field record and CDP).
  rtm::SegyVolumeReadOptions bytes = spacing;
  bytes.bytes.inline_number = 9;
  EXPECT_THAT(input_error([&] { rtm::read_segy_volume(segyio_file("small.sgy"), bytes); }),
              HasSubstr("traces 1 and 6 both hold inline 0 crossline 20 (bytes 9 and 193)"));
}
