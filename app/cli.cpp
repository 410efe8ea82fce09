#include "app/cli.h"

#include <cstdio>
#include <exception>
#include <string>

#include "app/commands.h"
#include "app/config_format.h"
#include "io/errors.h"

namespace rtm::app {
namespace {

// The config file named on the command line, or "" when none was given.
std::string config_file_name(const Cli& cli) {
  if (!cli.config || cli.config->empty()) return "";
  return cli.config->results().front();
}

int bad_input(const std::string& message) {
  std::fprintf(stderr, "rtm: error: %s\n", message.c_str());
  return 2;
}

} // namespace

Cli build_cli() {
  Cli cli;
  cli.app = std::make_unique<CLI::App>("rtm: acoustic reverse time migration on GPUs and CPUs.\n"
                                       "Bare `rtm` runs the built-in demo.");
  CLI::App& rtm = *cli.app;
  // Before the subcommands are added: they copy these settings from their parent.
  rtm.config_formatter(std::make_shared<StrictTomlConfig>(rtm));
  rtm.allow_config_extras(CLI::config_extras_mode::error);
  cli.config = rtm.set_config("--config", "",
                              "Read options from a config file (TOML subset: [subcommand] sections "
                              "of name = value lines; see inputs/)");
  rtm.set_version_flag("--version", "rtm 0.1.0");
  rtm.require_subcommand(0, 1);

  // Subcommands, in the order `rtm --help` lists them.
  register_info(rtm);
  register_generate_model(rtm);
  register_model(rtm);
  register_migrate(rtm);
  register_bench(rtm);
  cli.demo = register_demo(rtm);
  register_micro(rtm);
  return cli;
}

int run_cli(Cli& cli, int argc, char** argv) {
  CLI::App& rtm = *cli.app;
  try {
    rtm.parse(argc, argv);
    if (rtm.get_subcommands().empty()) cli.demo(); // bare `rtm`: the demo, defaults
  } catch (const ConfigSyntaxError& e) {
    return bad_input("config file " + config_file_name(cli) + ": " + e.what());
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return rtm.exit(e);
    std::string message = e.what();
    if (dynamic_cast<const CLI::ConfigError*>(&e))
      message = "config file " + config_file_name(cli) + ": " + message;
    bad_input(message);
    std::fprintf(stderr, "Run `rtm --help` or `rtm <command> --help` for the options.\n");
    return 2;
  } catch (const InputError& e) {
    return bad_input(e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtm: failed: %s\n", e.what());
    return 1;
  }
  return 0;
}

} // namespace rtm::app
