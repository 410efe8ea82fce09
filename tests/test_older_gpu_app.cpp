// What rtm does on a GPU older than Hopper, shown on whatever GPU the test machine has:
// RTM_FAKE_COMPUTE_CAPABILITY=8.0 lowers the capability every choice reads (kernels/cuda/util/device_info.h),
// so `rtm info` says so, `auto` and `rtm bench --variant all` take only the kernels that run on
// 8.0, and a kernel that needs 9.0 (tma_ring, half_v2dt2: Hopper's bulk tensor copy) named by the
// user is refused by name before any work, exit 2, no output left behind. Skipped without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/gpu_skip.h"

namespace rtm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int status = -1; // the exit status, or -1 when rtm did not exit normally
  std::string out, err;
};

class OlderGpu : public ::testing::Test {
protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    dir_ = fs::path(::testing::TempDir()) / ("rtm_older_gpu_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read_text(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Runs `rtm args` (no word of args needs quoting) in the test's directory with the capability
  // faked as `capability`.
  Outcome run(const std::string& capability, const std::string& args) const {
    const std::string command = "cd '" + dir_.string() + "' && RTM_FAKE_COMPUTE_CAPABILITY=" +
                                capability + " '" RTM_EXECUTABLE "' " + args +
                                " >stdout.txt 2>stderr.txt";
    const int raw = std::system(command.c_str());
    Outcome o;
    o.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
    o.out = read_text(dir_ / "stdout.txt");
    o.err = read_text(dir_ / "stderr.txt");
    return o;
  }

  fs::path dir_;
};

TEST_F(OlderGpu, InfoSaysTheCapabilityIsFaked) {
  const Outcome o = run("8.0", "info");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("compute capability 8.0 (RTM_FAKE_COMPUTE_CAPABILITY; the GPU's own is"));
}

TEST_F(OlderGpu, ACapabilityAboveTheGpusOwnIsRefused) {
  const Outcome o = run("9.9", "info");
  EXPECT_EQ(o.status, 2) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("RTM_FAKE_COMPUTE_CAPABILITY=9.9 is above this GPU's"));
}

TEST_F(OlderGpu, BenchLeavesOutTheHopperKernelsAndRefusesThemByName) {
  const Outcome all = run("8.0", "bench --variant all --grid 64,64,64 --steps 2 --repeats 1 "
                                 "--workload random --csv");
  ASSERT_EQ(all.status, 0) << all.err;
  for (const char* hopper : {"tma_ring", "half_v2dt2", "compressible", "l2_persist"}) {
    EXPECT_THAT(all.err, HasSubstr(std::string(hopper) + " left out: ")) << hopper;
    EXPECT_THAT(all.out, Not(HasSubstr("," + std::string(hopper) + ","))) << hopper;
  }
  EXPECT_THAT(all.err, HasSubstr("tma_ring needs compute capability 9.0"));
  for (const char* older : {"naive_32x32", "regqueue_vec4", "fp16_storage", "bfp16"})
    EXPECT_THAT(all.out, HasSubstr("random," + std::string(older) + ",")) << older;

  const Outcome named = run("8.0", "bench --variant tma_ring --grid 64,64,64 --steps 2 --repeats 1");
  EXPECT_EQ(named.status, 2) << named.out << named.err;
  EXPECT_THAT(named.err, HasSubstr("--variant tma_ring: tma_ring needs compute capability 9.0"));
  EXPECT_THAT(named.err, HasSubstr("the kernels that run there: naive_32x32"));
}

TEST_F(OlderGpu, ModelingRefusesAHopperKernelBeforeAnyWorkAndAutoChoosesAnother) {
  ASSERT_EQ(run("8.0", "generate-model --type layered --shape 48,40,36 --spacing 10 -o model.h5").status, 0);
  const Outcome refused = run("8.0", "model -m model.h5 --shots 1 --record-time 0.1 "
                                     "--variant half_v2dt2 -o refused.h5");
  EXPECT_EQ(refused.status, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("--variant half_v2dt2: half_v2dt2 needs compute capability 9.0"));
  EXPECT_FALSE(fs::exists(path("refused.h5")));

  const Outcome automatic = run("8.0", "model -m model.h5 --shots 1 --record-time 0.1 "
                                       "--variant auto -o auto.h5");
  ASSERT_EQ(automatic.status, 0) << automatic.err;
  EXPECT_THAT(automatic.err, HasSubstr("--variant auto chose"));
  EXPECT_THAT(automatic.err, Not(HasSubstr("tma_ring"))); // not even timed
  EXPECT_TRUE(fs::exists(path("auto.h5")));

  // The GPU's own capability: the same name runs.
  const Outcome own = run("9.0", "model -m model.h5 --shots 1 --record-time 0.1 "
                                 "--variant half_v2dt2 -o own.h5");
  if (own.status == 2 && own.err.find("above this GPU's") != std::string::npos)
    GTEST_SKIP() << "the GPU is older than 9.0: " << own.err;
  EXPECT_EQ(own.status, 0) << own.err;
}

} // namespace
} // namespace rtm
