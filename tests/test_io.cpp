// io/: HDF5 velocity models, shot files and volumes (round trips and every refusal the readers
// promise), atomic writing (figures: test_figures.cpp). The invalid files are built here with the plain
// HDF5 C API, independently of the code under test.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <hdf5_hl.h>

#include "solvers/contracts/errors.h"
#include "io/hdf5_util.h"
#include "io/shot_file.h"
#include "io/velocity_model.h"
#include "io/volume_file.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

// Each test gets its own empty directory, removed afterwards.
class IoTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("rtm_test_io_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> files_in_directory() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

// The message of the InputError that `action` throws ("" and a test failure if it throws none).
std::string input_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const rtm::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected rtm::InputError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected rtm::InputError, nothing was thrown";
  return "";
}

// ---- Raw HDF5 files, written without the code under test -----------------------------------------

void add_double_attribute(hid_t object, const char* name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t attribute = H5Acreate2(object, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_DOUBLE, values.data()), 0);
  H5Aclose(attribute);
  H5Sclose(space);
}

// A variable-length UTF-8 string, as h5py writes them.
void add_string_attribute(hid_t object, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  const char* text = value.c_str();
  ASSERT_GE(H5Awrite(attribute, type, &text), 0);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

// What a model file holds; each invalid case changes one thing.
struct RawModel {
  std::vector<hsize_t> dims = {2, 3, 4}; // [nz][ny][nx]
  hid_t file_type = H5T_IEEE_F32LE;
  std::vector<double> values;            // empty: 1500 + index
  const char* dataset = "vp";
  bool with_spacing = true;
  std::vector<double> spacing = {10, 20, 30};
  std::vector<double> origin = {1, 2, 3};
  std::string units = "m/s";             // empty: no attribute
  bool write_values = true;              // false: declare the dataset only (no storage is used)
};

void write_raw_model(const std::string& path, const RawModel& m) {
  hsize_t count = 1;
  for (hsize_t d : m.dims) count *= d;
  std::vector<double> values = m.values;
  if (values.empty() && m.write_values)
    for (hsize_t i = 0; i < count; ++i) values.push_back(1500.0 + double(i));
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t space = H5Screate_simple(int(m.dims.size()), m.dims.data(), nullptr);
  const hid_t dataset = H5Dcreate2(file, m.dataset, m.file_type, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  if (count > 0 && m.write_values) {
    ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  }
  if (m.with_spacing) add_double_attribute(dataset, "spacing", m.spacing);
  add_double_attribute(dataset, "origin", m.origin);
  if (!m.units.empty()) add_string_attribute(dataset, "units", m.units);
  H5Dclose(dataset);
  H5Sclose(space);
  ASSERT_GE(H5Fclose(file), 0);
}

std::string model_error(const std::string& path, const RawModel& m) {
  write_raw_model(path, m);
  return input_error([&] { rtm::read_velocity_model(path); });
}

rtm::VelocityModel small_model() {
  rtm::VelocityModel model;
  model.nx = 5, model.ny = 4, model.nz = 3;
  model.dx = 10, model.dy = 12.5, model.dz = 7.5;
  model.ox = -100, model.oy = 50, model.oz = 0.25;
  for (int i = 0; i < 60; ++i) model.vp.push_back(1500.0f + 10.0f * float(i));
  return model;
}

} // namespace

// ---- Velocity models -----------------------------------------------------------------------------

TEST_F(IoTest, ModelRoundTripKeepsValuesGridAndGeometry) {
  const rtm::VelocityModel model = small_model();
  rtm::ModelGeometry geometry;
  geometry.sources = {{10, 20, 30}, {10, 20, 60}};
  geometry.receivers = {{0, 0, 0}, {0, 5, 5}, {0.5, 10, 10}};
  rtm::write_velocity_model(path("model.h5"), model, geometry);

  const rtm::VelocityModel back = rtm::read_velocity_model(path("model.h5"));
  EXPECT_EQ(back.nx, 5);
  EXPECT_EQ(back.ny, 4);
  EXPECT_EQ(back.nz, 3);
  EXPECT_EQ(back.dx, 10);
  EXPECT_EQ(back.dy, 12.5);
  EXPECT_EQ(back.dz, 7.5);
  EXPECT_EQ(back.ox, -100);
  EXPECT_EQ(back.oy, 50);
  EXPECT_EQ(back.oz, 0.25);
  EXPECT_EQ(back.vp, model.vp);
  EXPECT_EQ(back.at(4, 3, 2), model.vp.back());
  EXPECT_EQ(back.vmin(), 1500.0f);
  EXPECT_EQ(back.vmax(), 1500.0f + 590.0f);

  const rtm::ModelGeometry geometry_back = rtm::read_model_geometry(path("model.h5"));
  EXPECT_EQ(geometry_back.sources, geometry.sources);
  EXPECT_EQ(geometry_back.receivers, geometry.receivers);
  EXPECT_EQ(files_in_directory(), (std::vector<std::string>{"model.h5", "model.xmf"}))
      << "a temporary file is left";
}

// One rank's planes of a z-slab decomposition: a hyperslab of /vp (solvers/drivers/slab_model.h).
TEST_F(IoTest, PlanesOfAModelAreReadByHyperslab) {
  const rtm::VelocityModel model = small_model(); // 5 x 4 x 3, origin z 0.25, dz 7.5
  rtm::write_velocity_model(path("model.h5"), model);
  const rtm::VelocityPlanes planes = rtm::read_velocity_planes(path("model.h5"), "vp", 1, 3);
  EXPECT_EQ(planes.z_first, 1);
  EXPECT_EQ(planes.nz_whole, 3);
  EXPECT_EQ(planes.model.nz, 2);
  EXPECT_EQ(planes.model.nx, 5);
  EXPECT_EQ(planes.model.oz, 0.25 + 7.5); // the origin of its first plane
  EXPECT_EQ(planes.model.vp, std::vector<float>(model.vp.begin() + 20, model.vp.end()));
  const rtm::VelocityModel shape = rtm::read_model_shape(path("model.h5"));
  EXPECT_EQ(shape.nz, 3);
  EXPECT_EQ(shape.oz, 0.25);
  EXPECT_TRUE(shape.vp.empty());
  EXPECT_THROW(rtm::read_velocity_planes(path("model.h5"), "vp", 2, 4), std::invalid_argument);
  // The extremes of every plane decide plausibility, with read_velocity_model's message.
  EXPECT_THAT(input_error([&] { rtm::check_velocity_planes_plausible(planes, 1.5, 2.0); }),
              HasSubstr("the values look like km/s"));
}

TEST_F(IoTest, APlaneRangeIsCheckedWithTheWholeModelsIndices) {
  RawModel m;
  m.values.assign(24, 2000.0);
  m.values[(1 * 3 + 2) * 4 + 3] = std::numeric_limits<double>::quiet_NaN(); // (z,y,x) = (1,2,3)
  write_raw_model(path("m.h5"), m);
  EXPECT_THAT(input_error([&] { rtm::read_velocity_planes(path("m.h5"), "vp", 1, 2); }),
              HasSubstr("m.h5: dataset /vp has value nan at (z,y,x) = (1,2,3)"));
  EXPECT_NO_THROW(rtm::read_velocity_planes(path("m.h5"), "vp", 0, 1)); // plane 0 is clean
}

TEST_F(IoTest, ModelFileFollowsTheLayout) {
  rtm::write_velocity_model(path("model.h5"), small_model());
  const hid_t file = H5Fopen(path("model.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t vp = H5Dopen2(file, "/vp", H5P_DEFAULT);
  ASSERT_GE(vp, 0);
  const hid_t type = H5Dget_type(vp);
  EXPECT_GT(H5Tequal(type, H5T_IEEE_F32LE), 0) << "/vp must be float32";
  for (const char* name : {"spacing", "origin", "axes", "units"})
    EXPECT_GT(H5Aexists(vp, name), 0) << "attribute " << name;
  EXPECT_EQ(H5Lexists(file, "sources", H5P_DEFAULT), 0) << "empty geometry is not written";
  H5Tclose(type);
  H5Dclose(vp);
  H5Fclose(file);
  EXPECT_TRUE(rtm::read_model_geometry(path("model.h5")).sources.empty());
}

TEST_F(IoTest, KilometresPerSecondAreConvertedAndFloat64Accepted) {
  RawModel m;
  m.file_type = H5T_IEEE_F64LE;
  m.values.assign(24, 1.5);
  m.values[5] = 4.5;
  m.units = "km/s";
  write_raw_model(path("km.h5"), m);
  const rtm::VelocityModel model = rtm::read_velocity_model(path("km.h5"));
  EXPECT_FLOAT_EQ(model.vp[0], 1500.0f);
  EXPECT_FLOAT_EQ(model.vp[5], 4500.0f);
  EXPECT_EQ(model.nz, 2);
  EXPECT_EQ(model.nx, 4);
  EXPECT_EQ(model.dz, 10);
  EXPECT_EQ(model.dx, 30);
}

TEST_F(IoTest, UnitsAndOriginAreOptional) {
  RawModel m;
  m.units = "";
  write_raw_model(path("plain.h5"), m);
  EXPECT_FLOAT_EQ(rtm::read_velocity_model(path("plain.h5")).vp[1], 1501.0f);
}

TEST_F(IoTest, MissingFileIsRefused) {
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("absent.h5")); }),
              HasSubstr("absent.h5: no such file"));
}

