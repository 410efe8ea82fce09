// libFuzzer target: the config-file reader of `rtm --config FILE` (app/config_format.h in front of
// CLI11's TOML reader), on the command line the executable builds (app/cli.h). Parsing is all that
// happens: a parse-complete hook on the root stops CLI11 after every check and before any
// subcommand's action would run. The first byte picks the
// subcommand named on the command line; the rest is the file. Allowed outcomes: a successful parse,
// a CLI::ParseError (CLI11's refusals) or an rtm::InputError (ours, e.g. ConfigSyntaxError); any
// other exception or a crash is a bug. Seeds: tests/fuzz/corpus/config/.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.h"
#include "solvers/contracts/errors.h"

namespace {

const std::string& scratch_path() {
  static const std::string path =
      "/tmp/rtm_fuzz_config_" + std::to_string(static_cast<long>(::getpid())) + ".toml";
  return path;
}

// Thrown by the root's parse-complete callback, which CLI11 runs after parsing and validating
// everything and before the chosen subcommand's callback (which would read and write files). The
// callbacks themselves stay in place: they own the structures the options write into.
struct ParsedWithoutRunning {};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kSubcommands[] = {"model", "generate-model", "demo", "info", "bench"};
  if (size < 1) return 0;
  const char* subcommand = kSubcommands[data[0] % (sizeof kSubcommands / sizeof *kSubcommands)];
  const std::string& path = scratch_path();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  const bool written = std::fwrite(data + 1, 1, size - 1, file) == size - 1;
  if (std::fclose(file) != 0 || !written) return 0;

  rtm::app::Cli cli = rtm::app::build_cli();
  cli.app->parse_complete_callback([] { throw ParsedWithoutRunning{}; });
  std::vector<std::string> words = {"rtm", "--config", path, subcommand};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  try {
    cli.app->parse(static_cast<int>(argv.size()), argv.data());
    __builtin_trap(); // the hook must have stopped the parse before any subcommand ran
  } catch (const ParsedWithoutRunning&) {
  } catch (const CLI::ParseError&) {
  } catch (const rtm::InputError&) {
  }
  return 0;
}
