// PEP 425 tags with the ordering rules of pypa/packaging's tags module
// (PEP 600 manylinux, PEP 656 musllinux, abi3 and abi3t).

#include "pep/tags.hpp"

#include <algorithm>
#include <array>

#include "base/text.hpp"

namespace stackup::pep {

namespace {

std::optional<std::set<Tag>> fail(std::string* error, std::string what) {
    if (error) {
        *error = std::move(what);
    }
    return std::nullopt;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || base::is_ascii_digit(c); }

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    while (true) {
        auto at = text.find(sep);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) {
            return parts;
        }
        text.remove_prefix(at + 1);
    }
}

bool is_identifier(std::string_view text) {
    return !text.empty() && is_ident_start(text.front()) && std::all_of(text.begin(), text.end(), is_ident_char);
}

std::string nodot(PythonVersion v) {
    return std::to_string(v.major) + (v.minor ? std::to_string(*v.minor) : "");
}

bool is_x86(std::string_view arch) { return arch == "x86_64" || arch == "i686"; }

// Arches that have manylinux wheels at all (armv7l means armhf; see packaging's ABI check).
bool has_manylinux(const std::vector<std::string>& archs) {
    constexpr std::array<std::string_view, 9> known{"x86_64", "i686",    "aarch64",     "armv7l", "ppc64",
                                                    "ppc64le", "s390x", "loongarch64", "riscv64"};
    return std::any_of(archs.begin(), archs.end(), [&](const std::string& a) {
        return std::find(known.begin(), known.end(), a) != known.end();
    });
}

// manylinux2014 exists for every arch; manylinux2010 and manylinux1 only for x86.
std::optional<std::string> legacy_alias(LibcVersion v, std::string_view arch) {
    if (v == LibcVersion{2, 17}) {
        return "manylinux2014";
    }
    if (v == LibcVersion{2, 12} && is_x86(arch)) {
        return "manylinux2010";
    }
    if (v == LibcVersion{2, 5} && is_x86(arch)) {
        return "manylinux1";
    }
    return std::nullopt;
}

void add_manylinux_for(std::vector<std::string>& out, const std::string& arch, LibcVersion glibc,
                       ManylinuxFloor floor) {
    int floor_minor = floor == ManylinuxFloor::Glibc2_5 || is_x86(arch) ? 5 : 17;
    for (int major = glibc.major; major >= 2; --major) {
        int top = major == glibc.major ? glibc.minor : 50;  // packaging assumes 50 minors per older major
        int bottom = major == 2 ? floor_minor : 0;
        for (int minor = top; minor >= bottom; --minor) {
            out.push_back("manylinux_" + std::to_string(major) + "_" + std::to_string(minor) + "_" + arch);
            if (auto alias = legacy_alias({major, minor}, arch)) {
                out.push_back(*alias + "_" + arch);
            }
        }
    }
}

void add_musllinux_for(std::vector<std::string>& out, const std::string& arch, LibcVersion musl) {
    for (int minor = musl.minor; minor >= 0; --minor) {
        out.push_back("musllinux_" + std::to_string(musl.major) + "_" + std::to_string(minor) + "_" + arch);
    }
}

void add_linux(std::vector<std::string>& out, const std::vector<std::string>& archs) {
    for (const auto& arch : archs) {
        out.push_back("linux_" + arch);
    }
}

bool is_threaded(const std::vector<std::string>& abis) {
    if (abis.empty() || !abis.front().starts_with("cp")) {
        return false;
    }
    std::string_view rest = std::string_view(abis.front()).substr(2);
    auto digits = std::find_if(rest.begin(), rest.end(), [](char c) { return !base::is_ascii_digit(c); });
    return digits != rest.begin() && std::string_view(digits, rest.end()).find('t') != std::string_view::npos;
}

// abi3 only exists from Python 3.2 on, and needs a minor version to name.
bool abi3_applies(PythonVersion v) { return v.minor && (v.major > 3 || (v.major == 3 && *v.minor >= 2)); }

void add_product(std::vector<Tag>& out, const std::string& interpreter, const std::string& abi,
                 const std::vector<std::string>& platforms) {
    for (const auto& platform : platforms) {
        out.push_back(Tag{interpreter, abi, platform});
    }
}

// py312, py3, py311 ... py30 (or only py3 for a major-only version).
std::vector<std::string> py_interpreters(PythonVersion v) {
    std::vector<std::string> out;
    if (v.minor) {
        out.push_back("py" + nodot(v));
    }
    out.push_back("py" + std::to_string(v.major));
    for (int minor = v.minor.value_or(0) - 1; minor >= 0; --minor) {
        out.push_back("py" + nodot({v.major, minor}));
    }
    return out;
}

// "linux-x86_64" -> "linux_x86_64", as wheel platform tags spell it.
std::string normalized_platform(std::string_view sysconfig_platform) {
    std::string platform = lower(sysconfig_platform);
    std::replace_if(platform.begin(), platform.end(), [](char c) { return c == '-' || c == '.' || c == ' '; }, '_');
    return platform;
}

bool is_sorted_set(const std::vector<std::string_view>& values) { return std::is_sorted(values.begin(), values.end()); }

}  // namespace

std::string Tag::str() const { return interpreter + "-" + abi + "-" + platform; }

