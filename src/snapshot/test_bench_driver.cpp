// The driver of tests/bench/snapshot_bench.py: skipped unless run by name
// with --no-skip, as no CMake target may be added for it. As apply does, it
// takes a snapshot of $STACKUP_BENCH_TREE and prepares its ready tree (apply
// does that in the background while uv runs); then $STACKUP_BENCH_RESTORES
// times damages the tree as a failed upgrade would and restores it; then
// damages it as a committed upgrade would and takes a second snapshot (what
// the next apply pays, the store already holding most inodes). Prints the
// times. The snapshots stay: the bench removes the state dir when it is done.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "snapshot/store.hpp"
#include "snapshot/test_fake_venv.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;

namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What uv does to a venv it upgrades: every 50th file replaced by a new inode
// (unlink and create) and a new package dir. Returns the files touched.
int damage(const fs::path& tree, int round) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(tree)) {
        if (e.is_regular_file() && !e.is_symlink()) {
            files.push_back(e.path());
        }
    }
    int touched = 0;
    for (std::size_t i = static_cast<std::size_t>(round); i < files.size(); i += 50) {
        fs::remove(files[i]);
        write_bytes(files[i], "replaced by the upgrade " + std::to_string(round) + "\n");
        ++touched;
    }
    for (int i = 0; i < 50; ++i) {
        // A new inode even where an earlier round (or bench run) left one: an
        // in-place write would damage a hard-link snapshot, and be refused.
        const fs::path module = tree / kSitePackages / "zz_new_package" / ("m" + std::to_string(i) + ".py");
        fs::remove(module);
        write_bytes(module, "x = " + std::to_string(round) + "\n");
        ++touched;
    }
    return touched;
}

std::string phases_of(const RestoreResult& r) {
    std::string out;
    for (const auto& p : r.phases) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s:%.4f", out.empty() ? "" : ",", p.name.c_str(), p.seconds);
        out += buf;
    }
    return out;
}

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("snapshot bench driver" * doctest::skip()) {
        const std::string tree = env_or_empty("STACKUP_BENCH_TREE");
        const std::string state = env_or_empty("STACKUP_BENCH_STATE");
        const auto strategy = strategy_from_string(env_or_empty("STACKUP_BENCH_STRATEGY"));
        const int restores = std::atoi(env_or_empty("STACKUP_BENCH_RESTORES").c_str());
        REQUIRE_MESSAGE(!tree.empty(), "set STACKUP_BENCH_TREE");
        REQUIRE_MESSAGE(!state.empty(), "set STACKUP_BENCH_STATE");
        REQUIRE_MESSAGE(strategy.has_value(), "set STACKUP_BENCH_STRATEGY to copy, hardlink, reflink or automatic");

        Store store(state);
        CreateRequest request;
        request.label = "bench";
        request.strategy = *strategy;
        const auto t0 = std::chrono::steady_clock::now();
        const SnapshotInfo info = store.create(tree, request);
        const double create_s = seconds_since(t0);
        const auto tp = std::chrono::steady_clock::now();
        (void)store.prepare(info.id);
        const double prepare_s = seconds_since(tp);
        std::string restore_s;
        std::string phases;
        for (int i = 0; i < std::max(restores, 1); ++i) {
            REQUIRE(damage(tree, i) > 0);
            const auto t1 = std::chrono::steady_clock::now();
            const RestoreResult restored = store.restore(info.id, tree);
            const double seconds = seconds_since(t1);
            CHECK(restored.tree_digest == info.tree_digest);
            CHECK(restored.warnings.empty());
            restore_s += (i == 0 ? "" : ",") + std::to_string(seconds);
            phases += (i == 0 ? "" : ";") + phases_of(restored);
        }
        REQUIRE(damage(tree, std::max(restores, 1)) > 0);
        const auto t2 = std::chrono::steady_clock::now();
        (void)store.create(tree, request);
        const double create_again_s = seconds_since(t2);
        std::printf("bench strategy=%s entries=%llu file_bytes=%llu create_s=%.4f prepare_s=%.4f "
                    "create_again_s=%.4f restore_s=%s phases=%s\n",
                    to_string(info.strategy).c_str(), static_cast<unsigned long long>(info.entries),
                    static_cast<unsigned long long>(info.file_bytes), create_s, prepare_s, create_again_s,
                    restore_s.c_str(), phases.c_str());
    }
}