TEST_F(IoTest, TextFileIsRefused) {
  std::ofstream(path("notes.txt")) << "not a model\n";
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("notes.txt")); }),
              HasSubstr("notes.txt: not an HDF5 file"));
}

TEST_F(IoTest, MissingDatasetIsRefused) {
  RawModel m;
  m.dataset = "velocity";
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp not found; the file's root holds /velocity"));
}

TEST_F(IoTest, MissingDatasetByNameGetsTheRootsNames) {
  rtm::write_velocity_model(path("m.h5"), small_model());
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("m.h5"), "velocity"); }),
              HasSubstr("m.h5: dataset /velocity not found; the file's root holds /vp"));
}

TEST_F(IoTest, EmptyFileIsSaidToBeEmpty) {
  H5Fclose(H5Fcreate(path("empty.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("empty.h5")); }),
              HasSubstr("empty.h5: dataset /vp not found; the file's root is empty"));
}

TEST_F(IoTest, GroupInsteadOfDatasetIsRefused) {
  const hid_t file = H5Fcreate(path("g.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(file, "vp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(file);
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("g.h5")); }),
              HasSubstr("g.h5: /vp is a group; expected a dataset"));
}

TEST_F(IoTest, RankTwoIsRefused) {
  RawModel m;
  m.dims = {3, 4};
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has rank 2; expected 3 ([nz][ny][nx])"));
}

