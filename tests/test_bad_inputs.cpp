// Every kind of bad input the README promises to refuse, run through the real `rtm` executable
// (RTM_EXECUTABLE, from CMake): the exit status is 2, stderr names the file, dataset, attribute,
// option or config line at fault, and the output file does not exist afterwards (nor does its
// temporary). The bad files are made here with the plain HDF5 C API.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "tests/support/sanitized_build.h"

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct Outcome {
  int status = -1; // the exit status, or -1 when rtm did not exit normally (a crash)
  std::string out, err;
};

std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class BadInput : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("rtm_bad_inputs_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    // Read-only directories made by a test must become writable again to be removed.
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(dir_, ec))
      if (entry.is_directory()) fs::permissions(entry.path(), fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs rtm with `args` in the test's directory, after the shell commands `before` (a `ulimit`).
  Outcome run(const std::vector<std::string>& args, const std::string& before = "") const {
    std::string command = "cd " + shell_quoted(dir_.string()) + " && " + before +
                          shell_quoted(RTM_EXECUTABLE);
    for (const std::string& arg : args) command += " " + shell_quoted(arg);
    command += " >" + shell_quoted(path("stdout.txt")) + " 2>" + shell_quoted(path("stderr.txt"));
    const int raw = std::system(command.c_str());
    Outcome outcome;
    outcome.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
    outcome.out = read_text(path("stdout.txt"));
    outcome.err = read_text(path("stderr.txt"));
    fs::remove(path("stdout.txt"));
    fs::remove(path("stderr.txt"));
    return outcome;
  }

  // rtm `args` must exit with 2, say each of `named` on stderr, and leave `output` (and any
  // temporary of it) absent. Returns stderr for further checks.
  std::string expect_refused(const std::vector<std::string>& args,
                             const std::vector<std::string>& named, const std::string& output,
                             const std::string& before = "") {
    const Outcome o = run(args, before);
    EXPECT_EQ(o.status, 2) << "stderr: " << o.err << "\nstdout: " << o.out;
    for (const std::string& text : named) EXPECT_THAT(o.err, HasSubstr(text));
    EXPECT_THAT(o.err, HasSubstr("rtm: error:"));
    EXPECT_THAT(o.err, Not(HasSubstr("failed:"))); // the exit-1 path
    EXPECT_FALSE(fs::exists(output)) << output << " was left behind";
    const fs::path directory = fs::path(output).parent_path();
    if (fs::is_directory(directory)) {
      for (const auto& entry : fs::directory_iterator(directory))
        EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp-")))
            << "a temporary file was left behind";
    }
    return o.err;
  }

  // `rtm [before...] model` on `model` with fast settings, plus `extra` options; refused as above.
  std::string expect_model_refused(const std::string& model, const std::vector<std::string>& extra,
                                   const std::vector<std::string>& named,
                                   const std::vector<std::string>& before = {}) {
    std::vector<std::string> args = before;
    for (const char* arg : {"model", "-m"}) args.emplace_back(arg);
    args.push_back(model);
    args.push_back("-o");
    args.push_back(path("shots.h5"));
    for (const char* arg : {"--backend", "cpu", "--record-time", "0.02", "--boundary-width", "4"})
      args.emplace_back(arg);
    args.insert(args.end(), extra.begin(), extra.end());
    return expect_refused(args, named, path("shots.h5"));
  }

  // A valid 12^3 model (10 m cells, 2000 m/s) written by the code under test.
  std::string good_model(const rtm::ModelGeometry& geometry = {}) const {
    rtm::VelocityModel model;
    model.nx = model.ny = model.nz = 12;
    model.dx = model.dy = model.dz = 10;
    model.vp.assign(size_t(model.cells()), 2000.0f);
    const std::string file = path("good.h5");
    rtm::write_velocity_model(file, model, geometry);
    return file;
  }

  fs::path dir_;
};

// ---- Raw HDF5 model files, each wrong in one way -----------------------------------------------

struct RawModel {
  std::vector<hsize_t> dims = {6, 6, 6}; // [nz][ny][nx]
  hid_t file_type = H5T_IEEE_F32LE;
  const char* dataset = "vp";
  std::vector<double> spacing = {10, 10, 10}; // empty: no attribute
  bool spacing_as_string = false;
  double planted_value = 2000;                // written at (z,y,x) = (1,2,3)
  double fill = 2000;                         // every other value
  std::string units;                          // attribute units of /vp; empty: none
  bool chunked_without_data = false;          // declare a (huge) dataset, write nothing
};

void add_doubles(hid_t object, const char* name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t attribute = H5Acreate2(object, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_DOUBLE, values.data()), 0);
  H5Aclose(attribute);
  H5Sclose(space);
}

void add_string(hid_t object, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size() + 1);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, type, value.c_str()), 0);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

void write_raw_model(const std::string& path, const RawModel& m) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t space = H5Screate_simple(int(m.dims.size()), m.dims.data(), nullptr);
  ASSERT_GE(space, 0);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  if (m.chunked_without_data) {
    // Chunked storage is allocated only when written, so an absurd shape costs nothing on disk.
    const std::vector<hsize_t> chunk(m.dims.size(), 1);
    ASSERT_GE(H5Pset_chunk(properties, int(chunk.size()), chunk.data()), 0);
  }
  const hid_t dataset =
      H5Dcreate2(file, m.dataset, m.file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  if (!m.chunked_without_data) {
    hsize_t count = 1;
    for (hsize_t d : m.dims) count *= d;
    std::vector<double> values(count, m.fill);
    const hsize_t planted = m.dims.size() == 3 ? (1 * m.dims[1] + 2) * m.dims[2] + 3 : count;
    if (planted < count) values[planted] = m.planted_value;
    if (count > 0) {
      ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    }
  }
  if (!m.units.empty()) add_string(dataset, "units", m.units);
  if (m.spacing_as_string)
    add_string(dataset, "spacing", "10 m");
  else if (!m.spacing.empty())
    add_doubles(dataset, "spacing", m.spacing);
  H5Pclose(properties);
  H5Dclose(dataset);
  H5Sclose(space);
  ASSERT_GE(H5Fclose(file), 0);
}

std::string raw_model(const std::string& file, const RawModel& m) {
  write_raw_model(file, m);
  return file;
}

} // namespace

// ---- The harness itself: a good run succeeds, so a refusal below means something ----------------

