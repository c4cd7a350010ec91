#pragma once
// Internal to the snapshot store: spreading per-file work over the machine's cores.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace stackup::snapshot::detail {

// One per core (std::thread::hardware_concurrency; 1 when it is unknown), at most 8: stat,
// link and copy are mostly the kernel's work, which runs in parallel, but one disk serves them
// all. Measured on 2 cores only, where it is 2, as before.
inline unsigned work_threads() {
    static const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1U, 8U);
    return threads;
}

// Calls `work(item, state)` for every item, in order of `items` as taken by
// work_threads() threads, each with its own `State` (a buffer, say). The first
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
    for (unsigned i = 1; i < work_threads() && i < items.size(); ++i) {
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
