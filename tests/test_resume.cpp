// `rtm migrate` and `rtm model` interrupted for real and resumed (docs/robustness.md, "Resuming a
// migration", "Resuming a modeling run"): the executable (RTM_EXECUTABLE) is started on a tiny CPU
// problem, killed with SIGKILL - or stopped with SIGTERM / SIGINT, also under `| tee` - once its
// first checkpoint exists, resumed with --resume, and its output compared bit for bit with an
// uninterrupted run's. Also the progress lines and the acknowledgement of a stop signal.
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
#include "io/shot_checkpoint.h"
#include "io/shot_file.h"
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
    ASSERT_EQ(run_rtm(dir_, model_args("shots.h5"), "model.log"), 0)
        << read_text((dir_ / "model.log").string());
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // The uninterrupted migration the interrupted ones are compared with, made once per process
  // (ctest runs each test in a process of its own; the modeling tests need none).
  void SetUp() override {
    if (!fs::exists(dir_ / "whole.h5")) {
      std::vector<std::string> whole = migrate_args("whole.h5");
      for (const char* option : {"--progress", "0.01"}) whole.push_back(option); // updates in the log
      ASSERT_EQ(run_rtm(dir_, whole, "whole.log"), 0) << read_text((dir_ / "whole.log").string());
    }
  }

  // Four shots are enough: the signal lands in the second, the resumed run does the other two. More
  // would only slow every test here (the sanitized suite runs each of them).
  static std::vector<std::string> model_args(const std::string& output) {
    return {"model", "-m", "model.h5", "-o", output, "--shots", "4", "--record-time", "0.25",
            "--boundary-width", "8", "--backend", "cpu"};
  }

  static std::vector<std::string> migrate_args(const std::string& output) {
    return {"migrate", "-s", "shots.h5", "-m", "model.h5", "--smooth", "40", "--boundary-width",
            "8", "--backend", "cpu", "--datasets", "all", "-o", output};
  }

  // Starts a migration to `output` and sends `signal` as soon as its first checkpoint exists.
  // Returns its exit status.
  static int interrupt_after_first_checkpoint(const std::string& output, int signal) {
    const Started run = start_rtm(dir_, migrate_args(output), output + ".log");
    if (!wait_for_file(run.pid, rtm::checkpoint_path((dir_ / output).string(), 0), run.log))
      return -1;
    ::kill(run.pid, signal);
    return wait_for(run.pid);
  }

  // The same for `rtm model`: the signal goes as soon as its first shot is saved.
  static int interrupt_model_after_first_shot(const std::string& output, int signal) {
    const Started run = start_rtm(dir_, model_args(output), output + ".log");
    const fs::path first = fs::path(rtm::shot_checkpoint_dir((dir_ / output).string())) / "shot-000000.h5";
    if (!wait_for_file(run.pid, first.string(), run.log)) return -1;
    ::kill(run.pid, signal);
    return wait_for(run.pid);
  }

  // Waits until `path` exists; false (a test failure) when the process ended first.
  static bool wait_for_file(pid_t pid, const std::string& path, const std::string& log) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(path) && std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ADD_FAILURE() << "the run ended before " << path << " existed: " << read_text(log);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  static void expect_same_shots(const std::string& a, const std::string& b) {
    const rtm::ShotFile sa = rtm::read_shot_file((dir_ / a).string());
    const rtm::ShotFile sb = rtm::read_shot_file((dir_ / b).string());
    ASSERT_EQ(sa.shots.size(), sb.shots.size());
    EXPECT_EQ(sa.nt, sb.nt);
    EXPECT_EQ(sa.dt, sb.dt);
    EXPECT_EQ(sa.wavelet, sb.wavelet);
    EXPECT_EQ(sa.receivers, sb.receivers);
    for (size_t k = 0; k < sa.shots.size(); ++k) {
      EXPECT_EQ(sa.shots[k].id, sb.shots[k].id);
      EXPECT_EQ(sa.shots[k].source, sb.shots[k].source);
      EXPECT_EQ(sa.shots[k].data, sb.shots[k].data) << "shot " << k << " of " << a << " and " << b;
    }
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

// The modeling tests need the model and the uninterrupted shots only.
class ModelResumeTest : public ResumeTest {
protected:
  void SetUp() override {}
};

} // namespace

