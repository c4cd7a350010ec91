#include "manifest/text.hpp"

#include <algorithm>
#include <cctype>

namespace stackup::manifest {

namespace {

bool is_var_name(std::string_view name) {
    for (std::size_t i = 0; i < name.size(); ++i) {
        auto c = static_cast<unsigned char>(name[i]);
        bool ok = std::isalpha(c) != 0 || c == '_' || (i > 0 && std::isdigit(c) != 0);
        if (!ok) {
            return false;
        }
    }
    return !name.empty();
}

}  // namespace

std::optional<std::string> expand_vars(std::string_view text, const EnvLookup& env, std::string* error) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] != '$' || i + 1 >= text.size() || text[i + 1] != '{') {
            out.push_back(text[i++]);
            continue;
        }
        std::size_t close = text.find('}', i + 2);
        if (close == std::string_view::npos || !is_var_name(text.substr(i + 2, close - i - 2))) {
            std::size_t length = close == std::string_view::npos ? std::string_view::npos : close - i + 1;
            *error = "malformed variable reference '" + std::string(text.substr(i, length)) + "' (write ${NAME})";
            return std::nullopt;
        }
        std::string_view name = text.substr(i + 2, close - i - 2);
        auto value = env(std::string(name));
        if (!value) {
            *error = "environment variable '" + std::string(name) + "' is not set";
            return std::nullopt;
        }
        out += *value;
        i = close + 1;
    }
    return out;
}

std::optional<std::string> expand_path_text(std::string_view text, const EnvLookup& env, std::string* error) {
    std::string prefix;
    if (!text.empty() && text.front() == '~') {
        if (text.size() > 1 && text[1] != '/') {
            *error = "'" + std::string(text.substr(0, text.find('/'))) + "' is not expanded: only '~' and '~/' are";
            return std::nullopt;
        }
        auto home = env("HOME");
        if (!home || home->empty()) {
            *error = "cannot expand '~': HOME is not set";
            return std::nullopt;
        }
        prefix = *home;
        text.remove_prefix(1);
    }
    auto rest = expand_vars(text, env, error);
    if (!rest) {
        return std::nullopt;
    }
    return prefix + *rest;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: Levenshtein plus one-step transpositions.
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    // Short keys get one edit: two edits turn any short word into another.
    std::size_t limit = word.size() <= 4 ? 1 : 2;
    std::optional<std::string> best;
    std::size_t best_distance = limit + 1;
    for (const auto& candidate : candidates) {
        std::size_t distance = edit_distance(word, candidate);
        if (distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

}  // namespace stackup::manifest
