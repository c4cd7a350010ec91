#include <malloc.h>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
    // glibc's allocator, told to give memory back (issue 14: under 40 MB on a real venv).
    // Left to itself it raises its mmap threshold after the first large block is freed, so
    // each later index page, parser buffer and tree index grows the heap, which never shrinks:
    // 45 MB peak for an apply that never holds 28 MB at once. Fixed at 128 KiB, every large
    // block is mapped on its own and unmapped when freed; one arena keeps the preflight
    // thread (txn/preflight.cpp) on the same heap instead of a second one. 36 MB.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_ARENA_MAX, 1);
    return stackup::cli::run(argc, argv);
}
