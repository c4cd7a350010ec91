#include "venv/processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <thread>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/fs.hpp"
#include "base/url.hpp"

namespace stackup::venv {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kCmdlineCap = 64 * 1024;
constexpr std::size_t kMapsLines = 1 << 20;
constexpr std::size_t kFdCap = 1 << 16;
constexpr std::size_t kMaxWorkers = 8;

// Every entry of one /proc/PID is read relative to its directory's fd: the pid is looked up
// once, not once per file (that lookup was most of a scan's time).
std::optional<std::string> link_at(int dir, const char* name, int& error) {
    char buf[4096];
    ssize_t n = ::readlinkat(dir, name, buf, sizeof buf);
    if (n < 0) {
        error = errno;
        return std::nullopt;
    }
    return std::string(buf, static_cast<std::size_t>(n));
}

// One read(2), again after EINTR: bytes read, 0 at the end, -1 with `error` set.
ssize_t read_block(int fd, char* buf, std::size_t size, int& error) {
    for (;;) {
        ssize_t n = ::read(fd, buf, size);
        if (n >= 0 || errno != EINTR) {
            if (n < 0) {
                error = errno;
            }
            return n;
        }
    }
}

// Reads `name` under `dir` up to `cap` bytes; over it, a placeholder. nullopt with `error` set
// when it cannot be opened or read.
std::optional<std::string> read_at(int dir, const char* name, std::size_t cap, int& error) {
    base::UniqueFd fd(::openat(dir, name, O_RDONLY | O_CLOEXEC));
    if (!fd) {
        error = errno;
        return std::nullopt;
    }
    std::string out;
    char buf[1 << 14];
    for (;;) {
        const ssize_t n = read_block(fd.get(), buf, sizeof buf, error);
        if (n < 0) {
            return std::nullopt;
        }
        if (n == 0) {
            return out;
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > cap) {
            return std::string("(over ") + std::to_string(cap) + " bytes)";
        }
    }
}

bool under(std::string_view path, std::string_view root) {
    return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                            path[root.size()] == '/');
}

std::string user_name(uid_t uid) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::string buf(4096, '\0');
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
        return found->pw_name;
    }
    return std::to_string(uid);
}

long boot_time() {
    std::ifstream in("/proc/stat");
    std::string key;
    long value = 0;
    while (in >> key) {
        if (key == "btime" && (in >> value)) {
            return value;
        }
        in.ignore(1 << 20, '\n');
    }
    return 0;
}

struct Stat {
    int ppid = 0;
    unsigned long long start_ticks = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22) ..."; comm may hold spaces and ')'.
std::optional<Stat> read_stat(int dir) {
    int error = 0;
    auto text = read_at(dir, "stat", 4096, error);
    if (!text) {
        return std::nullopt;
    }
    auto close = text->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream in(text->substr(close + 1));
    std::string field;
    Stat s;
    for (int i = 3; in >> field; ++i) {
        if (i == 4) {
            s.ppid = std::atoi(field.c_str());
        } else if (i == 22) {
            s.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
            return s;
        }
    }
    return std::nullopt;
}

