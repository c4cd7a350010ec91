#include "installer/summary.hpp"

#include <charconv>

#include "pep/name.hpp"

namespace stackup::installer {
namespace {

// "Resolved 3 packages in 12ms" -> 3 when `line` starts with `verb`.
std::optional<int> count_after(std::string_view line, std::string_view verb) {
    if (line.substr(0, verb.size()) != verb || line.size() <= verb.size() || line[verb.size()] != ' ') {
        return std::nullopt;
    }
    std::string_view rest = line.substr(verb.size() + 1);
    int n = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec != std::errc() || ptr == rest.data()) {
        return std::nullopt;
    }
    std::string_view tail(ptr, rest.data() + rest.size() - ptr);
    if (tail.substr(0, 8) != " package") {
        return std::nullopt;
    }
    return n;
}

std::optional<PackageChange> change_line(std::string_view line) {
    if (line.size() < 4 || line[0] != ' ' || line[2] != ' ') {
        return std::nullopt;
    }
    PackageChange::Kind kind;
    switch (line[1]) {
        case '-': kind = PackageChange::Kind::removed; break;
        case '+': kind = PackageChange::Kind::added; break;
        case '~': kind = PackageChange::Kind::reinstalled; break;
        default: return std::nullopt;
    }
    std::string_view spec = line.substr(3);
    auto eq = spec.find("==");
    if (eq == std::string_view::npos) {
        return std::nullopt;  // uv prints "name==version"; anything else is not a summary line
    }
    std::string_view version = spec.substr(eq + 2);
    if (auto space = version.find(' '); space != std::string_view::npos) {
        version = version.substr(0, space);  // " (from file:///...)" and the like
    }
    return PackageChange{kind, pep::normalize_name(spec.substr(0, eq)), std::string(version)};
}

}  // namespace

const PackageChange* UvSummary::change_of(const std::string& normalized) const {
    const PackageChange* found = nullptr;
    for (const auto& c : changes) {
        if (c.name == normalized && (found == nullptr || c.kind != PackageChange::Kind::removed)) {
            found = &c;
        }
    }
    return found;
}

void parse_uv_line(std::string_view line, UvSummary& s) {
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    if (auto c = change_line(line)) {
        s.changes.push_back(*c);
    } else if (auto n = count_after(line, "Resolved")) {
        s.resolved = n;
    } else if (auto n = count_after(line, "Prepared")) {
        s.prepared = n;
    } else if (auto n = count_after(line, "Uninstalled")) {
        s.uninstalled = n;
    } else if (auto n = count_after(line, "Installed")) {
        s.installed = n;
    } else if (auto n = count_after(line, "Checked")) {
        s.checked = n;
    } else if (auto n = count_after(line, "Audited")) {
        s.checked = n;
    } else if (line.rfind("Checked in ", 0) == 0 || line.rfind("Audited in ", 0) == 0) {
        s.checked = 0;  // nothing to install at all (every requirement skipped by its marker)
    }
}

UvSummary parse_uv_output(std::string_view output) {
    UvSummary s;
    while (!output.empty()) {
        auto nl = output.find('\n');
        parse_uv_line(output.substr(0, nl), s);
        if (nl == std::string_view::npos) {
            break;
        }
        output.remove_prefix(nl + 1);
    }
    return s;
}

void UvSummary::merge(const UvSummary& later) {
    auto add = [](std::optional<int>& into, const std::optional<int>& more) {
        if (more) {
            into = into.value_or(0) + *more;
        }
    };
    add(resolved, later.resolved);
    add(prepared, later.prepared);
    add(uninstalled, later.uninstalled);
    add(installed, later.installed);
    add(checked, later.checked);
    changes.insert(changes.end(), later.changes.begin(), later.changes.end());
}

}  // namespace stackup::installer
