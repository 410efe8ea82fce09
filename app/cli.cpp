#include "app/cli.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/config_format.h"
#include "solvers/contracts/errors.h"
#include "io/provenance.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/contracts/closest_name.h"

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

// Every name an option of `command` answers to, with its dashes ("--model", "-m").
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names = {"--help", "-h"};
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

bool is_config_option(const std::string& word) {
  return word == "--config" || word.rfind("--config=", 0) == 0;
}

// `--config FILE` moved before the subcommand, where CLI11 looks for it, so that it works on
// either side ("rtm model --config run.toml" as "rtm --config run.toml model").
std::vector<std::string> config_first(int argc, char** argv) {
  std::vector<std::string> config, rest;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") { // everything after it is positional
      rest.insert(rest.end(), argv + i, argv + argc);
      break;
    }
    if (is_config_option(word)) {
      config.push_back(word);
      if (word == "--config" && i + 1 < argc) config.push_back(argv[++i]);
    } else {
      rest.push_back(word);
    }
  }
  config.insert(config.begin(), argc > 0 ? argv[0] : "rtm");
  config.insert(config.end(), rest.begin(), rest.end());
  return config;
}

// Names of the subcommands of `command`.
std::vector<std::string> subcommand_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// After CLI11 refused the command line: the first word that is neither a subcommand where one is
// expected nor an option of the chosen (sub)command, named with the closest real name. "" when
// every word is known (then CLI11's own message is the right one: a missing value, a bad number).
std::string unknown_name_message(const CLI::App& rtm, const std::vector<std::string>& words) {
  const CLI::App* command = &rtm;
  std::string shown = "rtm";
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") break;
    if (word.empty()) continue;
    if (is_config_option(word)) {
      if (word == "--config") ++i;
      continue;
    }
    if (word[0] != '-') {
      const std::vector<std::string> names = subcommand_names(*command);
      if (names.empty()) continue; // a value or a positional
      const CLI::App* sub = nullptr;
      for (const CLI::App* candidate : command->get_subcommands([](const CLI::App*) { return true; }))
        if (candidate->get_name() == word) sub = candidate;
      // A word after an option may be its value; only one right after the command (or after
      // another plain word) must be a subcommand.
      const bool after_option = words[i - 1].size() > 1 && words[i - 1][0] == '-';
      if (!sub && after_option) continue;
      if (!sub) {
        const std::string guess = closest_name(word, names);
        return word + " is not a subcommand of " + shown +
               (guess.empty() ? "" : "; did you mean " + guess + "?") + "\nRun `" + shown +
               " --help` for the subcommands.";
      }
      command = sub;
      shown += " " + word;
      continue;
    }
    // Long options, and short ones of one letter; "-2" is a value, not an option.
    const bool long_option = word.rfind("--", 0) == 0 && word.size() > 2;
    const bool short_option =
        word.size() == 2 && std::isalpha(static_cast<unsigned char>(word[1]));
    if (!long_option && !short_option) continue;
    const std::string name = word.substr(0, word.find('='));
    const std::vector<std::string> known = option_names(*command);
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string guess = closest_name(name, known);
    return name + " is not an option of " + shown +
           (guess.empty() ? "" : "; did you mean " + guess + "?") + "\nRun `" + shown +
           " --help` for its options.";
  }
  return "";
}

// After CLI11 refused an option given more often than it takes values (its text: "--output: At
// Most 1 required but received 2"): the option with each value given, and what to do. "" when no
// option of the chosen subcommand is repeated in `words` (then CLI11's own message stands).
std::string repeated_option_message(const CLI::App& rtm, const std::vector<std::string>& words) {
  const CLI::App* command = &rtm;
  std::string shown = "rtm";
  size_t first = 1;
  for (; first < words.size(); ++first) { // the subcommand: the first word that names one
    const CLI::App* sub = nullptr;
    for (const CLI::App* candidate : rtm.get_subcommands([](const CLI::App*) { return true; }))
      if (candidate->get_name() == words[first]) sub = candidate;
    if (sub) {
      command = sub;
      shown += " " + words[first];
      break;
    }
  }
  for (const CLI::Option* option : command->get_options()) {
    if (option->get_items_expected_max() != 1 || option->get_type_size() == 0) continue;
    std::vector<std::string> names;
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    std::vector<std::string> given;
    for (size_t i = first; i < words.size(); ++i) {
      if (words[i] == "--") break;
      for (const std::string& name : names) {
        if (words[i] == name) given.push_back(name + " " + (i + 1 < words.size() ? words[i + 1] : ""));
        else if (words[i].rfind(name + "=", 0) == 0) given.push_back(words[i]);
      }
    }
    if (given.size() < 2) continue;
    std::string list, spelled;
    for (const std::string& g : given) list += (list.empty() ? "" : ", ") + g;
    for (const std::string& name : names) spelled += (spelled.empty() ? "" : "/") + name;
    return spelled + " is given " + std::to_string(given.size()) + " times to " + shown + " (" +
           list + ") but takes one value: give it once";
  }
  return "";
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
  register_lsrtm(rtm);
  register_import(rtm);
  register_export(rtm);
  register_plot(rtm);
  register_bench(rtm);
  cli.demo = register_demo(rtm);
  register_micro(rtm);
  return cli;
}

int run_cli(Cli& cli, int argc, char** argv) {
  CLI::App& rtm = *cli.app;
  const std::vector<std::string> words = config_first(argc, argv);
  std::vector<char*> reordered;
  for (const std::string& word : words) reordered.push_back(const_cast<char*>(word.c_str()));
  try {
    rtm.parse(static_cast<int>(reordered.size()), reordered.data());
    if (rtm.get_subcommands().empty()) cli.demo(); // bare `rtm`: the demo, defaults
  } catch (const ConfigSyntaxError& e) {
    return bad_input("config file " + config_file_name(cli) + ": " + e.what());
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return rtm.exit(e);
    std::string message = e.what();
    if (dynamic_cast<const CLI::ConfigError*>(&e))
      message = "config file " + config_file_name(cli) + ": " + message;
    // An unknown word on the command line is named with its likely meaning, whatever CLI11
    // tripped over first (a required option it then misses, say).
    if (const std::string unknown = unknown_name_message(rtm, words); !unknown.empty()) {
      print_error("error", unknown);
      return fail(2);
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e))
      if (const std::string repeated = repeated_option_message(rtm, words); !repeated.empty()) {
        print_error("error", repeated);
        return fail(2);
      }
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