TEST_F(BadInput, GoodRunSucceedsAndWritesItsOutput) {
  const Outcome o = run({"model", "-m", good_model(), "-o", path("shots.h5"), "--backend", "cpu",
                         "--record-time", "0.02", "--boundary-width", "4"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(path("shots.h5")));
}

TEST_F(BadInput, HelpAndVersionExitZero) {
  EXPECT_EQ(run({"--help"}).status, 0);
  EXPECT_EQ(run({"model", "--help"}).status, 0);
  const Outcome version = run({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.out, HasSubstr("rtm"));
}

// ---- Input files ----------------------------------------------------------------------------------

TEST_F(BadInput, MissingModelFile) {
  expect_model_refused(path("nowhere.h5"), {}, {"nowhere.h5", "no such file"});
}

TEST_F(BadInput, NotAnHdf5File) {
  std::ofstream(path("text.h5")) << "vp = 2000 m/s everywhere\n";
  expect_model_refused(path("text.h5"), {}, {"text.h5", "not an HDF5 file"});
}

// A NumPy array or a SEG-Y file given where HDF5 is expected: the message says what it is and the
// `rtm import` command that converts it.
TEST_F(BadInput, FilesOfOtherFormatsAreNamedWithTheImportThatConvertsThem) {
  std::ofstream(path("vp.npy"), std::ios::binary) << std::string("\x93NUMPY\x01\x00", 8)
                                                  << "{'descr': '<f4', 'fortran_order': False}";
  expect_model_refused(path("vp.npy"), {},
                       {"vp.npy: not an HDF5 file", "NumPy array", "rtm import model " + path("vp.npy")});
  // The SEG-Y textual header starts with 'C' in EBCDIC (0xC3), whatever the file is called.
  std::ofstream(path("field.data"), std::ios::binary) << std::string(3600, '\xC3');
  const std::string shots_err = expect_refused(
      {"migrate", "-s", path("field.data"), "--migration-model", good_model(), "-o", path("image.h5"),
       "--backend", "cpu"},
      {"field.data: not an HDF5 file", "looks like SEG-Y", "rtm import shots " + path("field.data")},
      path("image.h5"));
  EXPECT_THAT(shots_err, HasSubstr("rtm import model"));
  std::ofstream(path("vp.sgy"), std::ios::binary) << "not even a header";
  expect_model_refused(path("vp.sgy"), {}, {"vp.sgy: not an HDF5 file", "rtm import model"});
  // Anything else keeps the plain message.
  std::ofstream(path("text.h5")) << "vp = 2000 m/s everywhere\n";
  const std::string plain = expect_model_refused(path("text.h5"), {}, {"text.h5: not an HDF5 file"});
  EXPECT_THAT(plain, Not(HasSubstr("rtm import")));
}

TEST_F(BadInput, TruncatedFile) {
  const std::string file = good_model();
  fs::resize_file(file, fs::file_size(file) / 2);
  expect_model_refused(file, {}, {"good.h5"});
}

TEST_F(BadInput, MissingDataset) {
  RawModel m;
  m.dataset = "velocity";
  expect_model_refused(raw_model(path("m.h5"), m), {}, {"m.h5", "/vp", "not found"});
}

TEST_F(BadInput, MissingSpacingAttribute) {
  RawModel m;
  m.spacing.clear();
  expect_model_refused(raw_model(path("m.h5"), m), {},
                       {"m.h5", "spacing", "/vp", "missing"});
}

TEST_F(BadInput, AttributeOfWrongType) {
  RawModel m;
  m.spacing_as_string = true;
  expect_model_refused(raw_model(path("m.h5"), m), {}, {"m.h5", "spacing", "string"});
}

TEST_F(BadInput, WrongRank) {
  RawModel m;
  m.dims = {6, 36};
  expect_model_refused(raw_model(path("m.h5"), m), {}, {"m.h5", "/vp", "rank 2"});
}

TEST_F(BadInput, WrongType) {
  RawModel m;
  m.file_type = H5T_STD_I32LE;
  expect_model_refused(raw_model(path("m.h5"), m), {}, {"m.h5", "/vp", "int32"});
}

TEST_F(BadInput, ZeroNegativeNanAndInfiniteVelocities) {
  const double bad[] = {0.0, -1500.0, std::nan(""), std::numeric_limits<double>::infinity()};
  const char* shown[] = {"value 0", "value -1500", "value nan", "value inf"};
  for (int c = 0; c < 4; ++c) {
    SCOPED_TRACE(shown[c]);
    RawModel m;
    m.planted_value = bad[c];
    expect_model_refused(raw_model(path("m.h5"), m), {},
                         {"m.h5", "/vp", shown[c], "(z,y,x) = (1,2,3)"});
  }
}

TEST_F(BadInput, AbsurdDimensions) {
  RawModel huge;
  huge.dims = {1 << 20, 1 << 20, 1 << 20};
  huge.chunked_without_data = true;
  expect_model_refused(raw_model(path("huge.h5"), huge), {}, {"huge.h5", "/vp", "2^34"});
  RawModel empty;
  empty.dims = {6, 0, 6};
  expect_model_refused(raw_model(path("empty.h5"), empty), {}, {"empty.h5", "/vp", "[6][0][6]"});
  // generate-model refuses before allocating anything
  expect_refused({"generate-model", "--shape", "100000,100000,100000", "-o", path("gen.h5")},
                 {"--shape", "2^34"}, path("gen.h5"));
  expect_refused({"generate-model", "--shape", "0,10,10", "-o", path("gen.h5")}, {"--shape"},
                 path("gen.h5"));
}

TEST_F(BadInput, ShapeLargerThanTheFileHolds) {
  // A few kilobytes of file declaring 32 MB of velocities (never written) or 2^40 source positions:
  // refused from the metadata, before any memory is allocated for them.
  RawModel unwritten;
  unwritten.dims = {200, 200, 200};
  unwritten.chunked_without_data = true;
  expect_model_refused(raw_model(path("sparse.h5"), unwritten), {},
                       {"sparse.h5", "/vp", "[200][200][200]", "truncated or corrupt"});

  const std::string file = good_model();
  const hid_t h5 = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(h5, 0);
  const hsize_t dims[2] = {hsize_t(1) << 40, 3}, chunk[2] = {1024, 3};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(properties, 2, chunk);
  for (const char* name : {"sources", "receivers"}) {
    const hid_t dataset = H5Dcreate2(h5, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, properties, H5P_DEFAULT);
    ASSERT_GE(dataset, 0);
    H5Dclose(dataset);
  }
  H5Pclose(properties);
  H5Sclose(space);
  ASSERT_GE(H5Fclose(h5), 0);
  expect_model_refused(file, {}, {"good.h5", "/sources", "[1099511627776][3]"});
}

TEST_F(BadInput, ZeroOrNegativeSpacing) {
  for (const std::vector<double>& spacing : {std::vector<double>{10, 0, 10}, {10, 10, -5}}) {
    RawModel m;
    m.spacing = spacing;
    expect_model_refused(raw_model(path("m.h5"), m), {}, {"m.h5", "spacing", "positive"});
  }
  for (const char* spacing : {"0", "-10", "nan"})
    expect_refused({"generate-model", "--spacing", spacing, "-o", path("gen.h5")}, {"--spacing"},
                   path("gen.h5"));
}

// ---- Acquisition outside the model ----------------------------------------------------------------

TEST_F(BadInput, SourceOutsideTheModel) {
  rtm::ModelGeometry geometry;
  geometry.sources = {{50, 50, 50}, {50, 50, 5000}}; // (z,y,x) m; the model spans 0..110 m
  geometry.receivers = {{20, 50, 10}, {20, 50, 100}};
  expect_model_refused(good_model(geometry), {}, {"source 1", "outside the model"});
  // a generated survey below the model
  expect_model_refused(good_model(), {"--source-depth", "500"}, {"--source-depth", "outside the model"});
}

TEST_F(BadInput, ReceiverOutsideTheModel) {
  rtm::ModelGeometry geometry;
  geometry.sources = {{50, 50, 50}};
  geometry.receivers = {{20, 50, 10}, {20, -40, 100}};
  expect_model_refused(good_model(geometry), {}, {"receiver 1", "outside the model"});
}

// Per-shot receivers: one outside the model, in a geometry file (`rtm model --geometry`) or in the
// shot file a migration reads, is refused before any shot runs, naming the shot and the receiver;
// offsets that leave a shot no receiver inside the model name the shot; --geometry excludes the
// options that generate an acquisition.
TEST_F(BadInput, PerShotReceiverOutsideTheModel) {
  rtm::ShotFile shots;
  shots.nt = 50;
  shots.dt = 1e-3;
  shots.f0 = 50;
  shots.t0 = 0.02;
  shots.wavelet.assign(50, 0.0f);
  for (int s = 0; s < 2; ++s) {
    rtm::ShotGather gather;
    gather.id = s;
    gather.source = {20.0, 50.0, 30.0 + 40 * s};
    gather.receivers = {{20.0, 50.0, 10.0 + 40 * s}, {20.0, 50.0, 40.0 + 40 * s}};
    gather.data.assign(2 * 50, 0.0f);
    shots.shots.push_back(gather);
  }
  shots.shots[1].receivers[1][2] = 400; // the model spans 0..110 m
  rtm::write_shot_file(path("geometry.h5"), shots);
  expect_model_refused(good_model(), {"--geometry", path("geometry.h5")},
                       {"shot 1: receiver 1", "outside the model"});
  expect_refused({"migrate", "-s", path("geometry.h5"), "-m", good_model(), "-o", path("image.h5"),
                  "--backend", "cpu", "--boundary-width", "4", "--direct-wave", "none"},
                 {"shot 1: receiver 1", "outside the model"}, path("image.h5"));
  expect_model_refused(good_model(), {"--receiver-offsets", "500,600"},
                       {"--receiver-offsets", "shot 0", "no receiver inside the model"});
  expect_model_refused(good_model(), {"--geometry", path("geometry.h5"), "--shots", "2"},
                       {"--geometry", "--shots"});
}

// ---- Numbers on the command line --------------------------------------------------------------------

TEST_F(BadInput, ZeroOrNegativeTimeStep) {
  for (const char* dt : {"0", "-0.001", "nan", "inf"}) {
    SCOPED_TRACE(dt);
    expect_model_refused(good_model(), {"--dt", dt}, {"--dt"});
  }
}

TEST_F(BadInput, ZeroOrNegativeRecordTime) { // nt = record time / dt + 1
  for (const char* seconds : {"0", "-1"}) {
    SCOPED_TRACE(seconds);
    expect_model_refused(good_model(), {"--record-time", seconds}, {"--record-time"});
  }
}

TEST_F(BadInput, ZeroNegativeOrNanFrequency) {
  for (const char* f0 : {"0", "-12", "nan"}) {
    SCOPED_TRACE(f0);
    expect_model_refused(good_model(), {"--f0", f0}, {"--f0"});
  }
}

TEST_F(BadInput, OtherBadNumbers) {
  expect_model_refused(good_model(), {"--receiver-step", "0"}, {"--receiver-step"});
  expect_model_refused(good_model(), {"--shots", "-2"}, {"--shots"});
  expect_model_refused(good_model(), {"--boundary-width", "-1"}, {"--boundary-width"});
  expect_model_refused(good_model(), {"--f0", "twelve"}, {"--f0"});
  expect_model_refused(good_model(), {"--dt", "1"}, {"--dt", "CFL"}); // above the stability limit
}

// ---- Names: variants, options, subcommands --------------------------------------------------------

TEST_F(BadInput, UnknownVariant) {
  expect_model_refused(good_model(), {"--variant", "warp_speed_9"}, {"--variant", "warp_speed_9"});
}

TEST_F(BadInput, UnknownOptionOrValue) {
  expect_model_refused(good_model(), {"--no-such-option"}, {"--no-such-option"});
  expect_model_refused(good_model(), {"--backend", "quantum"}, {"--backend"});
  expect_refused({"frobnicate"}, {"frobnicate"}, path("nothing"));
  expect_refused({"model", "-o", path("shots.h5")}, {"--model"}, path("shots.h5")); // required
}

// ---- Config files ------------------------------------------------------------------------------------

TEST_F(BadInput, ConfigFileWithASyntaxErrorNamesFileAndLine) {
  std::ofstream(path("run.toml")) << "# forward modeling\n[model]\nf0 = = 12\n";
  const std::string err = expect_model_refused(good_model(), {}, {"run.toml", "line 3", "f0"},
                                               {"--config", path("run.toml")});
  EXPECT_THAT(err, Not(HasSubstr("--help"))) << "a syntax error is not an option problem";
}

TEST_F(BadInput, ConfigFileWithUnclosedStringOrArray) {
  std::ofstream(path("a.toml")) << "[model]\nbackend = \"cpu\n";
  expect_model_refused(good_model(), {}, {"a.toml", "line 2", "not closed"},
                       {"--config", path("a.toml")});
  std::ofstream(path("b.toml")) << "[generate-model]\nshape = [12, 12,\n12\n";
  expect_refused({"--config", path("b.toml"), "generate-model", "-o", path("gen.h5")},
                 {"b.toml", "line 2", "not closed"}, path("gen.h5"));
}

TEST_F(BadInput, ConfigFileWithUnknownNames) {
  std::ofstream(path("key.toml")) << "[model]\nf0 = 12\nfrequency = 12\n";
  expect_model_refused(good_model(), {}, {"key.toml", "line 3", "frequency"},
                       {"--config", path("key.toml")});
  std::ofstream(path("section.toml")) << "[modle]\nf0 = 12\n";
  expect_model_refused(good_model(), {}, {"section.toml", "line 1", "modle"},
                       {"--config", path("section.toml")});
}

TEST_F(BadInput, MissingConfigFile) {
  expect_model_refused(good_model(), {}, {"absent.toml"}, {"--config", path("absent.toml")});
}

TEST_F(BadInput, ValidConfigFileIsAccepted) {
  std::ofstream(path("ok.toml")) << "# comment\n[model]\nbackend = \"cpu\"  # trailing comment\n"
                                    "record-time = 0.02\nboundary-width = 4\nf0 = 15\n";
  const Outcome o = run({"--config", path("ok.toml"), "model", "-m", good_model(), "-o",
                         path("shots.h5")});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(path("shots.h5")));
}

// ---- Output paths ------------------------------------------------------------------------------------

namespace {
std::string shot_file(const std::string& file, int n, int nt, double f0);
// A one-shot file on the 12^3 model of good_model().
std::string shot_file_for_directories(const std::string& file) { return shot_file(file, 12, 200, 15); }
} // namespace

TEST_F(BadInput, OutputInAMissingDirectory) {
  expect_refused({"model", "-m", good_model(), "-o", path("no/such/dir/shots.h5"), "--backend",
                  "cpu", "--record-time", "0.02"},
                 {"no/such/dir", "does not exist"}, path("no/such/dir/shots.h5"));
  expect_refused({"generate-model", "-o", path("missing/model.h5")}, {"missing", "does not exist"},
                 path("missing/model.h5"));
}

TEST_F(BadInput, OutputThatIsADirectory) {
  fs::create_directories(path("taken"));
  const Outcome o = run({"model", "-m", good_model(), "-o", path("taken"), "--backend", "cpu",
                         "--record-time", "0.02"});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_THAT(o.err, AllOf(HasSubstr("taken"), HasSubstr("is a directory")));
  EXPECT_TRUE(fs::is_directory(path("taken")));
}

TEST_F(BadInput, OutputInAReadOnlyDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write into read-only directories";
  fs::create_directories(path("locked"));
  fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused({"model", "-m", good_model(), "-o", path("locked/shots.h5"), "--backend", "cpu",
                  "--record-time", "0.02"},
                 {"locked", "no permission"}, path("locked/shots.h5"));
}

// Directories a run writes into are checked at its start: `rtm migrate --png-dir` used to migrate
// to the end and then fail, `rtm demo -o` to stop with a raw "filesystem error". A path below a
// regular file stops root too (CI runs the tests as root, whom permission bits do not stop).
TEST_F(BadInput, OutputDirectoriesThatCannotBeWrittenAreRefusedAtTheStart) {
  std::ofstream(path("plain_file")) << "a file, not a directory\n";
  const std::string shots = shot_file_for_directories(path("shots.h5"));
  const std::string err = expect_refused(
      {"migrate", "-s", shots, "--migration-model", good_model(), "-o", path("image.h5"),
       "--backend", "cpu", "--boundary-width", "4", "--png-dir", path("plain_file/png")},
      {"--png-dir " + path("plain_file/png"), "cannot create this directory", "is a file, not a directory"},
      path("image.h5"));
  EXPECT_THAT(err, Not(HasSubstr("rtm: migrating"))) << "refused before the run started";
  expect_refused({"migrate", "-s", shots, "--migration-model", good_model(), "-o", path("image.h5"),
                  "--backend", "cpu", "--boundary-width", "4", "--png-dir", path("plain_file")},
                 {"--png-dir " + path("plain_file"), "it is a file, not a directory"}, path("image.h5"));
  const std::string demo = expect_refused({"demo", "-o", path("plain_file/demo")},
                                          {"--output-dir " + path("plain_file/demo"), "is a file"},
                                          path("plain_file/demo/model.h5"));
  EXPECT_THAT(demo, Not(HasSubstr("filesystem error")));
  if (::geteuid() != 0) { // permission bits stop everyone but root
    fs::create_directories(path("locked"));
    fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    expect_refused({"demo", "-o", path("locked/demo")},
                   {"--output-dir " + path("locked/demo"), "cannot create this directory in"},
                   path("locked/demo/model.h5"));
  }
  EXPECT_FALSE(fs::exists(path("image.h5")));
}

// ---- Runs that cannot fit in memory: refused before anything is allocated --------------------------

namespace {

// Sets an environment variable for the lifetime of one test (rtm inherits it).
class ScopedEnvironment {
public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnvironment() { ::unsetenv(name_); }

private:
  const char* name_;
};

// A shot file of `nt` samples at dt = 1 ms with one receiver and one source inside a model of
// n^3 10 m cells: what `rtm migrate` needs, written directly (modeling nt steps would take long).
std::string shot_file(const std::string& file, int n, int nt, double f0) {
  rtm::ShotFile shots;
  shots.nt = nt;
  shots.dt = 1e-3;
  shots.f0 = f0;
  shots.t0 = 1.0 / f0;
  shots.wavelet.assign(size_t(nt), 0.0f);
  shots.wavelet[1] = 1.0f;
  const double middle = 10.0 * (n - 1) / 2;
  shots.receivers.push_back({20.0, middle, middle});
  rtm::ShotGather gather;
  gather.source = {20.0, middle, 20.0};
  gather.data.assign(size_t(nt), 0.0f);
  shots.shots.push_back(gather);
  rtm::write_shot_file(file, shots);
  return file;
}

} // namespace

TEST_F(BadInput, ModelingThatDoesNotFitInTheGpuIsRefused) {
  // RTM_FAKE_FREE_GPU_BYTES stands in for a GPU with 0.10 MiB free, so that the device check is
  // reached on a machine without one (solvers/drivers/backend.h).
  const ScopedEnvironment fake("RTM_FAKE_FREE_GPU_BYTES", "104858");
  const std::string err = expect_model_refused(
      good_model(), {}, {"rtm model: this run needs ", "of GPU memory but 0.10 MiB are free", "To fit:"});
  EXPECT_THAT(err, Not(HasSubstr("rtm: modeling"))) << "refused before the run started";
}

TEST_F(BadInput, MigrationThatDoesNotFitIsRefusedWithBothNumbers) {
  const std::string shots = shot_file(path("shots.h5"), 12, 200, 15);
  {
    const ScopedEnvironment fake("RTM_FAKE_FREE_GPU_BYTES", "104858");
    expect_refused({"migrate", "-s", shots, "--migration-model", good_model(), "-o",
                    path("image.h5"), "--backend", "cpu", "--boundary-width", "4"},
                   {"rtm migrate: this run needs ", "of GPU memory but 0.10 MiB are free",
                    "--reconstruction snapshots"},
                   path("image.h5"));
  }
  // The host: snapshots of a 100^3 model (3.8 MiB each) at every one of 10^6 steps (150 Hz data
  // at 1 ms leave an interval of one step) need 3.6 TiB, more than any machine here has.
  rtm::VelocityModel big;
  big.nx = big.ny = big.nz = 100;
  big.dx = big.dy = big.dz = 10;
  big.vp.assign(size_t(big.cells()), 2000.0f);
  rtm::write_velocity_model(path("big.h5"), big, {});
  const std::string long_shots = shot_file(path("long_shots.h5"), 100, 1000000, 150);
  const std::string err = expect_refused(
      {"migrate", "-s", long_shots, "--migration-model", path("big.h5"), "-o", path("image.h5"),
       "--backend", "cpu", "--boundary-width", "4", "--reconstruction", "snapshots"},
      {"rtm migrate: this run needs ", "GiB of host memory but ", "GiB are available",
       "largest: snapshots", "--reconstruction boundary"},
      path("image.h5"));
  EXPECT_THAT(err, Not(HasSubstr("rtm: migrating"))) << "refused before the run started";
}

// rtm lsrtm refuses bad options, a missing or a stray state and a run that cannot fit before any
// work, leaving neither the output nor a state behind.
TEST_F(BadInput, LsrtmRefusesBadOptionsAndStatesBeforeAnyWork) {
  const std::string shots = shot_file(path("shots.h5"), 12, 200, 15);
  const std::string model = good_model();
  const std::string state = path("ls.h5") + ".lsrtm-state.h5";
  auto lsrtm = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"lsrtm", "-s", shots, "--migration-model", model, "-o",
                                     path("ls.h5"), "--backend", "cpu", "--boundary-width", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_refused(lsrtm({"--iterations", "0"}), {"--iterations must be at least 1, got 0"}, path("ls.h5"));
  EXPECT_FALSE(fs::exists(state));
  expect_refused(lsrtm({"--resume"}), {"--resume: no state", state}, path("ls.h5"));
  expect_refused(lsrtm({"--imaging-interval", "0"}), {"--imaging-interval"}, path("ls.h5"));
  {
    const ScopedEnvironment fake("RTM_FAKE_FREE_GPU_BYTES", "104858");
    expect_refused(lsrtm({}), {"rtm lsrtm: this run needs ", "of GPU memory but 0.10 MiB are free"},
                   path("ls.h5"));
  }
  EXPECT_FALSE(fs::exists(state));
  { std::ofstream stray(state); stray << "not a state"; }
  expect_refused(lsrtm({}), {state, "holds the state of an earlier least-squares RTM", "--resume"},
                 path("ls.h5"));
  EXPECT_EQ(fs::file_size(state), 11u) << "the state was touched";
  expect_refused(lsrtm({"--resume"}), {state}, path("ls.h5"));
  EXPECT_EQ(fs::file_size(state), 11u) << "the state was touched";
}

// ASan reserves terabytes of address space for its shadow memory: under it no address-space limit
// lets rtm start, so the tests that run rtm under `ulimit -v` are skipped there (the plain suite
// runs them; their helpers are [[maybe_unused]] for the sanitized build: RTM_TEST_UNDER_ASAN,
// tests/support/sanitized_build.h).

namespace {

// The address space (VmSize, KiB) rtm maps when it starts reading its model: rtm is given a FIFO
// as the model, which blocks it in opening the file (after MPI, OpenMP's threads and the command
// line are set up). A writer's non-blocking open succeeds once a reader is waiting (Linux counts
// the reader before it sleeps): then rtm's /proc/<pid>/status is read, and the FIFO closed empty,
// which rtm refuses as no HDF5 file.
[[maybe_unused]] long rtm_start_vm_kib(const fs::path& dir, const std::vector<std::string>& before_model,
                      const std::vector<std::string>& after_model) {
  const std::string fifo = (dir / "model.fifo").string();
  if (::mkfifo(fifo.c_str(), 0600) != 0) return -1;
  std::vector<std::string> words = {RTM_EXECUTABLE};
  words.insert(words.end(), before_model.begin(), before_model.end());
  words.push_back(fifo);
  words.insert(words.end(), after_model.begin(), after_model.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  long kib = -1;
  int writer = -1;
  for (int attempt = 0; attempt < 6000 && writer < 0; ++attempt) {
    writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer < 0) ::usleep(5000);
  }
  if (writer >= 0) {
    std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0) kib = std::stol(line.substr(7));
    ::close(writer);
  }
  // rtm may open the FIFO again (the HDF5 check after the readability check): writers until it ends.
  int status = 0;
  for (int attempt = 0; attempt < 6000 && ::waitpid(pid, &status, WNOHANG) == 0; ++attempt) {
    const int again = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (again >= 0) ::close(again);
    ::usleep(5000);
  }
  fs::remove(fifo);
  return kib;
}

// A constant 2000 m/s model of n^3 10 m cells.
[[maybe_unused]] std::string constant_model(const std::string& file, int n) {
  rtm::VelocityModel m;
  m.nx = m.ny = m.nz = n;
  m.dx = m.dy = m.dz = 10;
  m.vp.assign(size_t(m.cells()), 2000.0f);
  rtm::write_velocity_model(file, m, {});
  return file;
}

} // namespace

