// Each subcommand of `rtm` lives in its own app/cmd_<name>.cpp and registers itself here.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace rtm::app {

void register_info(CLI::App& rtm);
void register_generate_model(CLI::App& rtm);
void register_model(CLI::App& rtm);
void register_migrate(CLI::App& rtm);
// Returns the demo's action, which bare `rtm` runs with the default options.
std::function<void()> register_demo(CLI::App& rtm);
void register_bench(CLI::App& rtm);
void register_micro(CLI::App& rtm);

} // namespace rtm::app
