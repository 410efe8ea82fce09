// Helpers of the tests that feed rtm's readers broken files: a copy with some bytes changed, and
// the message of the InputError a reader throws.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "solvers/contracts/errors.h"

namespace rtm::test {

// Copies `from` to `to` and lets `edit` change its bytes.
inline void copy_edited(const std::string& from, const std::string& to,
                        const std::function<void(std::vector<char>&)>& edit) {
  std::ifstream in(from, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  edit(bytes);
  std::ofstream(to, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// The InputError message of `f`, or "" (and a test failure) when it throws none.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

} // namespace rtm::test
