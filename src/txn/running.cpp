#include "txn/running.hpp"

#include <chrono>
#include <thread>

#include "base/error.hpp"
#include "base/interrupt.hpp"

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

venv::ProcessScan require_unused(const Options& options, const std::string& what, NextCommand::Verb verb,
                                 std::vector<std::string> args) {
    auto scan = processes_at_switch(options);
    if (!scan.using_venv.empty() && !options.switch_running) {
        throw RunningError(what, std::move(scan), {verb, options.venv, options.state_dir, std::move(args)});
    }
    return scan;
}

namespace {

// The uses of <state>/snapshots found by `scan`, each with the generation whose tree it is in.
std::vector<OldCodeProcess> by_generation(const std::filesystem::path& snapshots, venv::ProcessScan scan) {
    std::vector<OldCodeProcess> out;
    for (auto& use : scan.using_venv) {
        auto rel = std::filesystem::path(use.path).lexically_relative(snapshots);
        std::string id = rel.empty() ? "" : rel.begin()->string();
        out.push_back({std::move(use), id.empty() || id[0] == '.' ? "" : id});
    }
    return out;
}

}  // namespace

CodeInUse code_in_use(const std::filesystem::path& venv, const std::filesystem::path& state_dir) {
    std::error_code ec;
    const auto snapshots = std::filesystem::canonical(state_dir / "snapshots", ec);
    if (ec) {  // no generations yet
        return {venv::processes_using(venv), {}, 0};
    }
    auto scans = venv::processes_using(std::vector<std::filesystem::path>{venv, snapshots});
    CodeInUse out{std::move(scans[0]), {}, scans[1].unreadable};
    out.old_code = by_generation(snapshots, std::move(scans[1]));
    return out;
}

}  // namespace stackup::txn
