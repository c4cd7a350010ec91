#pragma once
// Internal to Store::restore: putting a staged tree at the venv's path in one
// rename, so that the path only ever holds the old tree or the restored one.

#include <filesystem>
#include <optional>

namespace stackup::snapshot::detail {

// The one RENAME_EXCHANGE of the store: swaps two paths on one filesystem in one step.
// Returns 0, or the errno the kernel gave (nothing changed then).
[[nodiscard]] int exchange_paths(const std::filesystem::path& a, const std::filesystem::path& b);
// Whether `err` (from exchange_paths) says the filesystem or kernel has no RENAME_EXCHANGE.
[[nodiscard]] bool lacks_exchange(int err);

struct Swap {
    bool atomic = true;                             // false: two renames, the path was briefly empty
    std::optional<std::filesystem::path> old_tree;  // where the replaced venv now is (none: there was none)
};

// Exchanges `staged` (on the venv's filesystem, any directory) and `venv`
// with RENAME_EXCHANGE, or renames it into place when the venv does not
// exist. Without RENAME_EXCHANGE (some filesystems, old kernels) the venv moves
// aside to "<staged>-old" first. Every failure throws Error(rollback_failed)
// saying where both trees are; `staged` is removed when the venv was not touched.
[[nodiscard]] Swap swap_into_place(const std::filesystem::path& staged, const std::filesystem::path& venv,
                                   bool venv_exists);

}  // namespace stackup::snapshot::detail
