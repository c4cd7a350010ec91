#include "base/failpoint.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "base/fs.hpp"

namespace stackup::base {

void failpoint(std::string_view name) {
    const char* wanted = std::getenv("STACKUP_FAILPOINT");
    if (wanted == nullptr || name != wanted) {
        return;
    }
    if (const char* file = std::getenv("STACKUP_FAILPOINT_FILE")) {
        write_file_atomic(file, std::to_string(::getpid()) + "\n");
    }
    for (;;) {
        ::pause();
    }
}

}  // namespace stackup::base
