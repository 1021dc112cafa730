#pragma once

namespace memsnap::cli {

// Parses the command line, runs one command, and maps every error to an exit code:
// 0 success, 1 usage error, 2 unreadable input, 3 a gate tripped.
int run(int argc, char** argv);

}  // namespace memsnap::cli
