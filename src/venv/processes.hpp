#pragma once
// The processes using a venv, read from /proc (no GPU, no privilege needed for one's own).
//
// A process uses the venv when any of these is under the venv's real path (a venv reached
// through a symlink is matched by its target): its executable (/proc/PID/exe), its argv[0]
// (resolved against its working directory: a venv's bin/python is a symlink to the base
// interpreter, so exe alone never names the venv), a file it maps (/proc/PID/maps: an
// extension module, libtorch.so), its working directory, or a file it holds open. A process
// whose /proc entries cannot be read (another user's, without privilege) is counted, never
// silently passed over. Bounded: at most max_processes entries of /proc, 64 KiB of cmdline,
// 2^20 lines of maps and 65,536 fds per process.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace stackup::venv {

struct ProcessUse {
    int pid = 0;
    std::string command;   // argv joined by spaces, credentials redacted, at most 300 characters
    std::string user;      // the owner's name, else its uid
    std::string started;   // UTC, ISO 8601, to the second
    std::string unit;      // the systemd unit from /proc/PID/cgroup ("sglang.service"), "" when none
    std::string how;       // "executable", "argv[0]", "maps", "working directory", "open file"
    std::string path;      // the path under the venv that showed it
};

struct ProcessScan {
    std::vector<ProcessUse> using_venv;   // by pid
    std::size_t scanned = 0;              // processes looked at
    std::size_t unreadable = 0;           // processes whose entries could not be read (not ours)
    double seconds = 0;
};

inline constexpr std::size_t max_processes = 1 << 16;

// The processes other than this one that use `venv`. `proc`: /proc.
ProcessScan processes_using(const std::filesystem::path& venv, const std::filesystem::path& proc = "/proc");
// The same for several trees in one walk of /proc (each process's entries read once for all):
// a scan per tree, in their order (`status` asks for the venv and the old generations' store).
std::vector<ProcessScan> processes_using(const std::vector<std::filesystem::path>& trees,
                                         const std::filesystem::path& proc = "/proc");

// "12345 (python -m sglang.launch_server ..., user ml, unit sglang.service, since ...): maps .../x.so"
std::string describe(const ProcessUse& p);

// The systemd unit in a /proc/PID/cgroup text: the last path segment ending in .service or
// .scope under system.slice / user.slice ("0::/system.slice/sglang.service" -> "sglang.service").
std::string unit_of_cgroup(const std::string& cgroup);

}  // namespace stackup::venv
