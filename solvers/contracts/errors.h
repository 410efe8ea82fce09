// Errors the program reports to users.
#pragma once

#include <stdexcept>
#include <string>

namespace rtm {

// Bad input from the user (a file, dataset, attribute, option or value): the message names the
// thing and what was expected. The app prints it and exits with status 2, leaving no output.
class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace rtm
