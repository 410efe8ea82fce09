// One experiment of `rtm micro` (docs/micro.md) as a row of the table app/cmd_micro.cpp registers:
// adding an experiment is a file in app/micro/ with its factory, and a row in experiments().
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "app/micro/session.h"
#include "io/result_table.h"

namespace rtm::app::micro_cmd {

// One experiment of `rtm micro`: a subcommand of its own (its options, its table) and its rows in
// `rtm micro all` (at its default size). Its options live with it, shared by the two lambdas.
struct Experiment {
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> add_options;
  std::function<ResultTable(Session&)> run;
  std::function<void(Session&, SummaryTable&)> summarize;
};

// The experiments (app/micro/<name>.cpp).
Experiment copy_experiment();
Experiment fma_experiment();
Experiment transpose_experiment();
Experiment double3_experiment();
Experiment smem_experiment();
Experiment l2_experiment();

} // namespace rtm::app::micro_cmd
