#include "manifest/yaml_scalar.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace stackup::manifest {

std::string yaml_scalar(std::string_view text) {
    static const std::regex plain_re("[A-Za-z_/][A-Za-z0-9._/+-]*");
    static const std::set<std::string> special{"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::regex_match(lower, plain_re) && special.count(lower) == 0) {
        return std::string(text);
    }
    std::string out = "\"";
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            fmt::format_to(std::back_inserter(out), "\\x{:02x}", u);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

}  // namespace stackup::manifest
