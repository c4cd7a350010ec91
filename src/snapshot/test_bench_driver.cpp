// The driver of tests/bench/snapshot_bench.py: skipped unless run by name
// with --no-skip, as no CMake target may be added for it.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "snapshot/store.hpp"

using namespace stackup::snapshot;

namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("snapshot bench driver" * doctest::skip()) {
        const std::string tree = env_or_empty("STACKUP_BENCH_TREE");
        const std::string state = env_or_empty("STACKUP_BENCH_STATE");
        const auto strategy = strategy_from_string(env_or_empty("STACKUP_BENCH_STRATEGY"));
        REQUIRE_MESSAGE(!tree.empty(), "set STACKUP_BENCH_TREE");
        REQUIRE_MESSAGE(!state.empty(), "set STACKUP_BENCH_STATE");
        REQUIRE_MESSAGE(strategy.has_value(), "set STACKUP_BENCH_STRATEGY to copy, hardlink or automatic");

        Store store(state);
        CreateRequest request;
        request.label = "bench";
        request.strategy = *strategy;
        const auto t0 = std::chrono::steady_clock::now();
        const SnapshotInfo info = store.create(tree, request);
        const double create_s = seconds_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        const RestoreResult restored = store.restore(info.id, tree);
        const double restore_s = seconds_since(t1);
        CHECK(restored.tree_digest.size() == 64);
        CHECK(restored.warnings.empty());
        std::printf("bench strategy=%s entries=%llu file_bytes=%llu create_s=%.4f restore_s=%.4f\n",
                    to_string(info.strategy).c_str(), static_cast<unsigned long long>(info.entries),
                    static_cast<unsigned long long>(info.file_bytes), create_s, restore_s);
        CHECK(store.remove(info.id));
    }
}