TEST_F(IoTest, EmptyDimensionIsRefused) {
  RawModel m;
  m.dims = {2, 0, 4};
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has shape [2][0][4]; expected every dimension between 1"));
}

TEST_F(IoTest, AbsurdSizeIsRefused) {
  RawModel m;
  m.dims = {4096, 4096, 4096}; // 2^36 cells
  m.write_values = false;
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has shape [4096][4096][4096]; more than 2^34 cells"));
}

TEST_F(IoTest, IntegerDatasetIsRefused) {
  RawModel m;
  m.file_type = H5T_STD_I32LE;
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has type int32; expected float32 or float64"));
}

TEST_F(IoTest, NanIsRefusedWithItsIndex) {
  RawModel m;
  m.values.assign(24, 2000.0);
  m.values[(1 * 3 + 2) * 4 + 3] = std::numeric_limits<double>::quiet_NaN(); // (z,y,x) = (1,2,3)
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has value nan at (z,y,x) = (1,2,3)"));
}

TEST_F(IoTest, InfinityIsRefused) {
  RawModel m;
  m.values.assign(24, 2000.0);
  m.values[7] = std::numeric_limits<double>::infinity(); // (0,1,3)
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has value inf at (z,y,x) = (0,1,3)"));
}

TEST_F(IoTest, ZeroVelocityIsRefused) {
  RawModel m;
  m.values.assign(24, 2000.0);
  m.values[4] = 0.0; // (0,1,0)
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has value 0 at (z,y,x) = (0,1,0); expected every "
                        "velocity > 0"));
}

