#include "txn/retention.hpp"

#include <set>

#include "base/log.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

std::vector<std::string> prune(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, int keep, const std::string& keep_id,
                               bool later) {
    // Never the live generation: for an apply, `keep_id` (the one it made) and the one that was
    // built from, which the apply names as its undo target. Nor what an interrupted run or a staged
    // generation needs: the ones an interrupted run needs are kept aside; the others count as kept.
    std::set<std::string> needed;
    std::set<std::string> kept_anyway;
    try {
        if (keep_id.empty()) {
            if (auto live = store.live(venv)) {
                kept_anyway.insert(live->id);
            }
        } else {
            kept_anyway.insert(keep_id);
            if (auto made = store.find(keep_id)) {
                kept_anyway.insert(made->parent);
            }
        }
        if (auto open = open_transaction(state_dir)) {
            needed.insert({open->snapshot_id, open->generation});
        }
        if (auto staged = staged_generation(state_dir)) {
            kept_anyway.insert({staged->base_id, staged->generation_id});
        }
    } catch (const std::exception& e) {
        base::log::warn(std::string("not pruning: ") + e.what());
        return {};
    }
    std::vector<std::string> doomed;
    int kept = 0;
    for (const auto& info : store.list()) {  // newest first
        if (info.venv != venv || needed.count(info.id) != 0) {
            continue;
        }
        if (kept_anyway.count(info.id) != 0 || kept < keep) {
            ++kept;
            continue;
        }
        doomed.push_back(info.id);
    }
    auto removal = store.remove(doomed, later);
    for (const auto& [id, why] : removal.failed) {
        base::log::warn("cannot prune snapshot " + id + ": " + why);
    }
    if (!removal.garbage_error.empty()) {
        base::log::warn("cannot remove the objects no snapshot needs any more: " + removal.garbage_error);
    }
    return std::move(removal.removed);
}

std::vector<std::pair<std::string, std::string>> distribution_pairs(const venv::Facts& facts) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& d : facts.distributions) {
        out.emplace_back(d.name, d.version);
    }
    return out;
}

}  // namespace stackup::txn
