// `rtm`: the reverse-time-migration mini-app. Each subcommand lives in app/cmd_<name>.cpp.
//
// Exit status: 0 success, 1 a failure while running (e.g. a CUDA error), 2 bad input or options.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "io/errors.h"

int main(int argc, char** argv) {
  CLI::App rtm{"rtm: acoustic reverse time migration on GPUs and CPUs.\n"
               "Bare `rtm` runs the built-in demo."};
  rtm.set_config("--config", "", "Read options from a config file (TOML or INI; CLI11 format)");
  rtm.set_version_flag("--version", "rtm 0.1.0");
  rtm.require_subcommand(0, 1);

  // Subcommands, in the order `rtm --help` lists them.
  rtm::app::register_info(rtm);
  rtm::app::register_generate_model(rtm);
  rtm::app::register_model(rtm);
  rtm::app::register_migrate(rtm);
  rtm::app::register_bench(rtm);
  const std::function<void()> demo = rtm::app::register_demo(rtm);
  rtm::app::register_micro(rtm);

  try {
    rtm.parse(argc, argv);
    if (rtm.get_subcommands().empty()) demo(); // bare `rtm`: the demo, defaults
  } catch (const CLI::ParseError& e) {
    return rtm.exit(e);
  } catch (const rtm::InputError& e) {
    std::fprintf(stderr, "rtm: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtm: failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
