#include "app/config_format.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <sstream>

namespace rtm::app {
namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

bool is_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return name.front() != '.' && name.back() != '.';
}

// Shown in messages: the line as written, shortened when long.
std::string quoted(const std::string& text) {
  constexpr size_t kMaxShown = 60;
  return "`" + (text.size() > kMaxShown ? text.substr(0, kMaxShown) + "..." : text) + "`";
}

// One scalar: "string", 'string', or a bare word (letters, digits, signs, dots, slashes, spaces
// between words...) without quotes, brackets or '='. Returns "" when fine, else what is wrong.
std::string scalar_problem(const std::string& value) {
  if (value.empty()) return "an empty value";
  const char first = value.front();
  if (first == '"' || first == '\'') {
    if (value.size() < 2 || value.back() != first)
      return "the string " + quoted(value) + " is not closed (a " + std::string(1, first) +
             " is missing at its end)";
    if (value.find(first, 1) != value.size() - 1)
      return "the string " + quoted(value) + " has a " + std::string(1, first) +
             " inside it; quotes cannot be escaped here";
    return "";
  }
  for (char c : value) {
    if (c == '=') return "an unexpected '=' in the value " + quoted(value);
    if (c == '"' || c == '\'') return "a stray quote in the value " + quoted(value);
    if (c == '[' || c == ']') return "a stray bracket in the value " + quoted(value);
    if (std::iscntrl(static_cast<unsigned char>(c)) && c != '\t')
      return "a control character in the value " + quoted(value);
  }
  return "";
}

