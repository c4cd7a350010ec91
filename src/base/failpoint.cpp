#include "base/failpoint.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "base/fs.hpp"
#include "base/interrupt.hpp"

namespace stackup::base {

void failpoint(std::string_view name) {
    const char* wanted = std::getenv("STACKUP_FAILPOINT");
    if (wanted == nullptr || name != wanted) {
        return;
    }
    // Written first, then waited: a SIGINT/SIGTERM/SIGHUP sent once the file is there goes on
    // from here, as one at this moment would; a kill -9 ends it here.
    interrupts::wait_for_signal([] {
        if (const char* file = std::getenv("STACKUP_FAILPOINT_FILE")) {
            write_file_atomic(file, std::to_string(::getpid()) + "\n");
        }
    });
}

}  // namespace stackup::base
