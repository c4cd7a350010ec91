#include "base/process.hpp"

#include "base/interrupt.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <system_error>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

extern char** environ;

namespace stackup::base {
namespace bp = boost::process;
namespace {

// The fds every child inherits (InheritedFd), copied into each child's setup before fork.
std::mutex g_inherited_mutex;
std::vector<int> g_inherited;

std::vector<int> inherited_fds() {
    std::lock_guard<std::mutex> guard(g_inherited_mutex);
    return g_inherited;
}

// Marks every fd above stderr close-on-exec, so none of ours leaks into the
// child (Boost 1.74's limit_handles breaks a merged stdout/stderr pipe).
void keep_our_fds_out() {
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) {
        return;
    }
    long max_fd = ::sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); ++fd) {
        int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0) {
            ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
}

// In the child, before exec: its own process group (so a terminal's ^C reaches
// only us, and we forward it), and death when stackup dies, so no orphaned
// installer goes on writing into the venv.
struct ChildSetup : bp::extend::handler {
    pid_t parent = ::getpid();
    std::vector<int> inherit = inherited_fds();
    template <typename Executor>
    void on_exec_setup(Executor&) const {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::signal(SIGPIPE, SIG_DFL);  // an ignored SIGPIPE of ours would survive exec
        keep_our_fds_out();
        for (int fd : inherit) {
            ::fcntl(fd, F_SETFD, 0);  // only in the child: ours stays close-on-exec
        }
        if (::getppid() != parent) {
            ::_exit(127);  // the parent died before prctl took effect
        }
    }
};

// The child's group receives SIGINT/SIGTERM/SIGHUP while it runs (base/interrupt.hpp).
class SignalForwarding {
public:
    explicit SignalForwarding(pid_t pgid) {
        interrupts::catch_signals();
        interrupts::set_child_group(pgid);
    }
    ~SignalForwarding() { interrupts::set_child_group(0); }
    SignalForwarding(const SignalForwarding&) = delete;
    SignalForwarding& operator=(const SignalForwarding&) = delete;
};

std::string path_of(const Environment& env) {
    auto it = env.find("PATH");
    return it == env.end() ? std::string() : it->second;
}

}  // namespace

InheritedFd::InheritedFd(int fd) : fd_(fd) {
    std::lock_guard<std::mutex> guard(g_inherited_mutex);
    g_inherited.push_back(fd);
}

InheritedFd::~InheritedFd() {
    if (fd_ < 0) {
        return;
    }
    std::lock_guard<std::mutex> guard(g_inherited_mutex);
    auto it = std::find(g_inherited.begin(), g_inherited.end(), fd_);
    if (it != g_inherited.end()) {
        g_inherited.erase(it);
    }
}

Environment current_environment() {
    Environment env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        auto eq = entry.find('=');
        if (eq != std::string_view::npos) {
            env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
        }
    }
    return env;
}

std::string find_program(const std::string& name, const Environment& env) {
    if (name.find('/') != std::string::npos) {
        return name;
    }
    std::string path = path_of(env);
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!dir.empty()) {
            std::string candidate = dir + "/" + name;
            if (::access(candidate.c_str(), X_OK) == 0) {
                return candidate;
            }
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return {};
}

std::string ProcessResult::describe() const {
    if (!start_error.empty()) {
        return "could not start: " + start_error;
    }
    if (signal) {
        return "killed by signal " + std::to_string(*signal) + " (" + ::strsignal(*signal) + ")";
    }
    if (exit_code) {
        return "exit status " + std::to_string(*exit_code);
    }
    return "unknown status";
}

ProcessResult run_process(const ProcessSpec& spec, const LineSink& on_line) {
    ProcessResult result;
    if (spec.argv.empty()) {
        result.start_error = "empty command";
        return result;
    }
    std::string exe = find_program(spec.argv[0], spec.env);
    if (exe.empty()) {
        result.start_error = spec.argv[0] + ": not found on PATH";
        return result;
    }
    bp::environment env;
    for (const auto& [key, value] : spec.env) {
        // Not env[key]: Boost 1.74's find() memcmps key= against shorter entries, reading
        // past their end (AddressSanitizer: heap-buffer-overflow); set() checks sizes first.
        env.set(key, value);
    }
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    auto cwd = spec.cwd.value_or(std::filesystem::current_path());

    bp::ipstream out;
    std::error_code ec;
    bp::child child(bp::exe = exe, bp::args = args, env, bp::start_dir = cwd.string(),
                    bp::std_in < bp::null, (bp::std_out & bp::std_err) > out, ChildSetup{}, ec);
    if (ec) {
        result.start_error = exe + ": " + ec.message();
        return result;
    }
    {
        SignalForwarding forwarding(child.id());
        std::string line;
        while (std::getline(out, line)) {
            if (on_line) {
                on_line(line);
            }
            result.output += line;
            result.output += '\n';
        }
        child.wait(ec);
    }
    int status = child.native_exit_code();
    if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    }
    return result;
}

}  // namespace stackup::base