std::string utc(long seconds) {
    std::time_t t = seconds;
    std::tm tm {};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::vector<std::string> split_nul(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\0', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// argv[0] as a path: relative ones against the process's cwd; the directories resolved, the
// name not (bin/python is a link to the base interpreter, which names no venv).
std::string argv0_path(const std::string& argv0, const std::optional<std::string>& cwd) {
    if (argv0.find('/') == std::string::npos) {
        return {};
    }
    fs::path p = argv0;
    if (p.is_relative()) {
        if (!cwd) {
            return {};
        }
        p = fs::path(*cwd) / p;
    }
    std::error_code ec;
    fs::path dir = fs::weakly_canonical(p.parent_path(), ec);
    return ec ? p.lexically_normal().string() : (dir / p.filename()).string();
}

// The path a mapped file was opened by, without " (deleted)".
std::string_view without_deleted(std::string_view path) {
    constexpr std::string_view deleted = " (deleted)";
    if (path.size() > deleted.size() && path.substr(path.size() - deleted.size()) == deleted) {
        path.remove_suffix(deleted.size());
    }
    return path;
}

// The first mapped file under `root` in /proc/PID/maps ("addr perms off dev inode   path"),
// read in blocks (a torch process maps thousands of files), at most kMapsLines lines.
std::string mapped_under(int dir, const std::string& root, int& error) {
    base::UniqueFd fd(::openat(dir, "maps", O_RDONLY | O_CLOEXEC));
    if (!fd) {
        error = errno;
        return {};
    }
    std::string pending;  // a line cut by the end of a block
    char buf[1 << 16];
    std::size_t lines = 0;
    auto match = [&](std::string_view line) -> std::string {
        auto slash = line.find('/');
        if (slash == std::string_view::npos) {
            return {};
        }
        std::string_view path = without_deleted(line.substr(slash));
        return under(path, root) ? std::string(path) : std::string();
    };
    for (;;) {
        const ssize_t n = read_block(fd.get(), buf, sizeof buf, error);
        if (n < 0) {
            return {};
        }
        if (n == 0) {
            return pending.empty() ? std::string() : match(pending);
        }
        std::string_view block(buf, static_cast<std::size_t>(n));
        while (!block.empty()) {
            auto nl = block.find('\n');
            if (nl == std::string_view::npos) {
                pending.append(block);
                break;
            }
            std::string_view line = block.substr(0, nl);
            block.remove_prefix(nl + 1);
            std::string found;
            if (!pending.empty()) {
                pending.append(line);
                found = match(pending);
                pending.clear();
            } else {
                found = match(line);
            }
            if (!found.empty()) {
                return found;
            }
            if (++lines >= kMapsLines) {
                return {};
            }
        }
    }
}

// This process's ancestors (the shell that ran it, and up): their working directory or open
// files under the venv do not block a switch they asked for (a shell `cd`'d into the venv
// loads no code from it); their interpreter or mapped files still do.
std::vector<int> ancestors_of_self();

std::string open_file_under(int dir, const std::string& root, int& error) {
    int fd_dir = ::openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = fd_dir < 0 ? nullptr : ::fdopendir(fd_dir);
    if (d == nullptr) {
        error = errno;
        if (fd_dir >= 0) {
            ::close(fd_dir);
        }
        return {};
    }
    std::string found;
    std::size_t seen = 0;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.' || ++seen > kFdCap) {
            continue;
        }
        int ignored = 0;
        auto target = link_at(fd_dir, e->d_name, ignored);
        if (target && under(*target, root)) {
            found = *target;
            break;
        }
    }
    ::closedir(d);  // closes fd_dir
    return found;
}

std::string shortened(std::string text, std::size_t most) {
    if (text.size() > most) {
        text.resize(most - 3);
        text += "...";
    }
    return text;
}

