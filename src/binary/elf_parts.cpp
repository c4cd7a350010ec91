// The ELF structures' helpers of elf_parts.hpp: hex, string tables, path lists.
#include "binary/elf_parts.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stackup::binary::detail {
namespace {

constexpr std::uint64_t string_window = 4096;         // one read serves nearby strings
constexpr std::uint64_t max_string_bytes = 1 << 16;   // one DT_NEEDED, DT_RPATH, ... string

}  // namespace

std::string hex(std::uint64_t value) {
    return fmt::format("{:#x}", value);
}

std::string StringTable::at(std::uint64_t index) {
    if (index >= size_) {
        throw Damaged(std::string(what_) + ": string " + std::to_string(index) + " past its end (" +
                      std::to_string(size_) + " bytes)");
    }
    if (auto found = from_window(index)) {
        return *found;
    }
    for (auto length : {string_window, max_string_bytes}) {
        length = std::min(length, size_ - index);
        window_ = source_.read(offset_ + index, length, what_);
        window_start_ = index;
        if (auto found = from_window(index)) {
            return *found;
        }
        if (length == size_ - index) {
            break;
        }
    }
    throw Damaged(std::string(what_) + ": string " + std::to_string(index) + " is not terminated");
}

std::optional<std::string> StringTable::from_window(std::uint64_t index) const {
    if (window_.empty() || index < window_start_ || index - window_start_ >= window_.size()) {
        return std::nullopt;
    }
    auto begin = window_.begin() + static_cast<std::ptrdiff_t>(index - window_start_);
    auto nul = std::find(begin, window_.end(), 0);
    if (nul == window_.end()) {
        return std::nullopt;
    }
    return std::string(begin, nul);
}

std::vector<std::string> split_path_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto colon = std::min(text.find(':', start), text.size());
        if (colon > start) {
            out.push_back(text.substr(start, colon - start));
        }
        start = colon + 1;
    }
    return out;
}

}  // namespace stackup::binary::detail
