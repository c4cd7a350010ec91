#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/fs.hpp"
#include "snapshot/store.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;

namespace {

// Files in different directories that tell the trees apart.
const std::vector<std::string> kProbes = {"marker", std::string(kSitePackages) + "/torch/version.py",
                                          "bin/activate", "share/deep/er/file.txt"};

void write_tree_state(const fs::path& venv, const std::string& state) {
    for (const auto& rel : kProbes) {
        fs::remove(venv / rel);  // a new inode, as uv writes: a hard-link snapshot keeps the old one
        write_bytes(venv / rel, state);
    }
}

// Whether the venv's path still names the directory open as `dir`.
bool still_named(int dir, const fs::path& venv) {
    struct stat opened {};
    struct stat named {};
    return ::fstat(dir, &opened) == 0 && ::stat(venv.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
           opened.st_dev == named.st_dev;
}

// Reads every probe through one open of the venv's path: a consistent view of
// whichever tree the path named at that moment. "" when a read failed, "torn"
// when the path moved to another tree meanwhile (the swap itself: the tree
// read is being disposed of, so it proves nothing either way).
std::string read_view(const fs::path& venv) {
    const int dir = ::open(venv.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return "";
    }
    std::string seen;
    for (const auto& rel : kProbes) {
        const int fd = ::openat(dir, rel.c_str(), O_RDONLY | O_CLOEXEC);
        char buf[64];
        const ssize_t n = fd < 0 ? -1 : ::read(fd, buf, sizeof buf);
        if (fd >= 0) {
            ::close(fd);
        }
        if (n <= 0) {
            seen = "";
            break;
        }
        const std::string content(buf, static_cast<std::size_t>(n));
        seen = (seen.empty() || seen == content) ? content : "mixed";
    }
    if (!still_named(dir, venv) && ::access(venv.c_str(), F_OK) == 0) {
        seen = "torn";
    }
    ::close(dir);
    return seen;
}

// Reads the venv in a loop while a restore runs; records what a reader must never see.
struct Watcher {
    fs::path venv;
    std::atomic<bool> stop{false};
    std::atomic<bool> give_up{false};  // the restore failed: no restored tree will come
    std::atomic<int> old_views{0};
    std::atomic<int> restored_views{0};
    std::atomic<int> torn_views{0};
    std::atomic<int> problem_count{0};
    std::vector<std::string> problems;  // read by the test only after join

    void run() {
        bool restored_seen = false;
        while (!give_up && (!stop || !restored_seen)) {
            const std::string view = read_view(venv);
            if (view == "old") {
                ++old_views;
                if (restored_seen) {
                    problems.push_back("the old tree came back after the restored one");
                }
            } else if (view == "restored") {
                ++restored_views;
                restored_seen = true;
            } else if (view == "torn") {
                ++torn_views;
            } else {
                problems.push_back(view.empty() ? "a path was missing" : "a mix of both trees");
            }
            problem_count = static_cast<int>(problems.size());
            if (problems.size() > 10) {
                return;
            }
        }
    }
};

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("restore is atomic at the venv path: a reader sees the old tree or the restored one, never a mix") {
        Strategy strategy = Strategy::copy;
        SUBCASE("hardlink") { strategy = Strategy::hardlink; }
        SUBCASE("copy") { strategy = Strategy::copy; }
        stackup::testing::TempDir dir;
        const fs::path venv = dir / "venv";
        build_fake_venv(venv);
        for (int i = 0; i < 400; ++i) {  // enough that the restore takes a while
            write_bytes(venv / kSitePackages / ("pkg" + std::to_string(i % 40)) / ("m" + std::to_string(i) + ".py"),
                        std::to_string(i));
        }
        write_tree_state(venv, "restored");
        Store store(dir / "state");
        const SnapshotInfo info = store.create(venv, {"t", "", {}, strategy});
        write_tree_state(venv, "old");
        fs::remove_all(venv / kSitePackages / "pkg7");

        Watcher watcher;
        watcher.venv = venv;
        std::thread reader([&] { watcher.run(); });
        while (watcher.old_views == 0 && watcher.problem_count == 0) {
            std::this_thread::yield();
        }
        const int old_before = watcher.old_views;
        RestoreResult r;
        std::string error;
        try {
            r = store.restore(info.id, venv);
        } catch (const std::exception& e) {
            error = e.what();
            watcher.give_up = true;  // no restored tree will come
        }
        const int old_during = watcher.old_views - old_before;
        watcher.stop = true;
        reader.join();

        CHECK(error == "");
        CHECK(r.swapped_atomically);
        CHECK_MESSAGE(watcher.problems.empty(),
                      "the reader saw: " << (watcher.problems.empty() ? "" : watcher.problems[0]));
        CHECK(old_during > 0);  // the reader was reading while the restore ran
        CHECK(watcher.restored_views > 0);
        CHECK(read_view(venv) == "restored");
    }
}
