// Refusing an output that would overwrite one of the run's inputs, before any work.
#pragma once

#include <string>
#include <vector>

namespace rtm {

// A file the user named, with the option that named it ("--model", "-o").
struct NamedPath {
  std::string option;
  std::string path;
};

// True when `a` and `b` name the same file: for existing files the same device and inode (so
// "../x/m.h5", a symbolic link and a hard link all count), else the same canonical path.
bool same_file(const std::string& a, const std::string& b);

// Throws InputError naming both when an output is the same file as an input ("-o m.h5 is the same
// file as --model ../d/m.h5: refusing to write over an input"). Empty paths are skipped.
void check_outputs_are_not_inputs(const std::vector<NamedPath>& outputs,
                                  const std::vector<NamedPath>& inputs);

} // namespace rtm
