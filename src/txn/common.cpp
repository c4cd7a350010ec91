#include "txn/common.hpp"

#include "base/error.hpp"
#include "base/log.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

base::FileLock acquire_lock(const std::filesystem::path& state_dir, const std::string& command) {
    auto path = state_dir / "lock";
    auto lock = base::FileLock::try_acquire(path, command);
    if (!lock) {
        std::string holder = base::FileLock::holder(path);
        throw Error(ExitCode::locked, "the venv is locked by another stackup run: " +
                                          (holder.empty() ? std::string("holder unknown") : holder) + " (" +
                                          path.string() + ")");
    }
    return std::move(*lock);
}

std::vector<std::pair<std::string, std::string>> distribution_pairs(const venv::Facts& facts) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& d : facts.distributions) {
        out.emplace_back(d.name, d.version);
    }
    return out;
}

CheckReport run_check(const manifest::Manifest&, const std::filesystem::path& venv, const base::Environment& env,
                      const manifest::Check& check) {
    auto r = base::run_process({{venv::python_of(venv).string(), "-I", "-B", "-c", check.python}, env, std::nullopt});
    CheckReport c{check.name, r.ok(), r.output};
    if (!r.ok()) {
        c.output = r.describe() + (r.output.empty() ? "" : ": " + r.output);
    }
    return c;
}

verify::Mismatch check_mismatch(const CheckReport& c) {
    std::string found = c.output;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) {
        found.pop_back();
    }
    return {"", "", "check '" + c.name + "'", "it passes", found};
}

std::vector<std::string> prune(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, int keep, const std::string& keep_id) {
    std::string needed;
    try {
        if (auto open = open_transaction(state_dir)) {
            needed = open->snapshot_id;
        }
    } catch (const std::exception& e) {
        base::log::warn(std::string("not pruning: ") + e.what());
        return {};
    }
    std::vector<std::string> removed;
    int kept = 0;
    for (const auto& info : store.list()) {  // newest first
        if (info.venv != venv || info.id == needed) {
            continue;
        }
        if (info.id == keep_id || kept < keep) {
            ++kept;
            continue;
        }
        try {
            store.remove(info.id);
            removed.push_back(info.id);
        } catch (const std::exception& e) {
            base::log::warn("cannot prune snapshot " + info.id + ": " + e.what());
        }
    }
    return removed;
}

}  // namespace stackup::txn
