#include "snapshot/swap.hpp"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "snapshot/copy.hpp"
#include "snapshot/store_internal.hpp"

namespace stackup::snapshot::detail {

namespace {

// The venv moves aside first, so for a moment its path is empty; each failure says where both trees are.
Swap swap_by_two_renames(const std::filesystem::path& staged, const std::filesystem::path& venv) {
    const auto aside = std::filesystem::path(staged.string() + "-old");
    if (::rename(venv.c_str(), aside.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        discard_after_failure(staged);
        restore_failed("cannot move " + venv.string() + " aside to " + aside.string() + ": " + why + "; " +
             venv.string() + " was not touched");
    }
    if (::rename(staged.c_str(), venv.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        if (::rename(aside.c_str(), venv.c_str()) == 0) {
            discard_after_failure(staged);
            restore_failed("cannot move the restored tree " + staged.string() + " to " + venv.string() + ": " + why +
                 "; " + venv.string() + " holds its old tree again");
        }
        restore_failed("cannot move the restored tree " + staged.string() + " to " + venv.string() + ": " + why +
             "; " + venv.string() + " does NOT exist now: its old tree is at " + aside.string() +
             " and the restored tree at " + staged.string());
    }
    return Swap{false, aside};
}

}  // namespace

int exchange_paths(const std::filesystem::path& a, const std::filesystem::path& b) {
    return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0 ? 0 : errno;
}

bool lacks_exchange(int err) {
    return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

Swap swap_into_place(const std::filesystem::path& staged, const std::filesystem::path& venv, bool venv_exists) {
    if (!venv_exists) {
        if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, venv.c_str(), RENAME_NOREPLACE) == 0 ||
            (lacks_exchange(errno) && ::rename(staged.c_str(), venv.c_str()) == 0)) {
            return Swap{true, std::nullopt};
        }
        const std::string why = std::strerror(errno);
        discard_after_failure(staged);
        restore_failed("cannot move the restored tree to " + venv.string() + ": " + why + "; " + venv.string() +
             " still does not exist");
    }
    const int err = exchange_paths(staged, venv);
    if (err == 0) {
        return Swap{true, staged};
    }
    if (lacks_exchange(err)) {
        return swap_by_two_renames(staged, venv);
    }
    const std::string why = std::strerror(err);
    discard_after_failure(staged);
    restore_failed("cannot swap the restored tree into " + venv.string() + ": " + why + "; " + venv.string() +
         " was not touched");
}

}  // namespace stackup::snapshot::detail
