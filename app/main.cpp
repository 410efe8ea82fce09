// `rtm`: the reverse-time-migration mini-app. Each subcommand lives in app/cmd_<name>.cpp.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "io/errors.h"

int main(int argc, char** argv) {
  CLI::App rtm{"rtm: acoustic reverse time migration on GPUs and CPUs"};
  rtm.set_config("--config", "", "Read options from a config file (TOML or INI; CLI11 format)");
  rtm.set_version_flag("--version", "rtm 0.1.0");
  rtm.require_subcommand(0, 1);

  CLI::App* demo = nullptr;
  // Subcommands, in the order `rtm --help` lists them.
  rtm::app::register_micro(rtm);
  (void)demo;

  try {
    rtm.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rtm.exit(e);
  }
  return 0;
}
