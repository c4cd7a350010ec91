#include "snapshot/strategy.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "snapshot/reflink.hpp"

namespace stackup::snapshot {

namespace detail {

namespace {

std::uint64_t device_of(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    return static_cast<std::uint64_t>(st.st_dev);
}

// Without reflinks: hard links only work within one filesystem, copies anywhere.
Resolved without_reflinks(const ReflinkProbe& probe, const std::filesystem::path& venv,
                          const std::filesystem::path& snapshots_dir) {
    const auto venv_dev = device_of(venv);
    const auto store_dev = device_of(snapshots_dir);
    const std::string no_reflinks = "no reflinks (" + probe.reason + ")";
    if (venv_dev == store_dev) {
        return {Strategy::hardlink, "automatic: hardlink, " + no_reflinks +
                                        " and the state dir is on the venv's filesystem (st_dev " +
                                        std::to_string(venv_dev) + ")"};
    }
    return {Strategy::copy, "automatic: copy, " + no_reflinks + " and the state dir (st_dev " +
                                std::to_string(store_dev) + ") is not on the venv's filesystem (st_dev " +
                                std::to_string(venv_dev) + ")"};
}

}  // namespace

Resolved resolve_strategy(Strategy asked, const std::filesystem::path& venv,
                          const std::filesystem::path& snapshots_dir) {
    if (asked == Strategy::copy || asked == Strategy::hardlink) {
        return {asked, "asked for " + to_string(asked)};
    }
    const ReflinkProbe probe = probe_reflink(venv, snapshots_dir);
    if (asked == Strategy::reflink) {
        if (!probe.supported) {
            throw Error(ExitCode::usage, "cannot take a reflink snapshot of " + venv.string() + ": " + probe.reason +
                                             "; ask for the hardlink or copy strategy (or automatic) instead");
        }
        return {Strategy::reflink, "asked for reflink: " + probe.reason};
    }
    if (probe.supported) {
        return {Strategy::reflink, "automatic: reflink, " + probe.reason};
    }
    return without_reflinks(probe, venv, snapshots_dir);
}

}  // namespace detail

}  // namespace stackup::snapshot
