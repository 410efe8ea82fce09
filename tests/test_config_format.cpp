// The strict config-file check in front of CLI11's reader (app/config_format.h): what it accepts,
// and the line it names for what it refuses.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/cli.h"
#include "app/config_format.h"

using ::testing::HasSubstr;
using rtm::app::check_config_names;
using rtm::app::check_config_syntax;
using rtm::app::ConfigSyntaxError;

namespace {

// The line number and message of the error check_config_syntax throws for `text` (line 0 if none).
std::pair<int, std::string> syntax_error(const std::string& text) {
  try {
    check_config_syntax(text);
  } catch (const ConfigSyntaxError& e) {
    return {e.line(), e.what()};
  }
  return {0, ""};
}

} // namespace

TEST(ConfigSyntax, AcceptsTheSubsetCli11Reads) {
  const std::string text = "# a comment\n"
                           "; another\n"
                           "\n"
                           "top = 1\n"
                           "[model]\n"
                           "model = \"layered.h5\"   # trailing comment\n"
                           "output = 'shots.h5'\n"
                           "record-time = 1.0e0\n"
                           "free-surface = true\n"
                           "backend = cpu\n"
                           "[[generate-model]]\n"
                           "shape = [128, 64,\n"
                           "  32]\n"
                           "spacing = 10,10,5\n"
                           "interfaces = []\n"
                           "generate-model.type = salt\n";
  EXPECT_NO_THROW(check_config_syntax(text));
  EXPECT_NO_THROW(check_config_syntax(""));
}

TEST(ConfigSyntax, NamesTheLineOfEachError) {
  const struct {
    const char* text;
    int line;
    const char* says;
  } cases[] = {
      {"[model]\nf0 = = 12\n", 2, "unexpected '='"},
      {"[model]\n\nfree-surface\n", 3, "name = value"},
      {"[model\nf0 = 1\n", 1, "not closed"},
      {"[]\n", 1, "does not name a section"},
      {"a = 1\n = 2\n", 2, "no option name"},
      {"f0 =\n", 1, "no value"},
      {"f0 = 12 # ok\nbackend = \"cpu\n", 2, "not closed"},
      {"x = 'a'b'\n", 1, "inside it"},
      {"shape = [1, 2,\n3\n", 1, "not closed with ']'"},
      {"shape = [1,\n2, # two\n3]\n", 2, "comment inside the array"},
      {"shape = [1,,2]\n", 1, "empty element"},
      {"shape = [[1], [2]]\n", 1, "nested"},
      {"shape = [\n1]\n", 1, "first element"},
      {"[model]\nf0 = 1\nt0 = 0\nf0 = 2\n", 4, "given twice in [model] (first on line 2)"},
      {"model = \"a#b.h5\"\n", 1, "'#' inside the string"},
      {"f0 = \"1\" \"2\"\n", 1, "inside it"},
      {"na me = 1\n", 1, "option name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto [line, message] = syntax_error(c.text);
    EXPECT_EQ(line, c.line) << message;
    EXPECT_THAT(message, HasSubstr(c.says));
  }
}

TEST(ConfigSyntax, SameNameInAnotherSectionIsFine) {
  EXPECT_NO_THROW(check_config_syntax("[model]\nf0 = 1\n[demo]\nf0 = 2\n"));
}

TEST(ConfigNames, UnknownSectionsAndOptionsAreRefusedWithTheirLine) {
  const rtm::app::Cli cli = rtm::app::build_cli();
  EXPECT_NO_THROW(check_config_names("[model]\nf0 = 12\nmodel = a.h5\n[micro.fma]\n", *cli.app));
  EXPECT_NO_THROW(check_config_names("model.record-time = 2\n", *cli.app));
  const struct {
    const char* text;
    int line;
    const char* says;
  } cases[] = {
      {"[model]\nf0 = 12\nfrequency = 3\n", 3, "unknown option `frequency` for `rtm model`"},
      {"[modle]\n", 1, "`modle` is not an rtm subcommand"},
      {"modle.f0 = 3\n", 1, "`modle` is not an rtm subcommand"},
      {"[micro.fmaa]\n", 1, "`micro fmaa` is not an rtm subcommand"},
      {"verbose = true\n", 1, "at the top level"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      check_config_names(c.text, *cli.app);
      ADD_FAILURE() << "not refused";
    } catch (const ConfigSyntaxError& e) {
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(c.says));
    }
  }
}