// A model too large for the memory there is is refused from its file's header, before it is read:
// the run is given an address-space limit 48 MiB above what rtm maps when it starts reading, less
// than the 64 MiB the model's values alone take. Had rtm read the model (or made its padded grid)
// before checking, it would end in std::bad_alloc (exit 1), not in the refusal (exit 2) with the
// numbers, the limit named, and what to change. (On a 24 GB machine an 1100^3 `rtm model` was killed
// by the out-of-memory killer after 468 s at 23.1 GB: its check came after the padded grid, and
// counted neither the CPU backend's wavefields nor the model's copies.)
TEST_F(BadInput, ModelTooLargeForMemoryIsRefusedBeforeItIsRead) {
#ifdef RTM_TEST_UNDER_ASAN
  GTEST_SKIP() << "ASan's shadow memory needs more address space than any limit allows";
#else
  const ScopedEnvironment one_thread("OMP_NUM_THREADS", "1");
  const std::string big = constant_model(path("big.h5"), 256); // 64 MiB of velocities
  const std::vector<std::string> after = {"-o", path("shots.h5"), "--backend", "cpu",
                                          "--record-time", "0.1"};
  const long start_kib = rtm_start_vm_kib(dir_, {"model", "-m"}, after);
  ASSERT_GT(start_kib, 0) << "could not measure rtm's address space";
  const std::string limit = "ulimit -v " + std::to_string(start_kib + 48 * 1024) + " && ";
  // The harness: under that limit a small run goes through.
  const Outcome small = run({"model", "-m", good_model(), "-o", path("small.h5"), "--backend", "cpu",
                             "--record-time", "0.02", "--boundary-width", "4"},
                            limit);
  ASSERT_EQ(small.status, 0) << "the limit leaves too little for any run: " << small.err;
  std::vector<std::string> args = {"model", "-m", big};
  args.insert(args.end(), after.begin(), after.end());
  const auto started = std::chrono::steady_clock::now();
  const std::string err = expect_refused(
      args, {"rtm model: this run needs ", "of host memory but ", "the address-space limit (ulimit -v)",
             "wavefields (CPU backend)", "To fit:", "run on a GPU"},
      path("shots.h5"), limit);
  EXPECT_THAT(err, Not(HasSubstr("bad_alloc")));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 20.0);

  // rtm migrate, on one rank: from the shot file's header and the model's, before either is read.
  const std::string shots = shot_file(path("migrate_shots.h5"), 12, 200, 15);
  const long migrate_kib =
      rtm_start_vm_kib(dir_, {"migrate", "-s", shots, "--allow-other-grid", "-m"},
                       {"-o", path("image.h5"), "--backend", "cpu"});
  ASSERT_GT(migrate_kib, 0);
  expect_refused({"migrate", "-s", shots, "--allow-other-grid", "-m", big, "--smooth", "100", "-o",
                  path("image.h5"), "--backend", "cpu"},
                 {"rtm migrate: this run needs ", "of host memory but ",
                  "the address-space limit (ulimit -v)"},
                 path("image.h5"), "ulimit -v " + std::to_string(migrate_kib + 48 * 1024) + " && ");