TEST_F(IoTest, NegativeVelocityIsRefused) {
  RawModel m;
  m.values.assign(24, 2000.0);
  m.values[23] = -1500.0; // (1,2,3)
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: dataset /vp has value -1500 at (z,y,x) = (1,2,3)"));
}

TEST_F(IoTest, MissingSpacingIsRefused) {
  RawModel m;
  m.with_spacing = false;
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: attribute spacing of /vp is missing; expected 3 numbers"));
}

TEST_F(IoTest, NonPositiveSpacingIsRefused) {
  RawModel m;
  m.spacing = {10, 0, 10};
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: attribute spacing of /vp is [10, 0, 10]; expected 3 positive"));
  m.spacing = {10, -5, 10};
  EXPECT_THAT(model_error(path("m.h5"), m), HasSubstr("is [10, -5, 10]"));
}

TEST_F(IoTest, SpacingWithTwoValuesIsRefused) {
  RawModel m;
  m.spacing = {10, 10};
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: attribute spacing of /vp has 2 values; expected 3 numbers"));
}

TEST_F(IoTest, WrongUnitsAreRefused) {
  RawModel m;
  m.units = "ft/s";
  EXPECT_THAT(model_error(path("m.h5"), m),
              HasSubstr("m.h5: attribute units of /vp is \"ft/s\"; expected \"m/s\" or \"km/s\""));
}