TEST_F(ResumeTest, KilledRunResumesToTheUninterruptedImage) {
  // The uninterrupted run's progress inside the shot went to its log as plain lines.
  const std::string whole_log = read_text((dir_ / "whole.log").string());
  EXPECT_THAT(whole_log, ::testing::ContainsRegex("rtm: shot [0-9]+/4, step [0-9]+/378, [0-9.]+ "
                                                  "Gcells/s, ~[0-9.]+ s left \\(run: ~[0-9.]+ s\\)\n"));
  EXPECT_THAT(whole_log, ::testing::Not(HasSubstr("\r"))); // not a terminal: no in-place line

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
    // Acknowledged at once, with the shot, then the stop itself and how to resume.
    EXPECT_THAT(read_text((dir_ / (std::string(output) + ".log")).string()),
                ::testing::AllOf(HasSubstr(signal == SIGTERM
                                               ? "rtm: SIGTERM: finishing shot "
                                               : "rtm: Ctrl-C (SIGINT): finishing shot "),
                                 HasSubstr(" of 4, then a checkpoint; "),
                                 HasSubstr(signal == SIGTERM ? "SIGTERM again" : "Ctrl-C again"),
                                 // --checkpoint-every auto: the interval is the run's choice
                                 HasSubstr("to stop now and lose the shots since the last checkpoint\n"),
                                 HasSubstr(signal == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT"),
                                 HasSubstr("--resume")));
    std::vector<std::string> resume = migrate_args(output);
    resume.push_back("--resume");
    ASSERT_EQ(run_rtm(dir_, resume, "resume.log"), 0) << read_text((dir_ / "resume.log").string());
    expect_same_volumes("whole.h5", output);
  }
}

