// The `rtm` command line as one object, built in one place: the executable (app/main.cpp) runs it,
// the config-file fuzzer (tests/fuzz/) parses with it without running any subcommand.
#pragma once

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

namespace rtm::app {

struct Cli {
  std::unique_ptr<CLI::App> app;  // CLI::App can be neither copied nor moved
  std::function<void()> demo;     // what bare `rtm` runs
  CLI::Option* config = nullptr;  // --config, for naming the file in messages
};

// Every subcommand registered, the strict config-file reader installed (app/config_format.h),
// unknown keys in a config file refused.
Cli build_cli();

// Parses argv, runs the chosen subcommand (or the demo) and returns the exit status:
//   0  success, and --help / --version;
//   1  a failure while running (a CUDA error, a numerical instability, a full disk);
//   2  bad input or options: an unknown option or value, a config file that cannot be read or has a
//      syntax error (its name and line are given), a bad input file. The message goes to stderr
//      and names the option, file, dataset or line.
//   128 + signal: a run stopped by SIGINT (130) or SIGTERM (143) after saving a checkpoint.
// With several MPI ranks, an error on any rank ends every rank through MPI_Abort with its status.
int run_cli(Cli& cli, int argc, char** argv);

} // namespace rtm::app