// "[a, b, c]" (already joined over lines, brackets included).
std::string array_problem(const std::string& array) {
  const std::string inner = trimmed(array.substr(1, array.size() - 2));
  if (inner.empty()) return ""; // [] is an empty list
  std::vector<std::string> elements;
  std::string current;
  char quote = 0;
  for (char c : inner) {
    if (quote) {
      if (c == quote) quote = 0;
      current += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      current += c;
    } else if (c == ',') {
      elements.push_back(trimmed(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (quote) return "a string in the array " + quoted(array) + " is not closed";
  elements.push_back(trimmed(current));
  if (elements.back().empty() && elements.size() > 1) elements.pop_back(); // trailing comma
  for (const std::string& element : elements) {
    if (element.empty()) return "an empty element in the array " + quoted(array);
    if (element.front() == '[') return "nested arrays are not supported: " + quoted(array);
    const std::string problem = scalar_problem(element);
    if (!problem.empty()) return problem;
  }
  return "";
}

std::vector<std::string> split_dots(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
    parts.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(name.substr(start));
  return parts;
}

} // namespace

void check_config_syntax(const std::string& text, const ConfigOptionVisitor& on_option) {
  std::istringstream input(text);
  std::string raw;
  int line_number = 0;
  std::string section = "(top level)";
  std::vector<std::string> section_path; // subcommands the current section names
  std::map<std::string, int> first_seen; // name -> line, within the current section
  while (std::getline(input, raw)) {
    ++line_number;
    const std::string line = trimmed(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;

    if (line.front() == '[') {
      if (line.back() != ']')
        throw ConfigSyntaxError(line_number, "the section header " + quoted(line) +
                                                 " is not closed; expected [name]");
      std::string name = line.substr(1, line.size() - 2);
      if (name.size() >= 2 && name.front() == '[' && name.back() == ']')
        name = name.substr(1, name.size() - 2);
      name = trimmed(name);
      if (!is_name(name))
        throw ConfigSyntaxError(line_number, "the section header " + quoted(line) +
                                                 " does not name a section; expected [name] "
                                                 "with letters, digits, '_', '-' or '.'");
      section = "[" + name + "]";
      // CLI11 treats [default] as the top level.
      section_path = name == "default" ? std::vector<std::string>{} : split_dots(name);
      first_seen.clear();
      if (on_option) on_option(line_number, section_path, "");
      continue;
    }

    const size_t equals = line.find('=');
    if (equals == std::string::npos)
      throw ConfigSyntaxError(line_number, "expected `name = value`, a [section] or a # comment, "
                                           "got " + quoted(line) +
                                               " (a flag is written `name = true`)");
    const std::string name = trimmed(line.substr(0, equals));
    if (!is_name(name))
      throw ConfigSyntaxError(line_number,
                              name.empty() ? "no option name before '=' in " + quoted(line)
                                           : "the option name " + quoted(name) +
                                                 " has characters other than letters, digits, "
                                                 "'_', '-' and '.'");

    std::string value = line.substr(equals + 1);
    // CLI11 cuts the value at its first '#', quoted or not: a '#' inside a string would be lost.
    const size_t hash = value.find('#');
    if (hash != std::string::npos) {
      const std::string before = value.substr(0, hash);
      const size_t quotes = size_t(std::count(before.begin(), before.end(), '"')) +
                            size_t(std::count(before.begin(), before.end(), '\''));
      if (quotes % 2 == 1)
        throw ConfigSyntaxError(line_number, "a '#' inside the string value of " + quoted(name) +
                                                 " would start a comment; rename the file or "
                                                 "pass this option on the command line");
      value = before;
    }
    value = trimmed(value);
    if (value.empty())
      throw ConfigSyntaxError(line_number, "the option " + quoted(name) + " has no value after '='");

    const int start_line = line_number;
    std::string problem;
    if (value.front() == '[') {
      if (value.size() == 1)
        throw ConfigSyntaxError(line_number, "the array of " + quoted(name) +
                                                 " must have its first element on the line of its '['");
      // CLI11 joins the following lines, trimmed, until one ends with ']'; comments there would
      // become part of the array.
      while (value.back() != ']') {
        std::string continuation;
        if (!std::getline(input, continuation))
          throw ConfigSyntaxError(start_line, "the array of " + quoted(name) +
                                                  " opened here is not closed with ']'");
        ++line_number;
        continuation = trimmed(continuation);
        if (continuation.find('#') != std::string::npos)
          throw ConfigSyntaxError(line_number, "a comment inside the array of " + quoted(name) +
                                                   " (opened on line " +
                                                   std::to_string(start_line) +
                                                   ") is not allowed");
        value += continuation;
      }
      problem = array_problem(value);
    } else {
      problem = scalar_problem(value);
    }
    if (!problem.empty())
      throw ConfigSyntaxError(start_line, "option " + quoted(name) + ": " + problem);

    const auto [previous, inserted] = first_seen.emplace(name, start_line);
    if (!inserted)
      throw ConfigSyntaxError(start_line, "option " + quoted(name) + " is given twice in " +
                                              section + " (first on line " +
                                              std::to_string(previous->second) + ")");
    if (on_option) {
      std::vector<std::string> path = section_path;
      std::vector<std::string> parts = split_dots(name);
      path.insert(path.end(), parts.begin(), parts.end() - 1);
      on_option(start_line, path, parts.back());
    }
  }
}

void check_config_names(const std::string& text, const CLI::App& root) {
  check_config_syntax(text, [&root](int line, const std::vector<std::string>& subcommands,
                                    const std::string& name) {
    const CLI::App* app = &root;
    std::string path;
    for (const std::string& part : subcommands) {
      const auto found = app->get_subcommands(
          [&part](const CLI::App* sub) { return sub->check_name(part); });
      path += (path.empty() ? "" : " ") + part;
      if (found.empty())
        throw ConfigSyntaxError(line, "`" + path + "` is not an rtm subcommand" +
                                          (name.empty() ? std::string()
                                                        : ", so its option " + quoted(name) +
                                                              " cannot be set"));
      app = found.front();
    }
    if (name.empty()) return; // a section header
    // The names CLI11 tries, in its order: --name, -n (one letter), then a positional's name.
    const bool known = app->get_option_no_throw("--" + name) != nullptr ||
                       (name.size() == 1 && app->get_option_no_throw("-" + name) != nullptr) ||
                       app->get_option_no_throw(name) != nullptr;
    if (!known)
      throw ConfigSyntaxError(line, "unknown option " + quoted(name) +
                                        (path.empty() ? std::string(" at the top level")
                                                      : " for `rtm " + path + "`") +
                                        "; see `rtm " + (path.empty() ? "" : path + " ") +
                                        "--help`");
  });
}

std::vector<CLI::ConfigItem> StrictTomlConfig::from_config(std::istream& input) const {
  const std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
  check_config_names(text, *root_);
  std::istringstream checked(text);
  return CLI::ConfigTOML::from_config(checked);
}

} // namespace rtm::app
