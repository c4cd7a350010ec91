#include "txn/common.hpp"

#include "base/error.hpp"
#include "base/log.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

namespace {

std::string pid_list(const std::vector<long>& pids) {
    std::string out;
    for (long pid : pids) {
        out += (out.empty() ? "" : ", ") + std::to_string(pid);
    }
    return out;
}

// Why the lock cannot be taken: a live holder, or a dead one whose children still hold it.
std::string locked_message(const std::filesystem::path& path) {
    std::string line = base::FileLock::holder(path);
    auto holder = base::parse_holder(line);
    if (!holder || base::liveness_of(*holder) != base::Liveness::not_running) {
        return "the venv is locked by another stackup run: " + (line.empty() ? std::string("holder unknown") : line) +
               " (" + path.string() + ")";
    }
    auto pids = base::FileLock::processes_with_open(path);
    return "the venv is locked (" + path.string() + "): its holder " + describe_holder(line) +
           ", but a process it started still holds the lock" +
           (pids.empty() ? std::string() : " (pid " + pid_list(pids) + ")") +
           ": an installer that outlived its stackup may still be writing the venv; wait for it to end (or kill "
           "it), then run `stackup status`";
}

}  // namespace

std::string describe_holder(const std::string& line) {
    auto holder = base::parse_holder(line);
    if (!holder) {
        return line;
    }
    std::string what = "pid " + std::to_string(holder->pid) + " on " + holder->host + " ('" + holder->command +
                       "', since " + holder->since + ")";
    switch (base::liveness_of(*holder)) {
        case base::Liveness::running: return what + " is running";
        case base::Liveness::not_running: return what + " is not running";
        case base::Liveness::unknown: return what + " ran on another host";
    }
    return what;
}

VenvLock acquire_lock(const std::filesystem::path& state_dir, const std::string& command) {
    auto path = state_dir / "lock";
    auto lock = base::FileLock::try_acquire(path, command);
    if (!lock) {
        throw Error(ExitCode::locked, locked_message(path));
    }
    if (const auto& stale = lock->stale_holder()) {
        bool dead = base::liveness_of(*stale) == base::Liveness::not_running;
        base::log::warn("a stale lock of pid " + std::to_string(stale->pid) + " (" +
                        (dead ? "not running" : "on " + stale->host) + ", since " + stale->since + ", '" +
                        stale->command + "') was found: its run ended without releasing it; taking it over");
    }
    int fd = lock->fd();
    return VenvLock{std::move(*lock), base::InheritedFd(fd)};
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
    std::vector<std::string> doomed;
    int kept = 0;
    for (const auto& info : store.list()) {  // newest first
        if (info.venv != venv || info.id == needed) {
            continue;
        }
        if (info.id == keep_id || kept < keep) {
            ++kept;
            continue;
        }
        doomed.push_back(info.id);
    }
    auto removal = store.remove(doomed);
    for (const auto& [id, why] : removal.failed) {
        base::log::warn("cannot prune snapshot " + id + ": " + why);
    }
    if (!removal.garbage_error.empty()) {
        base::log::warn("cannot remove the objects no snapshot needs any more: " + removal.garbage_error);
    }
    return std::move(removal.removed);
}

}  // namespace stackup::txn
