#pragma once

namespace stackup::cli {

// Parses argv, runs the command, prints, and returns the process exit code.
int run(int argc, char** argv);

}  // namespace stackup::cli
