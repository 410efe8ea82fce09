// What `rtm migrate` writes and what its --profile says about the whole run, through the real
// executable (RTM_EXECUTABLE) on a tiny CPU problem: the volumes --datasets asks for and no other
// (the image alone by default), the figures of those, bad lists refused before any work, and the
// whole run's table of phases with their times and bytes (solvers/drivers/run_profile.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "io/figure.h"
#include "io/volume_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/angle_gathers.h"
#include "solvers/drivers/image_datasets.h"

namespace rtm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ImageDatasets, ParsesListsAndAll) {
  const ImageDatasets d = parse_image_datasets(kDefaultImageDatasets);
  EXPECT_TRUE(d.image);
  EXPECT_FALSE(d.illumination);
  EXPECT_FALSE(d.image_raw);
  const ImageDatasets two = parse_image_datasets("image_raw,illumination");
  EXPECT_FALSE(two.image);
  EXPECT_TRUE(two.illumination);
  EXPECT_TRUE(two.image_raw);
  EXPECT_EQ(two.names(), (std::vector<std::string>{"illumination", "image_raw"})); // file order
  EXPECT_EQ(describe(two), "/illumination, /image_raw");
  EXPECT_EQ(parse_image_datasets("all").count(), 3);
  EXPECT_FALSE(parse_image_datasets("all").gathers());
  const ImageDatasets with_gathers = parse_image_datasets("all", "--datasets", true);
  EXPECT_TRUE(with_gathers.offset_gathers && with_gathers.angle_gathers);
  const ImageDatasets angles = parse_image_datasets("image,angle_gathers");
  EXPECT_EQ(angles.names(), (std::vector<std::string>{"image", "angle_gathers"}));
}

