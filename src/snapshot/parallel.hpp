#pragma once
// Internal to the snapshot store: spreading per-file work over two threads.

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace stackup::snapshot::detail {

// Two: the machines this runs on have two cores, and one disk.
inline constexpr unsigned kWorkThreads = 2;

// Calls `work(item, state)` for every item, in order of `items` as taken by
// kWorkThreads threads, each with its own `State` (a buffer, say). The first
// exception stops the others and is rethrown once all have stopped.
template <typename State, typename Item, typename Work>
void for_each_parallel(const std::vector<Item>& items, Work work) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first;
    std::mutex first_mutex;
    auto worker = [&] {
        State state;
        try {
            for (std::size_t k = next++; k < items.size() && !failed; k = next++) {
                work(items[k], state);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(first_mutex);
            if (!first) {
                first = std::current_exception();
            }
            failed = true;
        }
    };
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < kWorkThreads && i < items.size(); ++i) {
        helpers.emplace_back(worker);
    }
    worker();
    for (auto& t : helpers) {
        t.join();
    }
    if (first) {
        std::rethrow_exception(first);
    }
}

}  // namespace stackup::snapshot::detail
