// The config-file format of `rtm --config FILE`: CLI11's TOML reader, behind a strict syntax check.
//
// CLI11's own reader is lenient: a line without `=` becomes a flag, `f0 = = 3` becomes the value
// "= 3", an unclosed string or array is taken as it stands, and none of its errors says where in
// the file the problem is. rtm checks the file first, line by line, and refuses anything outside
// this small subset of TOML, naming the line:
//
//   # comment            ; comment
//   [section]            [[section]]        (a subcommand's name, e.g. [model])
//   name = value         value: a bare word or number, "a string", 'a string', or
//                        [an, array] that may continue over several lines until its `]`
//   name = value  # a trailing comment
//
// Names are letters, digits, '_', '-' and '.' (a dot separates a subcommand: model.f0 = 12).
// A name given twice in one section is refused too (CLI11 would merge or overwrite it silently).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "solvers/contracts/errors.h"

namespace rtm::app {

// A syntax error in a config file; line() is 1-based. The file's name is added by whoever knows it
// (the CLI layer, app/cli.cpp), since CLI11 hands the reader only a stream.
class ConfigSyntaxError : public InputError {
public:
  ConfigSyntaxError(int line, const std::string& message)
      : InputError("line " + std::to_string(line) + ": " + message), line_(line) {}
  int line() const { return line_; }

private:
  int line_;
};

// Throws ConfigSyntaxError for the first line of `text` outside the subset above. For every
// `name = value` line, `on_option` (when given) sees the line number, the subcommand path (section
// and dotted prefixes: [micro] fma.size = 3 gives {"micro", "fma"}) and the option name, and may
// throw ConfigSyntaxError itself; it also sees every section header, with an empty name.
using ConfigOptionVisitor = std::function<void(int line, const std::vector<std::string>& subcommands,
                                               const std::string& name)>;
void check_config_syntax(const std::string& text, const ConfigOptionVisitor& on_option = {});

// Throws ConfigSyntaxError for a line of `text` that names a subcommand `root` does not have or an
// option that subcommand does not have (CLI11 would say only "INI was not able to parse model.foo").
void check_config_names(const std::string& text, const CLI::App& root);

// CLI11's TOML reader preceded by check_config_syntax and check_config_names; install with
// root.config_formatter(...). `root` must outlive it (the app owns it, so it does).
class StrictTomlConfig : public CLI::ConfigTOML {
public:
  explicit StrictTomlConfig(const CLI::App& root) : root_(&root) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

private:
  const CLI::App* root_;
};

} // namespace rtm::app
