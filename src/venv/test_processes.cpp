#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <doctest/doctest.h>

#include "temp_dir.hpp"
#include "venv/processes.hpp"

namespace fs = std::filesystem;
using namespace stackup::venv;

namespace {

// A process that is not ours (our child's child), started by `script` in sh; its group killed at the end.
class Stranger {
public:
    explicit Stranger(const std::string& script) {
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setpgid(0, 0);  // its own group: the destructor ends the grandchild too
            ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    ~Stranger() {
        ::kill(-pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }
    Stranger(const Stranger&) = delete;
    Stranger& operator=(const Stranger&) = delete;

private:
    pid_t pid_ = -1;
};

const ProcessUse* find_use(const ProcessScan& scan, const std::string& how) {
    for (const auto& p : scan.using_venv) {
        if (p.how == how) {
            return &p;
        }
    }
    return nullptr;
}

// Polls (a hang guard only) until a process using `venv` shows `how`.
ProcessScan wait_for_use(const fs::path& venv, const std::string& how) {
    ProcessScan scan;
    for (int i = 0; i < 200; ++i) {
        scan = processes_using(venv);
        if (find_use(scan, how)) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return scan;
}

}  // namespace

TEST_SUITE("venv") {
    TEST_CASE("unit_of_cgroup: the systemd unit a process runs in") {
        CHECK(unit_of_cgroup("0::/system.slice/sglang.service\n") == "sglang.service");
        CHECK(unit_of_cgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter.service\n") ==
              "jupyter.service");
        CHECK(unit_of_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n") == "session-3.scope");
        CHECK(unit_of_cgroup("12:pids:/system.slice/vllm.service\n1:name=systemd:/system.slice/vllm.service\n") ==
              "vllm.service");
        CHECK(unit_of_cgroup("0::/\n") == "");
        CHECK(unit_of_cgroup("0::/docker/0123abcd\n") == "");
        CHECK(unit_of_cgroup("") == "");
    }

    TEST_CASE("processes_using: working directory, argv[0], maps and open files under the venv; not elsewhere") {
        stackup::testing::TempDir dir;
        const fs::path venv = dir / "venv";
        fs::create_directories(venv / "bin");
        fs::create_directories(dir / "elsewhere");
        fs::create_symlink("/bin/sleep", venv / "bin" / "sleeper");  // as bin/python links the base python
        dir.write("venv/lib/blob.so", std::string(8192, 'x'));
        CHECK(processes_using(venv).using_venv.empty());
        {
            Stranger s("(cd '" + venv.string() + "' && exec /bin/sleep 30) & wait");
            auto scan = wait_for_use(venv, "working directory");
            const auto* use = find_use(scan, "working directory");
            REQUIRE(use != nullptr);
            CHECK(use->path == fs::canonical(venv).string());
            CHECK(use->command == "/bin/sleep 30");
            CHECK_FALSE(use->user.empty());
            CHECK(use->started.size() == 20);
            CHECK(describe(*use).find(std::to_string(use->pid) + " (/bin/sleep 30; user ") == 0);
            CHECK(scan.scanned > 0);
        }
        {
            Stranger s("(cd '" + (dir / "elsewhere").string() + "' && exec '" + (venv / "bin" / "sleeper").string() +
                       "' 30) & wait");
            auto scan = wait_for_use(venv, "argv[0]");
            const auto* use = find_use(scan, "argv[0]");
            REQUIRE(use != nullptr);
            CHECK(use->path == (fs::canonical(venv) / "bin" / "sleeper").string());
        }
        {
            Stranger s("(cd / && exec 3<'" + (venv / "lib" / "blob.so").string() + "' && exec /bin/sleep 30) & wait");
            auto scan = wait_for_use(venv, "open file");
            REQUIRE(find_use(scan, "open file") != nullptr);
            CHECK(find_use(scan, "open file")->path == (fs::canonical(venv) / "lib" / "blob.so").string());
        }
        {
            const std::string py = "import mmap, os, time; f = open('" + (venv / "lib" / "blob.so").string() +
                                   "', 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); f.close(); "
                                   "os.chdir('/'); time.sleep(30)";
            Stranger s("(exec python3 -c \"" + py + "\") & wait");
            auto scan = wait_for_use(venv, "maps");
            REQUIRE(find_use(scan, "maps") != nullptr);
            CHECK(find_use(scan, "maps")->path == (fs::canonical(venv) / "lib" / "blob.so").string());
        }
        {
            // Through a symlink: the link's target is the venv that is matched.
            fs::create_symlink(venv, dir / "link");
            Stranger s("(cd '" + venv.string() + "' && exec /bin/sleep 30) & wait");
            auto scan = wait_for_use(dir / "link", "working directory");
            CHECK(find_use(scan, "working directory") != nullptr);
        }
    }

    TEST_CASE("processes_using several trees: one walk of /proc, each tree's own use, as one scan each would find") {
        stackup::testing::TempDir dir;
        const fs::path venv = dir / "venv";
        const fs::path store = dir / "store";
        fs::create_directories(venv / "lib");
        fs::create_directories(store / "old" / "lib");
        dir.write("venv/lib/new.so", std::string(8192, 'n'));
        dir.write("store/old/lib/old.so", std::string(8192, 'o'));
        // Maps the old tree's file and holds the venv's open: a server still on a replaced generation.
        const std::string py = "import mmap, os, time; f = open('" + (store / "old" / "lib" / "old.so").string() +
                               "', 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); f.close(); "
                               "g = open('" + (venv / "lib" / "new.so").string() + "', 'rb'); os.chdir('/'); "
                               "time.sleep(30)";
        Stranger s("(exec python3 -c \"" + py + "\") & wait");
        std::vector<ProcessScan> scans;
        for (int i = 0; i < 200; ++i) {
            scans = processes_using(std::vector<fs::path>{venv, store, "/"});
            if (find_use(scans[0], "open file") && find_use(scans[1], "maps")) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        REQUIRE(scans.size() == 3);
        const auto* in_venv = find_use(scans[0], "open file");
        const auto* in_store = find_use(scans[1], "maps");
        REQUIRE(in_venv != nullptr);
        REQUIRE(in_store != nullptr);
        CHECK(in_venv->pid == in_store->pid);
        CHECK(in_venv->path == (fs::canonical(venv) / "lib" / "new.so").string());
        CHECK(in_store->path == (fs::canonical(store) / "old" / "lib" / "old.so").string());
        CHECK(in_venv->command == in_store->command);
        CHECK(in_venv->started == in_store->started);
        CHECK(scans[0].scanned == scans[1].scanned);
        CHECK(scans[2].scanned == 0);  // "/" is no venv: never scanned for
        CHECK(scans[2].using_venv.empty());
        // The same answers as a walk per tree.
        const ProcessScan store_alone = processes_using(store);
        const auto* alone = find_use(store_alone, "maps");
        REQUIRE(alone != nullptr);
        CHECK(alone->path == in_store->path);
    }
}

// The driver of tests/bench/processes_bench.py: skipped unless run by name with --no-skip.
// Scans /proc for $STACKUP_BENCH_VENV $STACKUP_BENCH_RUNS times and prints each scan's figures.
TEST_CASE("processes bench driver" * doctest::skip()) {
    const char* venv = std::getenv("STACKUP_BENCH_VENV");
    const char* runs = std::getenv("STACKUP_BENCH_RUNS");
    REQUIRE(venv != nullptr);
    for (int i = 0, n = runs != nullptr ? std::atoi(runs) : 5; i < n; ++i) {
        const auto scan = processes_using(venv);
        // The floor beside it: only reading every process's /proc/PID/maps, on one thread.
        const auto start = std::chrono::steady_clock::now();
        for (const auto& e : fs::directory_iterator("/proc")) {
            std::FILE* f = std::fopen((e.path() / "maps").c_str(), "r");
            char buf[1 << 16];
            while (f != nullptr && std::fread(buf, 1, sizeof buf, f) > 0) {
            }
            if (f != nullptr) {
                std::fclose(f);
            }
        }
        const double floor = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("scan scanned=%zu using=%zu unreadable=%zu seconds=%.6f maps_floor=%.6f\n", scan.scanned,
                    scan.using_venv.size(), scan.unreadable, scan.seconds, floor);
    }
}