TEST_F(IoTest, GeometryWithWrongShapeIsRefused) {
  rtm::write_velocity_model(path("m.h5"), small_model());
  const hid_t file = H5Fopen(path("m.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hsize_t dims[2] = {2, 2};
  const double values[4] = {1, 2, 3, 4};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dataset =
      H5Dcreate2(file, "sources", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Fclose(file);
  EXPECT_THAT(input_error([&] { rtm::read_model_geometry(path("m.h5")); }),
              HasSubstr("m.h5: dataset /sources has shape [2][2]; expected [n][3]"));
}

// ---- Atomic writing ------------------------------------------------------------------------------

TEST_F(IoTest, WritingIntoAMissingDirectoryLeavesNothing) {
  const std::string target = path("no/such/dir/model.h5");
  EXPECT_THAT(input_error([&] { rtm::write_velocity_model(target, small_model()); }),
              HasSubstr("model.h5: cannot write: directory"));
  EXPECT_FALSE(fs::exists(path("no")));
  EXPECT_TRUE(files_in_directory().empty());
}

TEST_F(IoTest, FailedWriteRemovesTheTemporaryAndKeepsTheOldFile) {
  const std::string target = path("model.h5");
  rtm::write_velocity_model(target, small_model());
  EXPECT_THROW(rtm::h5::write_hdf5_atomically(target,
                                              [&](hid_t file) {
                                                const std::vector<float> half(10, 1.0f);
                                                rtm::h5::write_dataset(file, "vp", {10}, half.data(),
                                                                       target);
                                                throw std::runtime_error("interrupted");
                                              }),
               std::runtime_error);
  // The old model and its ParaView sidecar (io/xdmf_sidecar.h) are all there is.
  EXPECT_EQ(files_in_directory(), (std::vector<std::string>{"model.h5", "model.xmf"}));
  EXPECT_EQ(rtm::read_velocity_model(target).vp, small_model().vp);
}

// ---- Shot files ----------------------------------------------------------------------------------

namespace {

rtm::ShotFile small_shot_file() {
  rtm::ShotFile file;
  file.nt = 5;
  file.dt = 1e-3;
  file.f0 = 15;
  file.t0 = 0.08;
  file.wavelet = {0, 0.5f, 1, 0.5f, 0};
  file.receivers = {{0, 0, 0}, {0, 0, 10}, {0, 0, 20}};
  file.nx = 5, file.ny = 4, file.nz = 3;
  file.dx = 10, file.dy = 10, file.dz = 5;
  file.oz = 1;
  for (int id : {0, 7}) {
    rtm::ShotGather shot;
    shot.id = id;
    shot.source = {5, 10, 15.0 + id};
    for (int i = 0; i < 15; ++i) shot.data.push_back(float(id * 100 + i));
    file.shots.push_back(shot);
  }
  return file;
}

// Replaces dataset `name` with a float32 one of the given shape (and a source attribute).
void replace_gather(const std::string& path, const char* name, std::vector<hsize_t> dims, float fill) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  ASSERT_GE(H5Ldelete(file, name, H5P_DEFAULT), 0);
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t dataset =
      H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<float> values(size_t(dims[0] * dims[1]), fill);
  H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  add_double_attribute(dataset, "source", {0, 0, 0});
  H5Dclose(dataset);
  H5Sclose(space);
  H5Fclose(file);
}

} // namespace

TEST_F(IoTest, ShotFileRoundTrip) {
  const rtm::ShotFile file = small_shot_file();
  rtm::write_shot_file(path("shots.h5"), file);
  EXPECT_EQ(files_in_directory(), std::vector<std::string>{"shots.h5"});

  const rtm::ShotFile back = rtm::read_shot_file(path("shots.h5"));
  EXPECT_EQ(back.nt, 5);
  EXPECT_EQ(back.dt, 1e-3);
  EXPECT_EQ(back.f0, 15);
  EXPECT_EQ(back.t0, 0.08);
  EXPECT_EQ(back.wavelet, file.wavelet);
  EXPECT_EQ(back.receivers, file.receivers);
  EXPECT_EQ(back.nx, 5);
  EXPECT_EQ(back.nz, 3);
  EXPECT_EQ(back.dz, 5);
  EXPECT_EQ(back.oz, 1);
  ASSERT_EQ(back.shots.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(back.shots[s].id, file.shots[s].id);
    EXPECT_EQ(back.shots[s].source, file.shots[s].source);
    EXPECT_EQ(back.shots[s].data, file.shots[s].data);
  }
  // Groups are named by shot number with 4 digits.
  const hid_t raw = H5Fopen(path("shots.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GT(H5Lexists(raw, "shots", H5P_DEFAULT), 0);
  EXPECT_GT(H5Lexists(raw, "shots/0007", H5P_DEFAULT), 0);
  H5Fclose(raw);
}

TEST_F(IoTest, ShotGatherWithWrongShapeIsRefused) {
  rtm::write_shot_file(path("shots.h5"), small_shot_file());
  replace_gather(path("shots.h5"), "shots/0007/data", {3, 4}, 1.0f);
  EXPECT_THAT(input_error([&] { rtm::read_shot_file(path("shots.h5")); }),
              HasSubstr("shots.h5: dataset /shots/0007/data has shape [3][4]; expected [3][5]"));
}

TEST_F(IoTest, ShotGatherWithNanIsRefused) {
  rtm::write_shot_file(path("shots.h5"), small_shot_file());
  replace_gather(path("shots.h5"), "shots/0000/data", {3, 5},
                 std::numeric_limits<float>::quiet_NaN());
  EXPECT_THAT(input_error([&] { rtm::read_shot_file(path("shots.h5")); }),
              HasSubstr("shots.h5: dataset /shots/0000/data has value nan at [0][0]"));
}

TEST_F(IoTest, ShotFileWithoutNtOrWaveletIsRefused) {
  rtm::write_shot_file(path("shots.h5"), small_shot_file());
  hid_t file = H5Fopen(path("shots.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(file, "wavelet", H5P_DEFAULT);
  H5Fclose(file);
  EXPECT_THAT(input_error([&] { rtm::read_shot_file(path("shots.h5")); }),
              HasSubstr("shots.h5: dataset /wavelet not found"));

  file = H5Fopen(path("shots.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(file, "nt");
  H5Fclose(file);
  EXPECT_THAT(input_error([&] { rtm::read_shot_file(path("shots.h5")); }),
              HasSubstr("shots.h5: attribute nt of / is missing"));
}

// The commonest first mistake: the model and the shots given the other way round.
TEST_F(IoTest, ModelAndShotFilesSwappedAreNamedForWhatTheyAre) {
  rtm::write_shot_file(path("shots.h5"), small_shot_file());
  rtm::write_velocity_model(path("m.h5"), small_model());
  EXPECT_THAT(input_error([&] { rtm::read_velocity_model(path("shots.h5")); }),
              HasSubstr("shots.h5: dataset /vp not found; the file is a shot file (it holds "
                        "/shots), not a velocity model"));
  EXPECT_THAT(input_error([&] { rtm::read_shot_file(path("m.h5")); }),
              HasSubstr("m.h5: not a shot file: no group /shots and no root attribute nt; the "
                        "file is a velocity model (it holds /vp), not a shot file"));
  EXPECT_THAT(input_error([&] { rtm::read_shot_geometry(path("m.h5")); }),
              HasSubstr("m.h5: not a shot file"));
}

TEST_F(IoTest, InconsistentShotFileIsNotWritten) {
  rtm::ShotFile file = small_shot_file();
  file.shots[1].data.pop_back();
  EXPECT_THROW(rtm::write_shot_file(path("shots.h5"), file), std::invalid_argument);
  EXPECT_TRUE(files_in_directory().empty());
}

// ---- Volumes -------------------------------------------------------------------------------------

// ParaView, VisIt, h5py and xarray: an XDMF sidecar with the grid's true spacing and origin,
// dimension scales /z /y /x in metres, strings h5py returns as str (variable-length UTF-8),
// provenance on the root, units on a volume that has them, dt on every gather.
TEST_F(IoTest, FilesCarryWhatViewersAndPythonToolsNeed) {
  rtm::VelocityModel grid = small_model();
  grid.ox = 100;
  grid.oy = 0;
  grid.oz = 7.5;
  std::vector<float> image(size_t(grid.cells()), 1.0f);
  rtm::write_volumes(path("image.h5"), grid, {{"image", &image, "relative amplitude"}});

  std::ifstream sidecar(path("image.xmf"));
  ASSERT_TRUE(sidecar.good()) << "no XDMF sidecar next to image.h5";
  std::stringstream xml;
  xml << sidecar.rdbuf();
  EXPECT_THAT(xml.str(), HasSubstr("TopologyType=\"3DCoRectMesh\" Dimensions=\"" +
                                   std::to_string(grid.nz) + " " + std::to_string(grid.ny) + " " +
                                   std::to_string(grid.nx) + "\""));
  EXPECT_THAT(xml.str(), HasSubstr(">7.5 0 100</DataItem>"));       // origin z y x
  EXPECT_THAT(xml.str(), HasSubstr("image.h5:/image</DataItem>"));

  const hid_t file = H5Fopen(path("image.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dataset = H5Dopen2(file, "image", H5P_DEFAULT);
  for (unsigned dim = 0; dim < 3; ++dim) EXPECT_EQ(H5DSget_num_scales(dataset, dim), 1) << dim;
  const hid_t x = H5Dopen2(file, "x", H5P_DEFAULT);
  EXPECT_GT(H5DSis_scale(x), 0);
  std::vector<double> xs(size_t(grid.nx));
  H5Dread(x, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, xs.data());
  EXPECT_EQ(xs[1], 100 + grid.dx);
  for (const char* name : {"units"}) {
    const hid_t attribute = H5Aopen(dataset, name, H5P_DEFAULT);
    const hid_t type = H5Aget_type(attribute);
    EXPECT_GT(H5Tis_variable_str(type), 0) << name;
    EXPECT_EQ(H5Tget_cset(type), H5T_CSET_UTF8) << name;
    H5Tclose(type);
    H5Aclose(attribute);
  }
  for (const char* name : {"rtm_version", "rtm_command_line", "rtm_created", "rtm_parameters"})
    EXPECT_GT(H5Aexists(file, name), 0) << name;
  H5Dclose(x);
  H5Dclose(dataset);
  H5Fclose(file);

  rtm::ShotFile shots;
  shots.nt = 4;
  shots.dt = 0.002;
  shots.wavelet.assign(4, 0.0f);
  shots.receivers = {{1, 2, 3}};
  shots.shots.push_back({0, {0, 0, 0}, std::vector<float>(4, 0.0f), {}, std::nullopt});
  rtm::write_shot_file(path("shots.h5"), shots);
  const hid_t sf = H5Fopen(path("shots.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t gather = H5Dopen2(sf, "shots/0000/data", H5P_DEFAULT);
  double dt = 0;
  const hid_t dt_attribute = H5Aopen(gather, "dt", H5P_DEFAULT);
  H5Aread(dt_attribute, H5T_NATIVE_DOUBLE, &dt);
  EXPECT_EQ(dt, 0.002);
  H5Aclose(dt_attribute);
  H5Dclose(gather);
  H5Fclose(sf);
}

// A volume with a non-finite value anywhere (the check runs in blocks over threads: the first
// value, one deep in a later block, the last) is refused before any file is made.
TEST_F(IoTest, VolumeWithANonFiniteValueIsRefusedBeforeAnyFile) {
  rtm::VelocityModel grid = small_model();
  grid.nx = 100, grid.ny = 90, grid.nz = 3; // 27,000 values: several blocks
  const size_t cells = size_t(grid.cells());
  for (const size_t at : {size_t(0), size_t(12345), cells - 1})
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::infinity()}) {
      std::vector<float> image(cells, 1.0f);
      image[at] = bad;
      EXPECT_THROW(rtm::write_volumes(path("bad.h5"), grid, {{"image", &image, ""}}),
                   std::invalid_argument);
    }
  std::vector<float> largest(cells, std::numeric_limits<float>::max());
  largest[7] = -std::numeric_limits<float>::max();
  rtm::write_volumes(path("finite.h5"), grid, {{"image", &largest, ""}});
  EXPECT_EQ(files_in_directory(), (std::vector<std::string>{"finite.h5", "finite.xmf"}));
}

TEST_F(IoTest, VolumeRoundTrip) {
  const rtm::VelocityModel grid = small_model();
  std::vector<float> image(60), illumination(60);
  for (int i = 0; i < 60; ++i) image[i] = float(i % 7) - 3.0f, illumination[i] = float(i) * 0.5f;
  rtm::write_volumes(path("image.h5"), grid,
                     {{"image", &image, "relative"}, {"illumination", &illumination, ""}});

  rtm::VelocityModel read_grid;
  EXPECT_EQ(rtm::read_volume(path("image.h5"), "image", read_grid), image);
  EXPECT_EQ(rtm::read_volume(path("image.h5"), "/illumination", read_grid), illumination);
  EXPECT_EQ(read_grid.nx, 5);
  EXPECT_EQ(read_grid.ny, 4);
  EXPECT_EQ(read_grid.nz, 3);
  EXPECT_EQ(read_grid.dy, 12.5);
  EXPECT_EQ(read_grid.ox, -100);
  EXPECT_THAT(input_error([&] { rtm::read_volume(path("image.h5"), "stack", read_grid); }),
              HasSubstr("image.h5: dataset /stack not found"));
  EXPECT_EQ(files_in_directory(), (std::vector<std::string>{"image.h5", "image.xmf"}));
}
