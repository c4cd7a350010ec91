#pragma once
// Small text helpers every module needs once: one copy here instead of one per file.

#include <string>
#include <string_view>
#include <vector>

namespace stackup::base {

// "a, b, c" (items in order, `separator` between them).
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// `text` without leading and trailing ASCII white space (space, tab, CR, LF, FF, VT).
std::string_view trim(std::string_view text);

// 0-9 only, whatever the locale (std::isdigit depends on it).
constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace stackup::base
