// PEP 503 normalization and PEP 508 validity of project names (ASCII only).

#include "pep/name.hpp"

#include <algorithm>

namespace stackup::pep {

namespace {

bool is_separator(char c) { return c == '-' || c == '_' || c == '.'; }
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::string normalize_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (is_separator(c)) {
            if (i == 0 || !is_separator(name[i - 1])) {
                out += '-';  // a run of separators becomes one dash
            }
        } else {
            out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        }
    }
    return out;
}

bool is_valid_name(std::string_view name) {
    if (name.empty() || !is_alnum(name.front()) || !is_alnum(name.back())) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) { return is_alnum(c) || is_separator(c); });
}

bool is_normalized_name(std::string_view name) { return is_valid_name(name) && normalize_name(name) == name; }

}  // namespace stackup::pep
