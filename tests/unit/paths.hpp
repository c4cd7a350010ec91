#pragma once
// Where the unit tests find the source tree and the shared fixtures, as configured. The paths
// are defined in paths.cpp alone: a definition holding an absolute path makes every object
// compiled with it differ from one clone to the next, so ccache (contrib/configure.sh) could
// not hand a fresh clone the last one's test objects.

#include <filesystem>

namespace stackup::testing {

std::filesystem::path source_dir();
std::filesystem::path configured_fixtures_dir();

}  // namespace stackup::testing