std::optional<std::set<Tag>> parse_tag(std::string_view text, TagSetOrder order, std::string* error) {
    auto fields = split(text, '-');
    if (fields.size() != 3) {
        return fail(error, "a tag has exactly three fields (interpreter-abi-platform): '" + std::string(text) + "'");
    }
    std::array<std::vector<std::string_view>, 3> values;
    for (std::size_t i = 0; i < 3; ++i) {
        values[i] = split(fields[i], '.');
        if (std::any_of(values[i].begin(), values[i].end(), [](auto v) { return v.empty(); })) {
            return fail(error, "empty component in tag '" + std::string(text) + "'");
        }
        if (order == TagSetOrder::RequireSorted && !is_sorted_set(values[i])) {
            return fail(error, "unsorted compressed tag set '" + std::string(fields[i]) + "'");
        }
    }
    if (!std::all_of(values[0].begin(), values[0].end(), is_identifier)) {
        return fail(error, "invalid interpreter in tag '" + std::string(text) + "'");
    }
    std::set<Tag> tags;
    for (auto interpreter : values[0]) {
        for (auto abi : values[1]) {
            for (auto platform : values[2]) {
                tags.insert(Tag{lower(interpreter), lower(abi), lower(platform)});
            }
        }
    }
    return tags;
}

std::string abi_from_soabi(std::string_view soabi) {
    auto parts = split(soabi, '-');
    if (parts.size() < 2 || parts[0] != "cpython" || parts[1].empty()) {
        return "";
    }
    return "cp" + std::string(parts[1]);
}

std::string interpreter_arch(std::string_view sysconfig_platform, bool is_32bit) {
    std::string platform = normalized_platform(sysconfig_platform);
    std::string arch = platform.starts_with("linux_") ? platform.substr(6) : platform;
    if (is_32bit && arch == "x86_64") {
        return "i686";
    }
    if (is_32bit && arch == "aarch64") {
        return "armv8l";
    }
    return arch;
}

std::vector<std::string> linux_platforms(std::string_view arch, std::optional<LibcVersion> glibc,
                                         std::optional<LibcVersion> musl, PlatformPolicy policy) {
    // An armv8l interpreter also runs armv7l (armhf) wheels.
    std::vector<std::string> archs{std::string(arch)};
    if (arch == "armv8l") {
        archs.push_back("armv7l");
    }
    std::vector<std::string> out;
    if (policy.linux_tag == LinuxTagPosition::First) {
        add_linux(out, archs);
    }
    for (const auto& a : archs) {
        if (glibc && has_manylinux(archs)) {
            add_manylinux_for(out, a, *glibc, policy.floor);
        }
    }
    for (const auto& a : archs) {
        if (musl) {
            add_musllinux_for(out, a, *musl);
        }
    }
    if (policy.linux_tag == LinuxTagPosition::Last) {
        add_linux(out, archs);
    }
    return out;
}

std::vector<std::string> sysconfig_platforms(std::string_view sysconfig_platform, bool is_32bit,
                                             std::optional<LibcVersion> glibc, std::optional<LibcVersion> musl,
                                             PlatformPolicy policy) {
    std::string platform = normalized_platform(sysconfig_platform);
    if (!platform.starts_with("linux_")) {
        return {platform};
    }
    return linux_platforms(interpreter_arch(platform, is_32bit), glibc, musl, policy);
}

std::vector<Tag> cpython_tags(PythonVersion version, const std::vector<std::string>& abis,
                              const std::vector<std::string>& platforms) {
    const std::string interpreter = "cp" + nodot(version);
    const std::string abi3 = is_threaded(abis) ? "abi3t" : "abi3";
    const bool stable = abi3_applies(version);
    std::vector<Tag> out;
    for (const auto& abi : abis) {
        if (abi != "abi3" && abi != "abi3t" && abi != "none") {  // added below, in their place
            add_product(out, interpreter, abi, platforms);
        }
    }
    if (stable) {
        add_product(out, interpreter, abi3, platforms);
    }
    add_product(out, interpreter, "none", platforms);
    if (stable) {
        for (int minor = *version.minor - 1; minor >= 2; --minor) {  // abi3 began with 3.2
            add_product(out, "cp" + nodot({version.major, minor}), abi3, platforms);
        }
    }
    return out;
}

std::vector<Tag> compatible_tags(PythonVersion version, std::string_view interpreter,
                                 const std::vector<std::string>& platforms) {
    const auto pys = py_interpreters(version);
    std::vector<Tag> out;
    for (const auto& py : pys) {
        add_product(out, py, "none", platforms);
    }
    if (!interpreter.empty()) {
        out.push_back(Tag{std::string(interpreter), "none", "any"});
    }
    for (const auto& py : pys) {
        out.push_back(Tag{py, "none", "any"});
    }
    return out;
}

std::vector<Tag> supported_tags(const Interpreter& interpreter, PlatformPolicy policy) {
    const PythonVersion version{interpreter.major, interpreter.minor};
    const auto platforms = linux_platforms(interpreter.arch, interpreter.glibc, interpreter.musl, policy);
    if (interpreter.implementation != "cpython") {
        return compatible_tags(version, "", platforms);  // only pure-Python wheels are safe to assume
    }
    std::vector<std::string> abis;
    if (!interpreter.abi.empty()) {
        abis.push_back(interpreter.abi);
    }
    auto out = cpython_tags(version, abis, platforms);
    auto rest = compatible_tags(version, "cp" + nodot(version), platforms);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

TagRanking::TagRanking(std::vector<Tag> supported) : tags_(std::move(supported)) {
    for (std::size_t i = 0; i < tags_.size(); ++i) {
        index_.emplace(tags_[i], i);  // emplace keeps the first, most preferred, index
    }
}

std::optional<std::size_t> TagRanking::rank(const std::set<Tag>& wheel_tags) const {
    std::optional<std::size_t> best;
    for (const auto& tag : wheel_tags) {
        auto it = index_.find(tag);
        if (it != index_.end() && (!best || it->second < *best)) {
            best = it->second;
        }
    }
    return best;
}

}  // namespace stackup::pep
