#include "txn/running.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

venv::ProcessScan processes_at_switch(const Options& options) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::seconds(options.switch_running ? 0 : options.wait_running_s);
    for (;;) {
        auto scan = venv::processes_using(options.venv);
        if (scan.using_venv.empty() || Clock::now() >= deadline || base::interrupts::received() != 0) {
            return scan;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

std::string describe_running(const venv::ProcessScan& scan, const Options& options, const std::string& then) {
    std::string out = std::to_string(scan.using_venv.size()) + " process(es) use " + options.venv.string() + ":";
    std::vector<std::string> units;
    for (const auto& p : scan.using_venv) {
        out += "\n    " + venv::describe(p);
        if (!p.unit.empty() && std::find(units.begin(), units.end(), p.unit) == units.end()) {
            units.push_back(p.unit);
        }
    }
    if (scan.unreadable > 0) {
        out += "\n    (and " + std::to_string(scan.unreadable) + " process(es) could not be read: another user's, or protected)";
    }
    out += "\n  a switch under them would mix the old code they loaded with the new files they load next;";
    for (const auto& u : units) {
        out += "\n  for " + u + ": systemctl stop " + u + " && " + then + " --wait-running 60 && systemctl start " + u;
    }
    out += "\n  else stop them and run: " + then +
           "\n  (--wait-running SECONDS waits for them to end; --switch-running switches anyway, naming them for a restart)";
    return out;
}

venv::ProcessScan require_unused(const Options& options, const std::string& what, const std::string& again) {
    auto scan = processes_at_switch(options);
    if (!scan.using_venv.empty() && !options.switch_running) {
        auto message = what + ": " + describe_running(scan, options, again);
        throw RunningError(std::move(message), std::move(scan));
    }
    return scan;
}

std::vector<OldCodeProcess> processes_on_old_generations(const std::filesystem::path& state_dir,
                                                          std::size_t* unreadable) {
    std::vector<OldCodeProcess> out;
    std::error_code ec;
    const auto snapshots = std::filesystem::canonical(state_dir / "snapshots", ec);
    if (ec) {
        return out;  // no generations yet
    }
    auto scan = venv::processes_using(snapshots);
    if (unreadable != nullptr) {
        *unreadable = scan.unreadable;
    }
    for (auto& use : scan.using_venv) {
        auto rel = std::filesystem::path(use.path).lexically_relative(snapshots);
        std::string id = rel.empty() ? "" : rel.begin()->string();
        out.push_back({std::move(use), id.empty() || id[0] == '.' ? "" : id});
    }
    return out;
}

}  // namespace stackup::txn
