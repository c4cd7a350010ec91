// ELF headers, dynamic sections and fatbin containers: read_elf_bytes never throws, a non-ELF
// input says nothing more, and the kernels come sorted, distinct and spellable.
#include <algorithm>

#include "binary/arch.hpp"
#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "fuzz.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::binary;
    auto info = read_elf_bytes({data, size});
    if (!info.elf) {
        stackup::fuzz::check(info.unreadable.empty() && info.soname.empty() && info.needed.empty() &&
                             info.rpath.empty() && info.runpath.empty() && info.kernels.empty());
        return 0;
    }
    stackup::fuzz::check(std::is_sorted(info.kernels.begin(), info.kernels.end()));
    stackup::fuzz::check(std::adjacent_find(info.kernels.begin(), info.kernels.end()) == info.kernels.end());
    stackup::fuzz::check(info.kernels.size() <= max_fatbin_entries);
    for (const auto& kernel : info.kernels) {
        stackup::fuzz::check(kernel.sm >= 10 && kernel.sm <= 999);
        stackup::fuzz::check(!spelled(kernel).empty());
        runs_on(kernel, Gpu{12, 0});
    }
    for (const auto& path : info.rpath) {
        stackup::fuzz::check(!path.empty() && path.find(':') == std::string::npos);
    }
    stackup::fuzz::check(!summarize(info.kernels).empty());
    return 0;
}
