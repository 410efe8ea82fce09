// Each subcommand of `rtm` lives in its own app/cmd_<name>.cpp and registers itself here.
#pragma once

#include <functional>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace rtm::app {

// Thrown by a command that stopped on a signal after saving its work (every rank alike): run_cli
// returns 128 + signal, the shell's convention (130 for SIGINT, 143 for SIGTERM).
struct RunStopped : std::runtime_error {
  RunStopped(int signal_number, const std::string& message)
      : std::runtime_error(message), signal(signal_number) {}
  int signal;
};

void register_info(CLI::App& rtm);
void register_generate_model(CLI::App& rtm);
void register_model(CLI::App& rtm);
void register_migrate(CLI::App& rtm);
void register_lsrtm(CLI::App& rtm);
// Returns the demo's action, which bare `rtm` runs with the default options.
std::function<void()> register_demo(CLI::App& rtm);
void register_bench(CLI::App& rtm);
void register_micro(CLI::App& rtm);
void register_import(CLI::App& rtm);
void register_export(CLI::App& rtm);
void register_plot(CLI::App& rtm);

} // namespace rtm::app
