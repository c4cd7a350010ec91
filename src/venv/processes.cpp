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
#include "venv/proc_entry.hpp"

namespace stackup::venv {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kCmdlineCap = 64 * 1024;
constexpr std::size_t kMaxWorkers = 8;

using detail::link_at;
using detail::mapped_under;
using detail::open_file_under;
using detail::read_at;
using detail::read_stat;
using detail::under;

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


std::string shortened(std::string text, std::size_t most) {
    if (text.size() > most) {
        text.resize(most - 3);
        text += "...";
    }
    return text;
}

// This process's ancestors (the shell that ran it, and up): their working directory or open
// files under the venv do not block a switch they asked for (a shell `cd`'d into the venv
// loads no code from it); their interpreter or mapped files still do.
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

// A use of `root` seen without reading maps or fds: (how, path), else nullopt. An ancestor's
// working directory does not count (ancestors_of_self).
std::optional<std::pair<const char*, std::string>> direct_use(const std::optional<std::string>& exe,
                                                              const std::string& a0,
                                                              const std::optional<std::string>& cwd,
                                                              const std::string& root, bool ancestor) {
    if (exe && under(*exe, root)) {
        return std::pair{"executable", *exe};
    }
    if (!a0.empty() && under(a0, root)) {
        return std::pair{"argv[0]", a0};
    }
    if (cwd && under(*cwd, root) && !ancestor) {
        return std::pair{"working directory", *cwd};
    }
    return std::nullopt;
}

// How the process in `dir` uses each of `roots` (nullopt where it does not), its entries read
// once for all of them; counts it as scanned in each scan (and as unreadable in each whose use
// could not be ruled out). A kernel thread or a zombie is skipped.
std::vector<std::optional<ProcessUse>> uses_of(int dir, const std::vector<std::string>& roots, bool ancestor,
                                               std::vector<ProcessScan>& scans) {
    std::vector<std::optional<ProcessUse>> uses(roots.size());
    int error = 0;
    auto cmdline = read_at(dir, "cmdline", kCmdlineCap, error);
    int exe_error = 0;
    auto exe = link_at(dir, "exe", exe_error);
    if (!cmdline || (cmdline->empty() && !exe && exe_error != EACCES)) {
        return uses;  // a kernel thread, a zombie, or gone
    }
    bool unreadable = !exe && exe_error == EACCES;
    int cwd_error = 0;
    auto cwd = link_at(dir, "cwd", cwd_error);
    const std::string a0 = argv0_path(cmdline->substr(0, cmdline->find('\0')), cwd);
    auto use = [&](std::size_t i, const char* how, const std::string& path) {
        uses[i] = ProcessUse{};
        uses[i]->command = *cmdline;  // argv, NUL-separated, until describe_process
        uses[i]->how = how;
        uses[i]->path = path;
    };
    std::vector<std::string> rest;    // the roots still unmatched, for maps and then open files
    std::vector<std::size_t> rest_at;
    for (std::size_t i = 0; i < roots.size(); ++i) {
        ++scans[i].scanned;
        if (auto direct = direct_use(exe, a0, cwd, roots[i], ancestor)) {
            use(i, direct->first, direct->second);
        } else {
            rest.push_back(roots[i]);
            rest_at.push_back(i);
        }
    }
    if (rest.empty()) {
        return uses;
    }
    int maps_error = 0;
    const auto mapped = mapped_under(dir, rest, maps_error);
    unreadable |= maps_error == EACCES;
    std::vector<std::string> fd_roots;
    std::vector<std::size_t> fd_at;
    for (std::size_t k = 0; k < rest.size(); ++k) {
        if (!mapped[k].empty()) {
            use(rest_at[k], "maps", mapped[k]);
        } else if (!ancestor) {
            fd_roots.push_back(rest[k]);
            fd_at.push_back(rest_at[k]);
        }
    }
    int fd_error = 0;
    const auto open = fd_roots.empty() ? std::vector<std::string>() : open_file_under(dir, fd_roots, fd_error);
    for (std::size_t k = 0; k < open.size(); ++k) {
        if (!open[k].empty()) {
            use(fd_at[k], "open file", open[k]);
        }
    }
    unreadable |= fd_error == EACCES;
    for (std::size_t i = 0; i < roots.size(); ++i) {
        scans[i].unreadable += !uses[i] && unreadable ? 1 : 0;
    }
    return uses;
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

namespace {

// The numeric entries of the /proc open as `d`, at most max_processes.
std::vector<int> pids_in(DIR* d) {
    std::vector<int> pids;
    while (dirent* e = ::readdir(d)) {
        if (std::all_of(e->d_name, e->d_name + std::strlen(e->d_name), [](char c) { return c >= '0' && c <= '9'; }) &&
            pids.size() < max_processes) {
            pids.push_back(std::atoi(e->d_name));
        }
    }
    return pids;
}

// What one scan looks for, and in what: the same for every worker.
struct ScanTarget {
    int proc_fd = -1;
    std::vector<std::string> roots;
    int self = 0;
    std::vector<int> ancestors;
    long btime = 0;
    long ticks = 0;
};

// Reading /proc is the kernel's work, one process at a time: the processes are shared out
// to a few threads, in small batches taken in turn; each thread fills its own part (a scan per root).
std::vector<std::vector<ProcessScan>> scan_in_parallel(const std::vector<int>& pids, const ScanTarget& t) {
    std::atomic<std::size_t> next{0};
    constexpr std::size_t kBatch = 32;
    auto work = [&](std::vector<ProcessScan>& part) {
        for (std::size_t begin; (begin = next.fetch_add(kBatch)) < pids.size();) {
            for (std::size_t i = begin; i < std::min(begin + kBatch, pids.size()); ++i) {
                const int pid = pids[i];
                base::UniqueFd dir(::openat(t.proc_fd, std::to_string(pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                if (pid == t.self || !dir) {
                    continue;  // ourselves, or gone
                }
                const bool ancestor = std::find(t.ancestors.begin(), t.ancestors.end(), pid) != t.ancestors.end();
                auto uses = uses_of(dir.get(), t.roots, ancestor, part);
                std::optional<ProcessUse> described;  // who the process is: read once, whichever roots it uses
                for (std::size_t r = 0; r < uses.size(); ++r) {
                    if (!uses[r]) {
                        continue;
                    }
                    if (!described) {
                        described = *uses[r];
                        described->pid = pid;
                        describe_process(dir.get(), t.btime, t.ticks, *described);
                    }
                    ProcessUse use = *described;
                    use.how = std::move(uses[r]->how);
                    use.path = std::move(uses[r]->path);
                    part[r].using_venv.push_back(std::move(use));
                }
            }
        }
    };
    const std::size_t workers =
        std::clamp<std::size_t>(std::min<std::size_t>(std::thread::hardware_concurrency(), kMaxWorkers), 1,
                                std::max<std::size_t>(1, pids.size() / 256));
    std::vector<std::vector<ProcessScan>> parts(workers, std::vector<ProcessScan>(t.roots.size()));
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) {
        threads.emplace_back(work, std::ref(parts[w]));
    }
    work(parts[0]);
    for (auto& thread : threads) {
        thread.join();
    }
    return parts;
}

}  // namespace

std::vector<ProcessScan> processes_using(const std::vector<fs::path>& trees, const fs::path& proc) {
    const auto started = std::chrono::steady_clock::now();
    std::vector<ProcessScan> scans(trees.size());
    ScanTarget target;
    std::vector<std::size_t> scan_of;  // target.roots[k] is trees[scan_of[k]]
    for (std::size_t i = 0; i < trees.size(); ++i) {
        std::error_code ec;
        auto root = fs::weakly_canonical(fs::absolute(trees[i]), ec).string();
        if (!root.empty() && root != "/") {  // "/" would be every process: not a venv
            target.roots.push_back(std::move(root));
            scan_of.push_back(i);
        }
    }
    target.self = ::getpid();
    target.ancestors = proc == "/proc" ? ancestors_of_self() : std::vector<int>();
    target.btime = proc == "/proc" ? boot_time() : 0;
    target.ticks = ::sysconf(_SC_CLK_TCK);
    DIR* d = target.roots.empty() ? nullptr : ::opendir(proc.c_str());
    if (d == nullptr) {
        return scans;
    }
    const std::vector<int> pids = pids_in(d);
    target.proc_fd = ::dirfd(d);
    for (auto& part : scan_in_parallel(pids, target)) {
        for (std::size_t k = 0; k < part.size(); ++k) {
            ProcessScan& scan = scans[scan_of[k]];
            scan.scanned += part[k].scanned;
            scan.unreadable += part[k].unreadable;
            std::move(part[k].using_venv.begin(), part[k].using_venv.end(), std::back_inserter(scan.using_venv));
        }
    }
    ::closedir(d);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    for (auto& scan : scans) {
        std::sort(scan.using_venv.begin(), scan.using_venv.end(),
                  [](const ProcessUse& a, const ProcessUse& b) { return a.pid < b.pid; });
        scan.seconds = seconds;
    }
    return scans;
}

ProcessScan processes_using(const fs::path& venv, const fs::path& proc) {
    return processes_using(std::vector<fs::path>{venv}, proc).front();
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
