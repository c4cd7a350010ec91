// stackup's PEP 440 answers as a line protocol, for pep440_differential.py to hold against
// pypa/packaging: one request per line on stdin, one answer per line on stdout, so one
// process answers thousands of cases (the script writes them all, then reads). Fields are tab-separated; inside a field the
// escapes \\ \t \n \r stand for themselves (white space is part of what is tested).
//
//   V <text>           ok <str> <public> <base_version> <local|-> <epoch> <release> <pre|-> <post|-> <dev|->
//                         <is_prerelease> <is_devrelease> <is_postrelease>      | invalid
//   N <text>           canonicalize_version(text) and with strip_trailing_zero=false
//   C <a> <b>          -1 | 0 | 1                                               | invalid
//   P <spec>           ok <str> <op> <version_text> <wildcard> <names_prerelease> | invalid
//   S <specs>          ok <str> <count>                                         | invalid
//   K <specs> <text>   ok <unset> <allow> <deny> (each 0/1, SpecifierSet::contains) | invalid
//   F <specs> <v|v..>  ok <unset> <allow> <deny> (each filter()'s output, |-joined) | invalid
//
// An answer is never an exception: anything thrown becomes "error <what>", which the
// script reports as a disagreement.

#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "pep/specifier.hpp"
#include "pep/version.hpp"

namespace {

using stackup::pep::Prereleases;
using stackup::pep::Specifier;
using stackup::pep::SpecifierSet;
using stackup::pep::Version;

std::string unescape(std::string_view field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] != '\\' || i + 1 == field.size()) {
            out += field[i];
            continue;
        }
        char c = field[++i];
        out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
    }
    return out;
}

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
            out += '\\';
            out += c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : c;
        } else {
            out += c;
        }
    }
    return out;
}

std::vector<std::string> split(std::string_view line, char sep) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
        std::size_t end = line.find(sep, start);
        fields.emplace_back(line.substr(start, end == std::string_view::npos ? line.npos : end - start));
        if (end == std::string_view::npos) {
            return fields;
        }
        start = end + 1;
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        out += (i == 0 ? "" : std::string(sep)) + parts[i];
    }
    return out;
}

std::string flag(bool b) { return b ? "1" : "0"; }

template <typename T>
std::string number_or_dash(const std::optional<T>& n) {
    return n ? std::to_string(*n) : "-";
}

std::string version_answer(const std::string& text) {
    auto v = Version::parse(text);
    if (!v) {
        return "invalid";
    }
    std::vector<std::string> release;
    for (auto part : v->release()) {
        release.push_back(std::to_string(part));
    }
    std::string pre = "-";
    if (v->pre()) {
        constexpr std::array<std::string_view, 3> kinds{"a", "b", "rc"};
        pre = std::string(kinds[static_cast<std::size_t>(v->pre()->kind)]) + std::to_string(v->pre()->number);
    }
    std::string local = v->local().empty() ? "-" : v->local();
    return join({"ok", v->str(), v->public_str(), v->base_version(), local, std::to_string(v->epoch()),
                 join(release, "."), pre, number_or_dash(v->post()), number_or_dash(v->dev()),
                 flag(v->is_prerelease()), flag(v->is_devrelease()), flag(v->is_postrelease())},
                "\t");
}

std::string compare_answer(const std::string& a, const std::string& b) {
    auto x = Version::parse(a);
    auto y = Version::parse(b);
    if (!x || !y) {
        return "invalid";
    }
    auto c = *x <=> *y;
    return c < 0 ? "-1" : c > 0 ? "1" : "0";
}

std::string_view op_name(Specifier::Op op) {
    constexpr std::array<std::string_view, 8> names{"~=", "==", "!=", "<=", ">=", "<", ">", "==="};
    return names[static_cast<std::size_t>(op)];
}

std::string specifier_answer(const std::string& text) {
    auto s = Specifier::parse(text);
    if (!s) {
        return "invalid";
    }
    return join({"ok", escape(s->str()), std::string(op_name(s->op())), escape(s->version_text()), flag(s->is_wildcard()),
                 flag(s->names_prerelease())},
                "\t");
}

std::string set_answer(const std::string& text) {
    auto set = SpecifierSet::parse(text);
    if (!set) {
        return "invalid";
    }
    return join({"ok", escape(set->str()), std::to_string(set->specifiers().size())}, "\t");
}

std::string contains_answer(const std::string& spec, const std::string& version) {
    auto set = SpecifierSet::parse(spec);
    if (!set) {
        return "invalid";
    }
    return join({"ok", flag(set->contains(version, Prereleases::unset)), flag(set->contains(version, Prereleases::allow)),
                 flag(set->contains(version, Prereleases::deny))},
                "\t");
}

std::string filter_answer(const std::string& spec, const std::string& versions) {
    auto set = SpecifierSet::parse(spec);
    if (!set) {
        return "invalid";
    }
    std::vector<std::string> items = versions.empty() ? std::vector<std::string>{} : split(versions, '|');
    std::vector<std::string> answer{"ok"};
    for (auto mode : {Prereleases::unset, Prereleases::allow, Prereleases::deny}) {
        answer.push_back(escape(join(set->filter(items, mode), "|")));
    }
    return join(answer, "\t");
}

std::string answer(const std::vector<std::string>& f) {
    const std::string& kind = f[0];
    if (kind == "V" && f.size() == 2) {
        return version_answer(f[1]);
    }
    if (kind == "N" && f.size() == 2) {
        return join({"ok", escape(stackup::pep::canonicalize_version(f[1])),
                     escape(stackup::pep::canonicalize_version(f[1], false))},
                    "\t");
    }
    if (kind == "C" && f.size() == 3) {
        return compare_answer(f[1], f[2]);
    }
    if (kind == "P" && f.size() == 2) {
        return specifier_answer(f[1]);
    }
    if (kind == "S" && f.size() == 2) {
        return set_answer(f[1]);
    }
    if (kind == "K" && f.size() == 3) {
        return contains_answer(f[1], f[2]);
    }
    if (kind == "F" && f.size() == 3) {
        return filter_answer(f[1], f[2]);
    }
    return "error\tbad request";
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::vector<std::string> fields = split(line, '\t');
        for (auto& field : fields) {
            field = unescape(field);
        }
        try {
            std::cout << answer(fields) << '\n';
        } catch (const std::exception& e) {
            std::cout << "error\t" << escape(e.what()) << '\n';
        } catch (...) {
            std::cout << "error\tunknown exception\n";
        }
    }
    return 0;
}