#endif
}

namespace {

// rtm `args` run in `dir` to its end: its exit status and peak resident memory (KiB, wait4's
// ru_maxrss).
[[maybe_unused]] std::pair<int, long> run_for_peak_memory(const fs::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> words = {RTM_EXECUTABLE};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (::wait4(pid, &status, 0, &usage) != pid) return {-1, 0};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

// The host memory a refusal says the run needs ("needs 0.26 GiB of host memory"), in bytes; 0 when
// the message has none.
// The host memory a refusal names ("this run needs 0.16 GiB ..."), and half its last printed
// digit: the message rounds (0.16 GiB stands for 0.155 to 0.165).
struct NamedBytes {
  double value = 0, rounding = 0;
};
[[maybe_unused]] NamedBytes needed_host_bytes(const std::string& message) {
  const size_t at = message.find("this run needs ");
  if (at == std::string::npos) return {};
  std::istringstream words(message.substr(at + 15));
  std::string number, unit;
  words >> number >> unit;
  const double scale = unit == "GiB" ? double(1 << 30) : unit == "MiB" ? double(1 << 20) : 0.0;
  const size_t point = number.find('.');
  const int decimals = point == std::string::npos ? 0 : int(number.size() - point - 1);
  return {std::atof(number.c_str()) * scale, 0.5 * std::pow(10.0, -decimals) * scale};
}

} // namespace

// The estimate is what a run takes: `rtm model` and `rtm migrate` on the CPU backend, their peak
// resident memory against the host memory their refusal names under a tight `ulimit -v`. Within
// 48 MiB above (what the estimate leaves out on purpose: the libraries, HDF5's and MPI's own
// buffers, the stack of every thread) and at most a quarter below: an item the propagators
// allocate and the estimate forgets (the CPU backend's wavefields were, before) fails it, as does
// an estimate that refuses runs that would fit.
TEST_F(BadInput, TheHostEstimateIsWhatACpuRunTakes) {
#ifdef RTM_TEST_UNDER_ASAN
  GTEST_SKIP() << "ASan's shadow memory inflates the resident memory and needs more address space";
#else
  const ScopedEnvironment one_thread("OMP_NUM_THREADS", "1");
  ASSERT_EQ(run({"generate-model", "--type", "layered", "--shape", "80,80,80", "-o", path("m.h5")}).status, 0);
  const std::vector<std::string> model = {"model", "-m", path("m.h5"), "-o", path("s.h5"), "--shots", "1",
                                          "--record-time", "0.2", "--boundary-width", "10",
                                          "--backend", "cpu", "--progress", "0"};
  const std::vector<std::string> migrate = {"migrate", "-s", path("s.h5"), "-m", path("m.h5"),
                                            "--smooth", "100", "-o", path("i.h5"), "--direct-wave",
                                            "none", "--boundary-width", "10", "--backend", "cpu",
                                            "--progress", "0"};
  // A limit 8 MiB above what rtm maps when it starts reading its model: far below either run.
  const long start_kib = rtm_start_vm_kib(dir_, {"model", "-m"}, {"-o", path("s.h5"), "--backend", "cpu"});
  ASSERT_GT(start_kib, 0) << "could not measure rtm's address space";
  const std::string limit = "ulimit -v " + std::to_string(start_kib + 8 * 1024) + " && ";
  for (const std::vector<std::string>* args : {&model, &migrate}) {
    SCOPED_TRACE((*args)[0]);
    const Outcome refused = run(*args, limit);
    const NamedBytes named = needed_host_bytes(refused.err);
    const double estimate = named.value;
    ASSERT_GT(estimate, 0) << refused.err;
    const auto [status, peak_kib] = run_for_peak_memory(dir_, *args);
    ASSERT_EQ(status, 0);
    const double peak = double(peak_kib) * 1024;
    // Against the estimate the message can stand for at either end of its rounding.
    EXPECT_LE(peak, estimate + named.rounding + 48.0 * (1 << 20))
        << "estimate " << estimate << " B, peak " << peak << " B";
    EXPECT_GE(peak, 0.75 * (estimate - named.rounding))
        << "estimate " << estimate << " B, peak " << peak << " B";
  }
#endif
}

// generate-model builds the model whole in memory: a shape that cannot fit is refused with the
// numbers before any of it is allocated (2500^3 ended in std::bad_alloc). The limit makes "cannot
// fit" hold on any machine: 2500^3 float32 is 58 GiB, far above it.
TEST_F(BadInput, GeneratedModelTooLargeForMemoryIsRefusedWithTheNumbers) {
#ifdef RTM_TEST_UNDER_ASAN
  GTEST_SKIP() << "ASan's shadow memory needs more address space than any limit allows";
#else
  const std::string err = expect_refused(
      {"generate-model", "--shape", "2500,2500,2500", "-o", path("gen.h5")},
      {"--shape 2500,2500,2500: the model needs 58.21 GiB of host memory", "15625000000 cells x 4 B",
       "ulimit -v", "To fit: a smaller --shape"},
      path("gen.h5"), "ulimit -v 4000000 && ");
  EXPECT_THAT(err, Not(HasSubstr("bad_alloc")));
#endif
}

// rtm bench --backend cpu allocates six padded grids: a --grid that cannot fit is refused with the
// numbers (under a limit, so on any machine), not ended by std::bad_alloc.
TEST_F(BadInput, CpuBenchGridTooLargeForMemoryIsRefused) {
#ifdef RTM_TEST_UNDER_ASAN
  GTEST_SKIP() << "ASan's shadow memory needs more address space than any limit allows";
#else
  const Outcome o = run({"bench", "--backend", "cpu", "--grid", "1500,1500,1500"}, "ulimit -v 4000000 && ");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_THAT(o.err, AllOf(HasSubstr("rtm bench --backend cpu --grid 1500"), HasSubstr("of host memory"),
                           HasSubstr("ulimit -v"), HasSubstr("a smaller --grid")));
  EXPECT_THAT(o.err, Not(HasSubstr("bad_alloc")));
#endif
}

// Outputs that cannot fit on their file system are refused before the run, with both numbers
// (RTM_FAKE_FREE_DISK_BYTES stands in for a nearly full disk).
TEST_F(BadInput, OutputsThatCannotFitOnTheDiskAreRefused) {
  const std::string model = good_model();
  const ScopedEnvironment full("RTM_FAKE_FREE_DISK_BYTES", "10"); // below even one shot's traces
  expect_model_refused(model, {}, {"-o " + path("shots.h5") + " and its checkpoint", "of disk space but",
                                   "RTM_FAKE_FREE_DISK_BYTES", "write the output elsewhere"});
  const std::string shots = shot_file(path("in_shots.h5"), 12, 200, 15);
  // One shot: by default no checkpoint before a stop, so none counted; with an interval asked
  // for, the checkpoints too.
  expect_refused({"migrate", "-s", shots, "--migration-model", model, "-o", path("image.h5"),
                  "--backend", "cpu", "--boundary-width", "4"},
                 {"-o " + path("image.h5") + " (/image) need", "of disk space"}, path("image.h5"));
  expect_refused({"migrate", "-s", shots, "--migration-model", model, "-o", path("image.h5"),
                  "--backend", "cpu", "--boundary-width", "4", "--checkpoint-every", "1"},
                 {"-o " + path("image.h5") + " (/image) and its checkpoints", "of disk space"},
                 path("image.h5"));
  expect_refused({"generate-model", "--shape", "20,20,20", "-o", path("gen.h5")},
                 {"-o " + path("gen.h5"), "8000 cells x 4 B", "of disk space"}, path("gen.h5"));
}

// ---- Implausible velocities: nearly always a units mistake ------------------------------------------

TEST_F(BadInput, VelocitiesThatLookLikeKilometresPerSecondAreRefusedWithAHint) {
  RawModel km; // 2 "m/s" everywhere, 4.5 in one cell, no units attribute
  km.fill = 2.0;
  km.planted_value = 4.5;
  const std::string file = raw_model(path("km.h5"), km);
  expect_model_refused(file, {}, {"km.h5", "/vp", "from 2 to 4.5 m/s", "300 to 10000 m/s",
                                  "add the attribute units = \"km/s\"",
                                  "--allow-unusual-velocities"});
  expect_refused({"migrate", "-s", path("absent_shots.h5"), "--migration-model", file, "-o",
                  path("image.h5")},
                 {"absent_shots.h5"}, path("image.h5")); // the shots are read first
  // units = "m/s" said explicitly: the hint is to correct it
  km.units = "m/s";
  expect_model_refused(raw_model(path("km_said.h5"), km), {},
                       {"km_said.h5", "set the attribute units of /vp to \"km/s\""});
  // m/s values labelled km/s: 2000 km/s
  RawModel thousandfold;
  thousandfold.units = "km/s";
  expect_model_refused(raw_model(path("big.h5"), thousandfold), {},
                       {"big.h5", "2e+06", "1000 times", "units of /vp to \"m/s\""});
  // an odd medium that is no units mistake: no hint about units
  RawModel slow;
  slow.fill = 150;
  const std::string err = expect_model_refused(raw_model(path("slow.h5"), slow), {},
                                               {"slow.h5", "from 150 to 2000 m/s"});
  EXPECT_THAT(err, Not(HasSubstr("km/s:")));
  // generated models too
  expect_refused({"generate-model", "--type", "constant", "--velocity", "2", "-o", path("gen.h5")},
                 {"constant model", "from 2 to 2 m/s", "give velocities in m/s"}, path("gen.h5"));
}

TEST_F(BadInput, UnusualVelocitiesAreAcceptedOnPurpose) {
  RawModel slow;
  slow.fill = 250; // below 300 m/s: refused without the flag (above), used with it
  const Outcome o = run({"model", "-m", raw_model(path("slow.h5"), slow), "-o", path("shots.h5"),
                         "--backend", "cpu", "--record-time", "0.02", "--boundary-width", "4",
                         "--f0", "5", "--allow-unusual-velocities"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(path("shots.h5")));
  const Outcome generated = run({"generate-model", "--type", "constant", "--velocity", "12000",
                                 "--shape", "8,8,8", "-o", path("fast.h5"),
                                 "--allow-unusual-velocities"});
  EXPECT_EQ(generated.status, 0) << generated.err;
}

// ---- An output that is one of the inputs: refused before any work, the input left as it was ---------

namespace {

std::string file_bytes(const std::string& path) { return read_text(path); }

} // namespace

TEST_F(BadInput, OutputThatIsAnInputIsRefusedNamingBoth) {
  const std::string model = good_model();
  const std::string before = file_bytes(model);
  fs::create_directories(path("sub"));
  fs::create_symlink(model, path("link.h5"));
  fs::create_hard_link(model, path("hard.h5"));
  struct Case {
    std::string output, shown;
  };
  for (const Case& c : {Case{model, model}, Case{"good.h5", "good.h5"},
                        Case{"sub/../good.h5", "sub/../good.h5"}, Case{"link.h5", "link.h5"},
                        Case{path("hard.h5"), path("hard.h5")}}) {
    SCOPED_TRACE(c.output);
    const Outcome o = run({"model", "-m", model, "-o", c.output, "--backend", "cpu",
                           "--record-time", "0.02", "--boundary-width", "4"});
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_THAT(o.err, AllOf(HasSubstr("-o " + c.shown), HasSubstr("same file as --model"),
                             HasSubstr("good.h5"), Not(HasSubstr("rtm: modeling"))));
    EXPECT_EQ(file_bytes(model), before) << "the input was changed";
  }
  // migrate: the image over the shots, a PNG over the config file
  const Outcome modelled = run({"model", "-m", model, "-o", path("shots.h5"), "--backend", "cpu",
                                "--record-time", "0.3", "--boundary-width", "4"});
  ASSERT_EQ(modelled.status, 0) << modelled.err;
  const Outcome over_shots = run({"migrate", "-s", "shots.h5", "--migration-model", model, "-o",
                                  path("shots.h5"), "--backend", "cpu"});
  EXPECT_EQ(over_shots.status, 2);
  EXPECT_THAT(over_shots.err, HasSubstr("same file as --shots shots.h5"));
  std::ofstream(path("image.png")) << "[migrate]\nbackend = \"cpu\"\n";
  const Outcome over_config =
      run({"migrate", "-s", "shots.h5", "--migration-model", model, "-o", path("image.h5"),
           "--png-dir", dir_.string(), "--config", path("image.png")});
  EXPECT_EQ(over_config.status, 2);
  EXPECT_THAT(over_config.err, HasSubstr("same file as --config"));
  EXPECT_FALSE(fs::exists(path("image.h5")));
  // generate-model over its config file; demo over its config file
  std::ofstream(path("gen.toml")) << "[generate-model]\ntype = \"constant\"\n";
  expect_refused({"--config", path("gen.toml"), "generate-model", "-o", path("gen.toml")},
                 {"-o", "same file as --config"}, path("nothing"));
  EXPECT_THAT(read_text(path("gen.toml")), HasSubstr("[generate-model]"));
  fs::create_directories(path("demo"));
  std::ofstream(path("demo/model.h5")) << "[demo]\nreceiver-step = 4\n";
  expect_refused({"demo", "-o", path("demo"), "--config", path("demo/model.h5")},
                 {"--output-dir", "same file as --config"}, path("demo/shots.h5"));
}

// ---- Migration inputs that do not fit together ---------------------------------------------------------

namespace {

// shot_file() above, on the grid of an n^3 model of 10 m cells (as `rtm model` records it).
std::string shot_file_on_grid(const std::string& file, int nx, int ny, int nz, int nt, double f0) {
  rtm::ShotFile shots;
  shots.nt = nt;
  shots.dt = 1e-3;
  shots.f0 = f0;
  shots.t0 = 1.0 / f0;
  shots.wavelet.assign(size_t(nt), 0.0f);
  shots.wavelet[1] = 1.0f;
  shots.nx = nx, shots.ny = ny, shots.nz = nz;
  shots.dx = shots.dy = shots.dz = 10;
  shots.receivers.push_back({20.0, 20.0, 30.0});
  rtm::ShotGather gather;
  gather.source = {20.0, 20.0, 20.0};
  gather.data.assign(size_t(nt), 0.0f);
  shots.shots.push_back(gather);
  rtm::write_shot_file(file, shots);
  return file;
}

} // namespace

TEST_F(BadInput, MigrationModelOnAnotherGridIsRefusedSayingWhatDiffers) {
  const std::string model = good_model(); // 12 x 12 x 12 cells of 10 m
  const std::vector<std::string> fast = {"--backend", "cpu", "--boundary-width", "4"};
  auto migrate = [&](const std::string& shots, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"migrate", "-s", shots, "--migration-model", model, "-o",
                                     path("image.h5")};
    args.insert(args.end(), fast.begin(), fast.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::string other = shot_file_on_grid(path("other.h5"), 12, 12, 20, 300, 15);
  expect_refused(migrate(other), {"good.h5", "other.h5", "shape differs", "(20, 12, 12)",
                                  "(12, 12, 12)", "--allow-other-grid"},
                 path("image.h5"));
  // x and y swapped: a 12 x 9 grid against a 9 x 12 model
  rtm::VelocityModel swapped;
  swapped.nx = 9, swapped.ny = 12, swapped.nz = 12;
  swapped.dx = swapped.dy = swapped.dz = 10;
  swapped.vp.assign(size_t(swapped.cells()), 2000.0f);
  rtm::write_velocity_model(path("swapped.h5"), swapped);
  const std::string shots = shot_file_on_grid(path("xy.h5"), 12, 9, 12, 300, 15);
  expect_refused({"migrate", "-s", shots, "--migration-model", path("swapped.h5"), "-o",
                  path("image.h5"), "--backend", "cpu"},
                 {"swapped.h5", "x and y axes are swapped"}, path("image.h5"));
  // a shot dt above the migration model's stability limit: blamed on the data, not on --dt
  rtm::VelocityModel fast_model = swapped;
  fast_model.nx = fast_model.ny = 12;
  fast_model.vp.assign(size_t(fast_model.cells()), 9000.0f);
  rtm::write_velocity_model(path("fast.h5"), fast_model);
  const std::string err = expect_refused(
      {"migrate", "-s", shot_file_on_grid(path("same.h5"), 12, 12, 12, 300, 15),
       "--migration-model", path("fast.h5"), "-o", path("image.h5"), "--backend", "cpu"},
      {"the shot file's dt = 0.001 s", "stability limit of the migration model", "9000 m/s"},
      path("image.h5"));
  EXPECT_THAT(err, Not(HasSubstr("Use --dt")));
}

TEST_F(BadInput, RecordsShorterThanTheWaveletAreRefusedWithTheNumbers) {
  // 15 Hz: t0 = 1/15 = 0.0667 s; 50 samples of 1 ms end at 0.049 s, before it.
  const std::string model = good_model();
  expect_refused({"migrate", "-s", shot_file_on_grid(path("short.h5"), 12, 12, 12, 50, 15),
                  "--migration-model", model, "-o", path("image.h5"), "--backend", "cpu"},
                 {"short.h5", "end at 0.049 s", "50 samples of 0.001 s", "t0 = 0.06667 s",
                  "all zero", "--record-time"},
                 path("image.h5"));
  // 100 samples end at 0.099 s: after t0, but the mute zeroes everything up to t0 + 1/f0 = 0.133 s
  expect_refused({"migrate", "-s", shot_file_on_grid(path("muted.h5"), 12, 12, 12, 100, 15),
                  "--migration-model", model, "-o", path("image.h5"), "--backend", "cpu"},
                 {"muted.h5", "direct-wave mute", "0.1333 s", "--direct-wave none"},
                 path("image.h5"));
  // rtm model warns when the record it is asked for ends before the wavelet's delay
  const Outcome o = run({"model", "-m", model, "-o", path("shots.h5"), "--backend", "cpu",
                         "--record-time", "0.02", "--boundary-width", "4"});
  EXPECT_EQ(o.status, 0);
  EXPECT_THAT(o.err, AllOf(HasSubstr("warning: --record-time 0.02 s ends before the wavelet's "
                                     "delay t0 = 0.12 s")));
}

// ---- Messages whose numbers agree with what they say ----------------------------------------------------

TEST_F(BadInput, PointARoundingErrorOutsideIsOnTheEdge) {
  rtm::ModelGeometry geometry; // the model spans 0..110 m on each axis
  geometry.sources = {{50, 50, 110.0 + 1e-9}};
  geometry.receivers = {{20, 50, 10}, {20, 50, 110.0 + 1e-9}};
  const Outcome o = run({"model", "-m", good_model(geometry), "-o", path("shots.h5"), "--backend",
                         "cpu", "--record-time", "0.02", "--boundary-width", "4"});
  EXPECT_EQ(o.status, 0) << o.err;
  fs::remove(path("shots.h5"));
  // truly outside, by a little: the numbers show it
  geometry.receivers = {{20, 50, 10}, {20, 50, 110.001}};
  expect_model_refused(good_model(geometry), {},
                       {"receiver 1", "x = 110.001 m lies outside x [0, 110] m"});
  // 1e-5 cells outside: beyond rounding (1e-6 cells), and shown with the digits that say so
  geometry.receivers = {{20, 50, 10}, {20, 50, 110.0001}};
  expect_model_refused(good_model(geometry), {}, {"x = 110.0001 m lies outside x [0, 110] m"});
}

TEST_F(BadInput, NumbersInMessagesCarryOnlyTheDigitsThatMatter) {
  const std::string err =
      expect_model_refused(good_model(), {"--source-depth", "500"}, {"--source-depth 500 m", "to 110 m"});
  EXPECT_THAT(err, Not(HasSubstr(".000000")));
}

// ---- Names: did you mean ----------------------------------------------------------------------------------

TEST_F(BadInput, UnknownOptionIsNamedWithTheClosestReal) {
  // --model is required too: the unknown name is the real cause, and is reported first.
  std::string err = expect_refused({"model", "--model-file", good_model(), "-o", path("shots.h5")},
                                   {"--model-file is not an option of rtm model; did you mean --model?"},
                                   path("shots.h5"));
  err = expect_model_refused(good_model(), {"--recod-time", "1"},
                             {"--recod-time is not an option of rtm model; did you mean --record-time?"});
  err = expect_model_refused(good_model(), {"--zzzzzz"}, {"--zzzzzz is not an option of rtm model"});
  EXPECT_THAT(err, Not(HasSubstr("did you mean")));
  expect_refused({"modle", "-m", good_model(), "-o", path("shots.h5")},
                 {"modle is not a subcommand of rtm; did you mean model?"}, path("shots.h5"));
  expect_refused({"migarte"}, {"did you mean migrate?"}, path("nothing"));
}

// An option of one value given twice is named with both values, not CLI11's "At Most 1 required
// but received 2".
TEST_F(BadInput, AnOptionGivenTwiceIsNamedWithBothValues) {
  const std::string err = expect_refused(
      {"model", "-m", good_model(), "-o", path("a.h5"), "--output=" + path("b.h5")},
      {"-o/--output is given 2 times to rtm model (-o " + path("a.h5") + ", --output=" + path("b.h5") +
       ") but takes one value: give it once"},
      path("a.h5"));
  EXPECT_THAT(err, Not(HasSubstr("At Most")));
  EXPECT_FALSE(fs::exists(path("b.h5")));
  expect_refused({"generate-model", "--type", "salt", "--type", "layered", "-o", path("m.h5")},
                 {"--type is given 2 times to rtm generate-model (--type salt, --type layered)"},
                 path("m.h5"));
}

// Without a GPU the CPU run says so in one short line (the whole reason is `rtm info`'s).
TEST_F(BadInput, NoUsableGpuIsOneShortLine) {
  const Outcome info = run({"info", "--json"});
  if (info.out.find("\"available\": true") != std::string::npos)
    GTEST_SKIP() << "this machine has a GPU";
  const Outcome o = run({"model", "-m", good_model(), "-o", path("shots.h5"), "--record-time", "0.02",
                         "--boundary-width", "4", "--progress", "0"});
  ASSERT_EQ(o.status, 0) << o.err;
  std::istringstream lines(o.err);
  int said = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("rtm: no usable GPU", 0) == 0) {
      ++said;
      EXPECT_LE(line.size(), 100u) << line;
      EXPECT_THAT(line, AllOf(HasSubstr("using the CPU"), HasSubstr("rtm info")));
    }
  EXPECT_EQ(said, 1) << o.err;
}

TEST_F(BadInput, ConfigFileWorksAfterTheSubcommandToo) {
  std::ofstream(path("ok.toml")) << "[model]\nbackend = \"cpu\"\nrecord-time = 0.02\n"
                                    "boundary-width = 4\n";
  const Outcome o = run({"model", "-m", good_model(), "-o", path("shots.h5"), "--config",
                         path("ok.toml")});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(path("shots.h5")));
  fs::remove(path("shots.h5"));
  // and its errors are still reported as the config file's
  std::ofstream(path("bad.toml")) << "[model]\nf0 = = 12\n";
  expect_model_refused(good_model(), {"--config=" + path("bad.toml")}, {"bad.toml", "line 2"});
}

// ---- Commands on a machine without what they need -----------------------------------------------------------

TEST_F(BadInput, InfoPrintsJson) {
  const Outcome o = run({"info", "--json"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out.substr(0, 1), "{");
  EXPECT_THAT(o.out, AllOf(HasSubstr("\"version\""), HasSubstr("\"gpu\""),
                           HasSubstr("\"available\"")));
}

TEST_F(BadInput, BenchCpmlWidthIsRefusedWhereItCannotRun) {
  const Outcome o = run({"bench", "--backend", "cpu", "--cpml-width", "4"});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("--cpml-width"));
}

TEST_F(BadInput, BenchWithoutAGpuIsNotBadInputAndPointsToTheCpuBenchmark) {
  const Outcome info = run({"info", "--json"});
  if (info.out.find("\"available\": true") != std::string::npos)
    GTEST_SKIP() << "this machine has a GPU: rtm bench runs";
  const Outcome o = run({"bench", "--steps", "1"});
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_THAT(o.err, HasSubstr("rtm bench --backend cpu"));
}