std::vector<int> ancestors_of_self() {
    std::vector<int> out;
    for (int pid = ::getppid(); pid > 1 && out.size() < 64; ) {
        out.push_back(pid);
        base::UniqueFd dir(::open(("/proc/" + std::to_string(pid)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto stat = dir ? read_stat(dir.get()) : std::nullopt;
        if (!stat) {
            break;
        }
        pid = stat->ppid;
    }
    return out;
}

// How the process in `dir` uses the venv at `root`, if it does; counts it as scanned (and as
// unreadable when its entries could not be read). A kernel thread or a zombie is skipped.
std::optional<ProcessUse> use_of(int dir, const std::string& root, bool ancestor, ProcessScan& scan) {
    int error = 0;
    auto cmdline = read_at(dir, "cmdline", kCmdlineCap, error);
    int exe_error = 0;
    auto exe = link_at(dir, "exe", exe_error);
    if (!cmdline || (cmdline->empty() && !exe && exe_error != EACCES)) {
        return std::nullopt;  // a kernel thread, a zombie, or gone
    }
    ++scan.scanned;
    bool unreadable = !exe && exe_error == EACCES;
    ProcessUse use;
    int cwd_error = 0;
    auto cwd = link_at(dir, "cwd", cwd_error);
    use.command = *cmdline;  // argv, NUL-separated, until describe_process
    auto a0_end = cmdline->find('\0');
    const std::string argv0 = cmdline->substr(0, a0_end);
    if (exe && under(*exe, root)) {
        use.how = "executable", use.path = *exe;
    } else if (auto a0 = argv0_path(argv0, cwd); !a0.empty() && under(a0, root)) {
        use.how = "argv[0]", use.path = a0;
    } else if (cwd && under(*cwd, root) && !ancestor) {
        use.how = "working directory", use.path = *cwd;
    } else {
        int maps_error = 0;
        if (auto path = mapped_under(dir, root, maps_error); !path.empty()) {
            use.how = "maps", use.path = path;
        }
        unreadable |= maps_error == EACCES;
        if (use.how.empty() && !ancestor) {
            int fd_error = 0;
            if (auto path = open_file_under(dir, root, fd_error); !path.empty()) {
                use.how = "open file", use.path = path;
            }
            unreadable |= fd_error == EACCES;
        }
    }
    if (use.how.empty()) {
        scan.unreadable += unreadable ? 1 : 0;
        return std::nullopt;
    }
    return use;
}

// Fills what is said of a process found using the venv: its command (redacted), user, start, unit.
void describe_process(int dir, long btime, long ticks, ProcessUse& use) {
    std::string command;
    for (const auto& a : split_nul(use.command)) {
        command += (command.empty() ? "" : " ") + a;
    }
    use.command = shortened(base::redact(command), 300);
    struct stat st {};
    use.user = ::fstat(dir, &st) == 0 ? user_name(st.st_uid) : "?";
    auto stat = read_stat(dir);
    if (stat && btime > 0 && ticks > 0) {
        use.started = utc(btime + static_cast<long>(stat->start_ticks / static_cast<unsigned long long>(ticks)));
    }
    int cg_error = 0;
    if (auto cg = read_at(dir, "cgroup", 64 * 1024, cg_error)) {
        use.unit = unit_of_cgroup(*cg);
    }
}

}  // namespace

std::string unit_of_cgroup(const std::string& cgroup) {
    std::istringstream in(cgroup);
    std::string line;
    std::string unit;
    while (std::getline(in, line)) {
        auto colon = line.rfind(':');
        std::string path = colon == std::string::npos ? line : line.substr(colon + 1);
        std::size_t start = 0;
        while (start <= path.size()) {
            auto end = path.find('/', start);
            std::string part = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
            auto ends = [&](std::string_view s) {
                return part.size() > s.size() && part.compare(part.size() - s.size(), s.size(), s) == 0;
            };
            // user@1000.service is the user's manager, not the unit that runs the process.
            if ((ends(".service") || ends(".scope")) && part.rfind("user@", 0) != 0) {
                unit = part;
            }
            if (end == std::string::npos) {
                break;
            }
            start = end + 1;
        }
        if (!unit.empty()) {
            return unit;
        }
    }
    return unit;
}

ProcessScan processes_using(const fs::path& venv, const fs::path& proc) {
    const auto started = std::chrono::steady_clock::now();
    ProcessScan scan;
    std::error_code ec;
    const std::string root = fs::weakly_canonical(fs::absolute(venv), ec).string();
    const int self = ::getpid();
    const auto ancestors = proc == "/proc" ? ancestors_of_self() : std::vector<int>();
    const long btime = proc == "/proc" ? boot_time() : 0;
    const long ticks = ::sysconf(_SC_CLK_TCK);
    DIR* d = ::opendir(proc.c_str());
    if (d == nullptr || root.empty() || root == "/") {
        if (d != nullptr) {
            ::closedir(d);
        }
        return scan;
    }
    std::vector<int> pids;
    while (dirent* e = ::readdir(d)) {
        if (std::all_of(e->d_name, e->d_name + std::strlen(e->d_name), [](char c) { return c >= '0' && c <= '9'; }) &&
            pids.size() < max_processes) {
            pids.push_back(std::atoi(e->d_name));
        }
    }
    // Reading /proc is the kernel's work, one process at a time: the processes are shared out
    // to a few threads, in small batches taken in turn.
    const int proc_fd = ::dirfd(d);
    std::atomic<std::size_t> next{0};
    constexpr std::size_t kBatch = 32;
    auto work = [&](ProcessScan& part) {
        for (std::size_t begin; (begin = next.fetch_add(kBatch)) < pids.size();) {
            for (std::size_t i = begin; i < std::min(begin + kBatch, pids.size()); ++i) {
                const int pid = pids[i];
                base::UniqueFd dir(::openat(proc_fd, std::to_string(pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                if (pid == self || !dir) {
                    continue;  // ourselves, or gone
                }
                const bool ancestor = std::find(ancestors.begin(), ancestors.end(), pid) != ancestors.end();
                if (auto use = use_of(dir.get(), root, ancestor, part)) {
                    use->pid = pid;
                    describe_process(dir.get(), btime, ticks, *use);
                    part.using_venv.push_back(std::move(*use));
                }
            }
        }
    };
    const std::size_t workers =
        std::clamp<std::size_t>(std::min<std::size_t>(std::thread::hardware_concurrency(), kMaxWorkers), 1,
                                std::max<std::size_t>(1, pids.size() / 256));
    std::vector<ProcessScan> parts(workers);
    {
        std::vector<std::thread> threads;
        for (std::size_t w = 1; w < workers; ++w) {
            threads.emplace_back(work, std::ref(parts[w]));
        }
        work(parts[0]);
        for (auto& t : threads) {
            t.join();
        }
    }
    for (auto& part : parts) {
        scan.scanned += part.scanned;
        scan.unreadable += part.unreadable;
        std::move(part.using_venv.begin(), part.using_venv.end(), std::back_inserter(scan.using_venv));
    }
    ::closedir(d);
    std::sort(scan.using_venv.begin(), scan.using_venv.end(),
              [](const ProcessUse& a, const ProcessUse& b) { return a.pid < b.pid; });
    scan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return scan;
}

std::string describe(const ProcessUse& p) {
    std::string out = std::to_string(p.pid) + " (" + p.command + "; user " + p.user;
    if (!p.unit.empty()) {
        out += ", unit " + p.unit;
    }
    if (!p.started.empty()) {
        out += ", since " + p.started;
    }
    return out + "): " + p.how + " " + p.path;
}

}  // namespace stackup::venv
