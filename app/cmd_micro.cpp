// `rtm micro`: microkernels that show why the RTM variants behave as they do (docs/micro.md).
// Every experiment prints what it measured next to what the analytic model of
// kernels/micro/memory_model.h predicts; without a CUDA build or a GPU it prints the model alone.
// The experiments are one table (experiments() below, each row a file of app/micro/): each row is
// a subcommand with its own options and its rows in `rtm micro all`; one loop registers them.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/micro/experiment.h"
#include "app/options.h"
#include "solvers/contracts/errors.h"
#include "io/result_table.h"

namespace rtm::app {
namespace {

using micro_cmd::CommonOptions;
using micro_cmd::Experiment;
using micro_cmd::Session;
using micro_cmd::SummaryTable;

// Every experiment, in the order `rtm micro all` runs them (and --help and --list show them):
// copy first, since its bandwidth is the reference of fma's floor and of double3.
const std::vector<Experiment>& experiments() {
  using namespace micro_cmd;
  static const std::vector<Experiment> table = {copy_experiment(),      fma_experiment(),
                                                transpose_experiment(), double3_experiment(),
                                                smem_experiment(),      l2_experiment()};
  return table;
}

// ---- the command line --------------------------------------------------------------------------

// The output flags every rtm command has (app/options.h), and the ones of every experiment.
void add_common_options(CLI::App* sub, CommonOptions& c) {
  add_format_flags(sub, c.format); // with --csv or --json, the device line goes to stderr
  sub->add_option("--repeats", c.repeats, "Timed launches per case; the median is reported")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_flag("--model-only", c.model_only, "Print the model's predictions, run no kernel");
}

// Its own options, for `rtm micro --list`: every option of `sub` but --help and the common ones.
std::string own_options(const CLI::App& sub) {
  std::string names;
  for (const CLI::Option* option : sub.get_options()) {
    const std::string name = option->get_name();
    if (name == "--help" || name == "--csv" || name == "--json" || name == "--repeats" ||
        name == "--model-only")
      continue;
    names += (names.empty() ? "" : " ") + name;
  }
  return names;
}

void print_experiments(const CLI::App& micro, OutputFormat format) {
  ResultTable table({{"experiment", ""}, {"options", ""}, {"description", ""}});
  for (const Experiment& e : experiments())
    table.add_row({e.name, own_options(*micro.get_subcommand(e.name)), e.description});
  table.add_row({std::string("all"), std::string(""),
                 std::string("Every experiment at its default size, one table")});
  print_table(std::cout, table, format);
}

} // namespace

void register_micro(CLI::App& rtm) {
  CLI::App* micro = rtm.add_subcommand(
      "micro", "Microkernels: measured memory behaviour next to an analytic model (docs/micro.md)");
  micro->require_subcommand(0, 1);
  auto common = std::make_shared<CommonOptions>();
  auto list = std::make_shared<bool>(false);
  micro->add_flag("--list", *list, "List the experiments (name, own options, description) and exit");
  add_format_flags(micro, common->format); // for --list

  for (const Experiment& e : experiments()) {
    CLI::App* sub = micro->add_subcommand(e.name, e.description);
    e.add_options(*sub);
    add_common_options(sub, *common);
    sub->callback([common, &e]() {
      Session s(*common);
      const ResultTable table = e.run(s);
      s.describe();
      s.print(table);
      s.finish();
    });
  }

  CLI::App* all_cmd = micro->add_subcommand(
      "all", "Every experiment at its default size (under a minute on an H200), one table");
  add_common_options(all_cmd, *common);
  all_cmd->callback([common]() {
    Session s(*common);
    SummaryTable all;
    for (const Experiment& e : experiments()) {
      s.progress(e.name.c_str());
      e.summarize(s, all);
    }
    s.describe();
    s.print(all.table());
    s.finish();
  });

  micro->callback([micro, list, common]() {
    if (*list) {
      print_experiments(*micro, common->format.format());
      return;
    }
    if (micro->get_subcommands().empty())
      throw InputError("`rtm micro` needs an experiment (" + [] {
        std::string names;
        for (const Experiment& e : experiments()) names += e.name + ", ";
        return names + "all";
      }() + "); `rtm micro --list` lists them");
  });
}

} // namespace rtm::app
