#pragma once
// A command line as a user would paste it into a shell.

#include <string>
#include <vector>

namespace stackup::base {

// One argv as a single line for logs and reports: shell-quoted where needed, URL credentials redacted.
std::string render_argv(const std::vector<std::string>& argv);

}  // namespace stackup::base
