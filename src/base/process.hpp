#pragma once
// Child processes: argv only (never a shell), an explicit environment, stdin
// from /dev/null, stdout+stderr merged into one pipe and streamed by line, the
// child in its own process group and killed if we die. Boost.Process is used
// only in process.cpp.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::base {

using Environment = std::map<std::string, std::string>;

// The caller's environment as a map (the starting point for building a child's).
Environment current_environment();

struct ProcessSpec {
    std::vector<std::string> argv;       // argv[0] is a path, or a name looked up in env's PATH
    Environment env;                     // the child's whole environment
    std::optional<std::filesystem::path> cwd;
};

struct ProcessResult {
    std::optional<int> exit_code;        // set when the child exited
    std::optional<int> signal;           // set when a signal killed it
    std::string output;                  // merged stdout+stderr
    std::string start_error;             // set when the child could not be started

    bool ok() const { return exit_code && *exit_code == 0; }
    // "exit status 2", "killed by signal 9 (Killed)", "could not start: ..."
    std::string describe() const;
};

using LineSink = std::function<void(std::string_view line)>;

// Runs to completion, calling `on_line` for every output line as it arrives.
// Never throws for a child that fails; a child that cannot start is reported
// in start_error.
ProcessResult run_process(const ProcessSpec& spec, const LineSink& on_line = {});

// While one lives, every child run_process starts inherits `fd` (the same open
// file description), past our close-on-exec sweep: a child that outlives us then
// keeps holding what the fd holds (the venv lock). Move-only; scoped, not global state.
class InheritedFd {
public:
    explicit InheritedFd(int fd);
    InheritedFd(InheritedFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    InheritedFd& operator=(InheritedFd&&) = delete;
    InheritedFd(const InheritedFd&) = delete;
    ~InheritedFd();

private:
    int fd_;
};

// Finds `name` in the PATH of `env` ("" when absent); a name with '/' is returned as is.
std::string find_program(const std::string& name, const Environment& env);

}  // namespace stackup::base
