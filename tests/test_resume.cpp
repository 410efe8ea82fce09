// `rtm migrate` interrupted for real and resumed (docs/robustness.md, "Resuming a migration"): the
// executable (RTM_EXECUTABLE) is started on a tiny CPU problem, killed with SIGKILL - or stopped
// with SIGTERM / SIGINT - once its first checkpoint exists, resumed with --resume, and its image
// compared bit for bit with an uninterrupted run's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/checkpoint_file.h"
#include "io/volume_file.h"

using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

struct Started {
  pid_t pid = -1;
  std::string log; // stdout and stderr of the process
};

// Starts `rtm args...` in `dir` with one OpenMP thread, its output into a log file.
Started start_rtm(const fs::path& dir, const std::vector<std::string>& args, const std::string& log_name) {
  Started started;
  started.log = (dir / log_name).string();
  std::vector<std::string> argv_strings = {RTM_EXECUTABLE};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  started.pid = ::fork();
  if (started.pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    const int fd = ::open(started.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return started;
}

// Waits for the process; returns its exit status, or 128 + signal when a signal ended it.
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int run_rtm(const fs::path& dir, const std::vector<std::string>& args, const std::string& log) {
  return wait_for(start_rtm(dir, args, log).pid);
}

class ResumeTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    ::setenv("OMP_NUM_THREADS", "1", 1);
    dir_ = fs::temp_directory_path() / ("rtm_test_resume_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(run_rtm(dir_, {"generate-model", "--type", "layered", "--shape", "24,20,24",
                             "--spacing", "10", "-o", "model.h5"}, "generate.log"), 0);
    ASSERT_EQ(run_rtm(dir_, {"model", "-m", "model.h5", "-o", "shots.h5", "--shots", "12",
                             "--record-time", "0.25", "--boundary-width", "8", "--backend", "cpu"},
                      "model.log"), 0)
        << read_text((dir_ / "model.log").string());
    ASSERT_EQ(run_rtm(dir_, migrate_args("whole.h5"), "whole.log"), 0)
        << read_text((dir_ / "whole.log").string());
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::vector<std::string> migrate_args(const std::string& output) {
    return {"migrate", "-s", "shots.h5", "-m", "model.h5", "--smooth", "40", "--boundary-width",
            "8", "--backend", "cpu", "-o", output};
  }

  // Starts a migration to `output` and sends `signal` as soon as its first checkpoint exists.
  // Returns its exit status.
  static int interrupt_after_first_checkpoint(const std::string& output, int signal) {
    const Started run = start_rtm(dir_, migrate_args(output), output + ".log");
    const std::string checkpoint = rtm::checkpoint_path((dir_ / output).string(), 0);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(checkpoint) && std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (::waitpid(run.pid, &status, WNOHANG) == run.pid) {
        ADD_FAILURE() << "the run ended before its first checkpoint: " << read_text(run.log);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::kill(run.pid, signal);
    return wait_for(run.pid);
  }

  static void expect_same_volumes(const std::string& a, const std::string& b) {
    for (const char* name : {"image_raw", "illumination", "image"}) {
      rtm::VelocityModel grid_a, grid_b;
      const std::vector<float> va = rtm::read_volume((dir_ / a).string(), name, grid_a);
      const std::vector<float> vb = rtm::read_volume((dir_ / b).string(), name, grid_b);
      EXPECT_EQ(va, vb) << "/" << name << " of " << a << " and " << b << " differ";
    }
  }

  static fs::path dir_;
};
fs::path ResumeTest::dir_;

} // namespace

TEST_F(ResumeTest, KilledRunResumesToTheUninterruptedImage) {
  ASSERT_EQ(interrupt_after_first_checkpoint("killed.h5", SIGKILL), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(dir_ / "killed.h5")) << "the killed run finished before the kill";
  ASSERT_TRUE(fs::exists(rtm::checkpoint_path((dir_ / "killed.h5").string(), 0)));

  std::vector<std::string> resume = migrate_args("killed.h5");
  resume.push_back("--resume");
  ASSERT_EQ(run_rtm(dir_, resume, "killed-resume.log"), 0) << read_text((dir_ / "killed-resume.log").string());
  EXPECT_THAT(read_text((dir_ / "killed-resume.log").string()), HasSubstr("already migrated"));
  expect_same_volumes("whole.h5", "killed.h5");
  EXPECT_TRUE(rtm::find_checkpoints((dir_ / "killed.h5").string()).empty())
      << "the checkpoint outlived the finished image";
}

TEST_F(ResumeTest, SigtermAndSigintStopCleanlyWithACheckpoint) {
  for (const auto& [signal, output] : {std::pair{SIGTERM, "term.h5"}, std::pair{SIGINT, "int.h5"}}) {
    SCOPED_TRACE(output);
    ASSERT_EQ(interrupt_after_first_checkpoint(output, signal), 128 + signal)
        << read_text((dir_ / (std::string(output) + ".log")).string());
    EXPECT_FALSE(fs::exists(dir_ / output));
    EXPECT_THAT(read_text((dir_ / (std::string(output) + ".log")).string()),
                ::testing::AllOf(HasSubstr(signal == SIGTERM ? "SIGTERM" : "SIGINT"),
                                 HasSubstr("--resume")));
    std::vector<std::string> resume = migrate_args(output);
    resume.push_back("--resume");
    ASSERT_EQ(run_rtm(dir_, resume, "resume.log"), 0) << read_text((dir_ / "resume.log").string());
    expect_same_volumes("whole.h5", output);
  }
}
