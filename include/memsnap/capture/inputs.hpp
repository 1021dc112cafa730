#pragma once
// The files a command reads, from the names given: a directory stands for the regular files
// in it and in its subdirectories (sorted by path, hidden ones left out), for the commands
// that take many captures.

#include <string>
#include <vector>

namespace memsnap::capture {

struct InputName {
    std::string path;
    bool in_directory = false;  // found in a directory rather than named
    // Why an entry found in a directory is not read (a dangling link, a FIFO); empty when it
    // is to be read. Such entries are skipped with a warning, in path order with the others.
    std::string skipped = {};
};

// Throws Error: input when a directory cannot be listed, usage when the directories named
// hold no files.
std::vector<InputName> expand_inputs(const std::vector<std::string>& names);

}  // namespace memsnap::capture
