#include "app/cli.h"

#include <cstdio>
#include <exception>
#include <string>

#include "app/commands.h"
#include "app/config_format.h"
#include "io/errors.h"
#include "io/provenance.h"
#include "solvers/mpi_context.h"

namespace rtm::app {
namespace {

// The config file named on the command line, or "" when none was given.
std::string config_file_name(const Cli& cli) {
  if (!cli.config || cli.config->empty()) return "";
  return cli.config->results().front();
}

// "rtm: error: ..." or, with several MPI ranks, "rtm: error (rank 3): ...": an error may be
// raised on one rank only.
void print_error(const char* kind, const std::string& message) {
  if (world_size() > 1)
    std::fprintf(stderr, "rtm: %s (rank %d): %s\n", kind, world_rank(), message.c_str());
  else
    std::fprintf(stderr, "rtm: %s: %s\n", kind, message.c_str());
}

// With several MPI ranks a failing rank ends every rank (the others would wait for it forever).
int fail(int code) {
  abort_all_ranks_if_parallel(code);
  return code;
}

int bad_input(const std::string& message) {
  print_error("error", message);
  return fail(2);
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
  rtm.set_version_flag("--version", rtm_version());
  rtm.require_subcommand(0, 1);

  // Subcommands, in the order `rtm --help` lists them.
  register_info(rtm);
  register_generate_model(rtm);
  register_model(rtm);
  register_migrate(rtm);
  register_import(rtm);
  register_export(rtm);
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
    print_error("error", message);
    std::fprintf(stderr, "Run `rtm --help` or `rtm <command> --help` for the options.\n");
    return fail(2);
  } catch (const InputError& e) {
    return bad_input(e.what());
  } catch (const RunStopped& e) {
    // Every rank stopped together after saving its work: no abort, the status says which signal.
    if (world_rank() == 0) std::fprintf(stderr, "rtm: %s\n", e.what());
    return 128 + e.signal;
  } catch (const std::exception& e) {
    print_error("failed", e.what());
    return fail(1);
  }
  return 0;
}

} // namespace rtm::app