TEST(ImageDatasets, RefusesUnknownRepeatedAndEmptyNames) {
  auto message = [](const std::string& list) {
    try {
      parse_image_datasets(list);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message("imgae"), HasSubstr("(did you mean image?)"));
  EXPECT_THAT(message("image,image"), HasSubstr("image is named twice"));
  EXPECT_THAT(message(""), HasSubstr("is no dataset of a migration"));
  EXPECT_THAT(message("image,"), HasSubstr("is no dataset of a migration"));
  EXPECT_THAT(message("image,all"), HasSubstr("--datasets image,all"));
}

class MigrateOutputs : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(::testing::TempDir()) / ("rtm_migrate_outputs_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string err;
    ASSERT_EQ(run("generate-model --type layered --shape 24,20,24 --spacing 10 -o model.h5", err), 0)
        << err;
    ASSERT_EQ(run("model -m model.h5 --shots 2 --record-time 0.25 --boundary-width 8 --backend cpu "
                  "-o shots.h5",
                  err),
              0)
        << err;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // rtm `args` (no word needs quoting) in the suite's directory, one OpenMP thread: the exit
  // status; stdout and stderr together in `out`.
  static int run(const std::string& args, std::string& out) {
    const std::string command = "cd '" + dir_.string() + "' && OMP_NUM_THREADS=1 '" RTM_EXECUTABLE
                                "' " + args + " >out.txt 2>&1";
    const int raw = std::system(command.c_str());
    std::ifstream in(dir_ / "out.txt");
    std::stringstream text;
    text << in.rdbuf();
    out = text.str();
    return (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  }
  static std::string migrate(const std::string& extra, const std::string& output) {
    return "migrate -s shots.h5 -m model.h5 --smooth 40 --boundary-width 8 --backend cpu "
           "--progress 0 " + extra + " -o " + output;
  }
  static bool has(const std::string& file, const std::string& dataset) {
    return hdf5_has_member((dir_ / file).string(), dataset);
  }
  static fs::path dir_;
};
fs::path MigrateOutputs::dir_;

TEST_F(MigrateOutputs, TheDefaultIsTheImageAlone) {
  std::string out;
  ASSERT_EQ(run(migrate("", "default.h5"), out), 0) << out;
  EXPECT_TRUE(has("default.h5", "image"));
  EXPECT_FALSE(has("default.h5", "illumination"));
  EXPECT_FALSE(has("default.h5", "image_raw"));
  EXPECT_THAT(out, HasSubstr("wrote default.h5: /image 24x20x24"));
  // The image alone is finished in the sums' memory (MigrationParams::keep_sums): the same bits
  // as when the sums are kept and written beside it.
  ASSERT_EQ(run(migrate("--datasets all", "with_sums.h5"), out), 0) << out;
  VelocityModel alone, beside;
  const std::vector<float> image = read_volume((dir_ / "default.h5").string(), "image", alone);
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(image, read_volume((dir_ / "with_sums.h5").string(), "image", beside));
}

TEST_F(MigrateOutputs, DatasetsWritesWhatItNamesAndItsFigures) {
  std::string out;
  const std::string png_dir = figures_supported() ? "--png-dir figures " : "";
  ASSERT_EQ(run(migrate("--datasets illumination,image_raw " + png_dir, "sums.h5"), out), 0) << out;
  EXPECT_FALSE(has("sums.h5", "image"));
  EXPECT_TRUE(has("sums.h5", "illumination"));
  EXPECT_TRUE(has("sums.h5", "image_raw"));
  EXPECT_THAT(out, HasSubstr("wrote sums.h5: /illumination, /image_raw 24x20x24"));
  if (figures_supported()) { // the figures of what was written: no image.png
    EXPECT_TRUE(fs::exists(dir_ / "figures" / "illumination.png"));
    EXPECT_FALSE(fs::exists(dir_ / "figures" / "image.png"));
  }
  // All three, as before the option existed.
  ASSERT_EQ(run(migrate("--datasets all", "all.h5"), out), 0) << out;
  for (const char* name : {"image", "illumination", "image_raw"}) EXPECT_TRUE(has("all.h5", name)) << name;
}

TEST_F(MigrateOutputs, BadListsAreRefusedBeforeAnyWork) {
  std::string out;
  EXPECT_EQ(run(migrate("--datasets image,imagee_raw", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("'imagee_raw' is no dataset of a migration (did you mean image_raw?)"));
  EXPECT_THAT(out, Not(HasSubstr("rtm: migrating")));
  EXPECT_FALSE(fs::exists(dir_ / "refused.h5"));
  EXPECT_EQ(run(migrate("--datasets image_raw --png-dir figures2", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("writes neither; add image or illumination"));
  EXPECT_FALSE(fs::exists(dir_ / "refused.h5"));
}

// --offset-lags: the gathers of both lag axes with their axes' attributes; the zero lag of either
// is the raw image at the gathers' positions (docs/rtm.md, section 5d).
TEST_F(MigrateOutputs, OffsetLagsWriteGathersWithTheirAxes) {
  std::string out;
  ASSERT_EQ(run(migrate("--offset-lags 3 --offset-lag-step 2 --gather-stride 6,8 --gather-angles 7 "
                        "--gather-max-angle 30 --datasets image_raw,offset_gathers",
                        "gathers.h5"),
                out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("wrote gathers.h5: /image_raw, /offset_gathers 24x20x24"));
  VelocityModel grid;
  const std::vector<float> raw = read_volume((dir_ / "gathers.h5").string(), "image_raw", grid);
  EXPECT_FALSE(has("gathers.h5", "angle_gathers_x"));
  for (const char* name : {"offset_gathers_x", "offset_gathers_y"}) {
    ArrayInfo info;
    const std::vector<float> g = read_array((dir_ / "gathers.h5").string(), name, info);
    EXPECT_EQ(info.dims, (std::vector<long long>{3, 4, 24, 7})) << name; // y 0,8,16; x 0,6,12,18
    EXPECT_EQ(info.axes, (std::vector<std::string>{"y", "x", "z", "h"}));
    EXPECT_EQ(info.axis_units, (std::vector<std::string>{"m", "m", "m", "m"}));
    EXPECT_EQ(info.spacing, (std::vector<double>{80, 60, 10, 20}));
    EXPECT_EQ(info.origin[3], -60);
    for (int gy = 0; gy < 3; ++gy)
      for (int gx = 0; gx < 4; ++gx)
        for (int z = 0; z < 24; ++z)
          ASSERT_EQ(g[((size_t(gy) * 4 + gx) * 24 + z) * 7 + 3],
                    raw[(size_t(z) * 20 + gy * 8) * 24 + gx * 6])
              << name << " at gather (" << gy << ", " << gx << "), z " << z;
  }
  ASSERT_EQ(run(migrate("--offset-lags 2 --gather-stride 12 --gather-angles 5", "angles.h5"), out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("/image, /offset_gathers, /angle_gathers"));
  ArrayInfo info;
  read_array((dir_ / "angles.h5").string(), "angle_gathers_x", info);
  EXPECT_EQ(info.dims, (std::vector<long long>{2, 2, 24, 5}));
  EXPECT_EQ(info.axes.back(), "angle");
  EXPECT_EQ(info.axis_units.back(), "degrees");
  EXPECT_EQ(info.origin.back(), -60);
  EXPECT_EQ(info.spacing.back(), 30);
}

TEST_F(MigrateOutputs, GatherOptionsThatCannotWorkAreRefusedBeforeAnyWork) {
  std::string out;
  EXPECT_EQ(run(migrate("--datasets image,offset_gathers", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("need --offset-lags"));
  EXPECT_EQ(run(migrate("--offset-lags 2 --datasets image", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("does not write; add offset_gathers or angle_gathers"));
  EXPECT_EQ(run(migrate("--offset-lags 2 --resume", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("cannot be used with --resume"));
  EXPECT_EQ(run(migrate("--offset-lags 2 --gather-stride 4,x", "refused.h5"), out), 2);
  EXPECT_THAT(out, HasSubstr("--gather-stride: expected SX or SX,SY"));
  EXPECT_THAT(out, Not(HasSubstr("rtm: migrating")));
  EXPECT_FALSE(fs::exists(dir_ / "refused.h5"));
}

TEST_F(MigrateOutputs, ProfileTablesTheWholeRunWithTimesAndBytes) {
  std::string out;
  ASSERT_EQ(run(migrate("--profile --datasets all", "profiled.h5"), out), 0) << out;
  EXPECT_THAT(out, HasSubstr("rtm: profile of the shot loop")); // the loop's own table stays
  EXPECT_THAT(out, HasSubstr("rtm: profile of the whole run: "));
  for (const char* phase : {"checks", "read", "set-up", "fields", "loop", "finish", "release", "output",
                            "other", "write probe"})
    EXPECT_THAT(out, ::testing::ContainsRegex(std::string("rtm: profile:   ") + phase +
                                              " +[0-9]+\\.[0-9]{3} s +[0-9.]+%"))
        << phase;
  // The output's bytes are the file's: three volumes of 24x20x24 float32 and more.
  const auto written = fs::file_size(dir_ / "profiled.h5");
  EXPECT_GT(written, 3u * 24 * 20 * 24 * 4);
  EXPECT_THAT(out, HasSubstr(" output_bytes=" + std::to_string(written) + " "));
  EXPECT_THAT(out, ::testing::ContainsRegex("PERFORMANCE rtm-migrate-run wall_s=[0-9.]+ checks_s=[0-9.]+ read_s="));
  // The plain write beside it: as many bytes, a rate, and nothing left behind.
  EXPECT_THAT(out, HasSubstr("a plain write of the output's bytes beside it: "));
  EXPECT_THAT(out, HasSubstr(" write_probe_bytes=" + std::to_string(written) + " "));
  EXPECT_FALSE(fs::exists(dir_ / "profiled.h5.write-rate-probe"));
  // Without --profile, no table.
  ASSERT_EQ(run(migrate("", "plain.h5"), out), 0) << out;
  EXPECT_THAT(out, Not(HasSubstr("rtm: profile")));
}

} // namespace
} // namespace rtm