// Ctrl-C on `rtm migrate ... 2>&1 | tee log`: the terminal sends SIGINT to both; tee dies, the run's
// later messages meet a closed pipe. The run must still finish its shot, checkpoint and exit 130.
TEST_F(ResumeTest, CtrlCUnderTeeStillCheckpointsAndExitsWithItsOwnStatus) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::vector<std::string> argv_strings = {RTM_EXECUTABLE};
  for (const std::string& a : migrate_args("tee.h5")) argv_strings.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string tee_log = (dir_ / "tee.log").string();

  const pid_t rtm = ::fork();
  if (rtm == 0) {
    ::setpgid(0, 0); // a process group of its own, like a shell's pipeline
    if (::chdir(dir_.c_str()) != 0) ::_exit(127);
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(rtm, rtm);
  const pid_t tee = ::fork();
  if (tee == 0) {
    ::setpgid(0, rtm);
    ::dup2(pipe_fds[0], 0);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::execlp("tee", "tee", tee_log.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(tee, rtm);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);

  ASSERT_TRUE(wait_for_file(rtm, rtm::checkpoint_path((dir_ / "tee.h5").string(), 0), tee_log));
  ASSERT_EQ(::kill(-rtm, SIGINT), 0); // Ctrl-C: the whole foreground group
  EXPECT_EQ(wait_for(tee), 128 + SIGINT) << "tee was expected to die of the Ctrl-C";
  EXPECT_EQ(wait_for(rtm), 128 + SIGINT) << read_text(tee_log);
  EXPECT_FALSE(fs::exists(dir_ / "tee.h5"));
  ASSERT_FALSE(rtm::find_checkpoints((dir_ / "tee.h5").string()).empty());

  std::vector<std::string> resume = migrate_args("tee.h5");
  resume.push_back("--resume");
  ASSERT_EQ(run_rtm(dir_, resume, "tee-resume.log"), 0) << read_text((dir_ / "tee-resume.log").string());
  expect_same_volumes("whole.h5", "tee.h5");
}

TEST_F(ModelResumeTest, KilledModelingRunKeepsItsShotsAndResumesToTheSameFile) {
  ASSERT_EQ(interrupt_model_after_first_shot("killed-shots.h5", SIGKILL), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(dir_ / "killed-shots.h5")) << "no output before every shot is done";
  const std::string checkpoint = rtm::shot_checkpoint_dir((dir_ / "killed-shots.h5").string());
  ASSERT_TRUE(fs::exists(checkpoint));

  // Without --resume the checkpoint is not thrown away; with other options it is refused.
  EXPECT_EQ(run_rtm(dir_, model_args("killed-shots.h5"), "no-resume.log"), 2);
  EXPECT_THAT(read_text((dir_ / "no-resume.log").string()), HasSubstr("--resume"));
  std::vector<std::string> changed = model_args("killed-shots.h5");
  for (const char* option : {"--f0", "12", "--resume"}) changed.push_back(option);
  EXPECT_EQ(run_rtm(dir_, changed, "changed.log"), 2);
  EXPECT_THAT(read_text((dir_ / "changed.log").string()),
              ::testing::AllOf(HasSubstr("another modeling run"), HasSubstr("f0")));

  std::vector<std::string> resume = model_args("killed-shots.h5");
  resume.push_back("--resume");
  ASSERT_EQ(run_rtm(dir_, resume, "model-resume.log"), 0)
      << read_text((dir_ / "model-resume.log").string());
  EXPECT_THAT(read_text((dir_ / "model-resume.log").string()), HasSubstr("already modeled"));
  expect_same_shots("shots.h5", "killed-shots.h5");
  EXPECT_FALSE(fs::exists(checkpoint)) << "the checkpoint outlived the finished output";
}

// A second Ctrl-C stops at once, and says so: what is lost (the shot in progress) and what is not
// (the last checkpoint; --resume continues). It used to end the process without a word.
TEST_F(ModelResumeTest, ASecondCtrlCStopsAtOnceAndSaysSo) {
  // A long shot (4 s of record), so that both signals land in the first one.
  const Started run = start_rtm(dir_, {"model", "-m", "model.h5", "-o", "twice.h5", "--shots", "4",
                                       "--record-time", "4", "--boundary-width", "8", "--backend",
                                       "cpu", "--progress", "0"},
                                 "twice.log");
  auto wait_for_text = [&](const std::string& text) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (read_text(run.log).find(text) == std::string::npos) {
      int status = 0;
      if (std::chrono::steady_clock::now() > give_up || ::waitpid(run.pid, &status, WNOHANG) == run.pid)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  };
  ASSERT_TRUE(wait_for_text("rtm: modeling ")) << read_text(run.log); // the handlers are in place
  ::kill(run.pid, SIGINT);
  ASSERT_TRUE(wait_for_text("Ctrl-C again to stop now")) << read_text(run.log);
  ::kill(run.pid, SIGINT);
  EXPECT_EQ(wait_for(run.pid), 128 + SIGINT);
  const std::string log = read_text(run.log);
  EXPECT_THAT(log, ::testing::AllOf(HasSubstr("rtm: stopped at once by the second signal"),
                                    HasSubstr("are lost"), HasSubstr("--resume")));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("modeled shot 1/4"))) << "the first signal's stop won the race";
  EXPECT_FALSE(fs::exists(dir_ / "twice.h5"));
}

TEST_F(ModelResumeTest, ModelingStoppedBySigtermSavesItsShotsAndResumes) {
  ASSERT_EQ(interrupt_model_after_first_shot("term-shots.h5", SIGTERM), 128 + SIGTERM)
      << read_text((dir_ / "term-shots.h5.log").string());
  EXPECT_FALSE(fs::exists(dir_ / "term-shots.h5"));
  EXPECT_THAT(read_text((dir_ / "term-shots.h5.log").string()),
              ::testing::AllOf(HasSubstr("rtm: SIGTERM: finishing shot "),
                               HasSubstr("stopped by SIGTERM"), HasSubstr("--resume")));
  std::vector<std::string> resume = model_args("term-shots.h5");
  resume.push_back("--resume");
  ASSERT_EQ(run_rtm(dir_, resume, "term-model-resume.log"), 0)
      << read_text((dir_ / "term-model-resume.log").string());
  expect_same_shots("shots.h5", "term-shots.h5");
}
