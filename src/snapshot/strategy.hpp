#pragma once
// Internal to the snapshot store: which strategy a create uses, and why.

#include <filesystem>
#include <string>

#include "snapshot/info.hpp"

namespace stackup::snapshot::detail {

struct Resolved {
    Strategy strategy = Strategy::copy;  // never automatic
    std::string reason;                  // recorded as SnapshotInfo::strategy_reason
};

// automatic: reflink when a clone of one venv file into `snapshots_dir`
// works, else hardlink on the venv's filesystem (st_dev), else copy. An
// explicit reflink that the probe refuses throws Error(usage) with the probe's
// reason, before anything is created.
[[nodiscard]] Resolved resolve_strategy(Strategy asked, const std::filesystem::path& venv,
                                        const std::filesystem::path& snapshots_dir);

}  // namespace stackup::snapshot::detail
