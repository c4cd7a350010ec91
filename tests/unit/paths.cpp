#include "paths.hpp"

namespace stackup::testing {

std::filesystem::path source_dir() { return STACKUP_SOURCE_DIR; }

std::filesystem::path configured_fixtures_dir() { return STACKUP_FIXTURES_DIR; }

}  // namespace stackup::testing
