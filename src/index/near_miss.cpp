// The near misses of select_wheel: which filter left nothing and why, in the words of the
// files that were there; and the warnings about the file it chose.

#include "index/near_miss.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

namespace stackup::index::detail {
namespace {

constexpr std::size_t few_versions = 4;
constexpr std::size_t few_tags = 5;

// "a", "a and b", "a, b and c"; beyond `limit`: "a, b, c, d, e and 3 more".
std::string enumerate(const std::vector<std::string>& items, std::size_t limit) {
    std::size_t shown = items.size() > limit ? limit : items.size();
    std::string out;
    for (std::size_t i = 0; i < shown; ++i) {
        bool last = i + 1 == shown && shown == items.size();
        out += (i == 0 ? "" : last ? " and " : ", ") + items[i];
    }
    if (shown < items.size()) {
        out += " and " + std::to_string(items.size() - shown) + " more";
    }
    return out;
}

// Oldest first, so the newest is last: "0.17 and 0.18"; "0.15, 0.16, 0.17 and 3 more up to 0.20".
std::string enumerate_versions(const std::set<pep::Version>& versions) {
    std::vector<std::string> items;
    for (const auto& v : versions) {
        items.push_back(v.str());
    }
    std::string out = enumerate(items, items.size() > few_versions ? few_versions - 1 : few_versions);
    return items.size() > few_versions ? out + " up to " + items.back() : out;
}

std::string join(const std::set<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

std::string newest_version(const std::vector<Wheel>& wheels) {
    auto versions = versions_of(wheels);
    return versions.empty() ? "" : versions.rbegin()->str();
}

// The wheels of the newest public version (all its local labels).
std::vector<Wheel> newest_release(const std::vector<Wheel>& wheels) {
    auto versions = versions_of(wheels);
    std::vector<Wheel> out;
    if (versions.empty()) {
        return out;
    }
    std::string newest = versions.rbegin()->public_str();
    std::copy_if(wheels.begin(), wheels.end(), std::back_inserter(out),
                 [&](const Wheel& w) { return w.name->version.public_str() == newest; });
    return out;
}

// "2.4.0+cu130", or only "2.4.0" when the release spans several local labels.
std::string release_label(const std::vector<Wheel>& release) {
    auto versions = versions_of(release);
    if (versions.empty()) {
        return "";
    }
    return versions.size() == 1 ? versions.begin()->str() : versions.begin()->public_str();
}

std::string wanted_of(const SelectRequest& req) {
    return req.requirement.specifier.empty() ? "any version" : req.requirement.specifier.str();
}

std::string yank_reason(const std::vector<Wheel>& files) {
    for (const auto& w : files) {
        if (!w.file->yanked_reason.empty()) {
            return w.file->yanked_reason;
        }
    }
    return "(no reason given)";
}

// Sdists that could serve the request (not yanked unless pinned, python allowed) and
// whose version has no wheel on the page at all.
std::vector<Sdist> source_only(const Page& page, const SelectRequest& req) {
    std::set<std::string> with_wheels;
    for (const auto& w : page.wheels) {
        with_wheels.insert(w.name->version.public_str());
    }
    std::vector<Sdist> out;
    for (const auto& s : page.sdists) {
        if ((!s.file->yanked || is_exact_pin(req.requirement)) && python_allows(*s.file, req.python) &&
            !with_wheels.contains(s.version.public_str())) {
            out.push_back(s);
        }
    }
    return out;
}

std::string source_only_note(const std::string& name, const std::set<pep::Version>& versions) {
    return name + " " + enumerate_versions(versions) + (versions.size() == 1 ? " is" : " are") +
           " source-only; stackup installs wheels only";
}

// "numpy 2.4.0 was yanked: <reason>", the newest yanked match first.
std::string yank_note(const std::string& name, const std::vector<Wheel>& yanked) {
    auto newest = newest_release(yanked);
    std::string out = name + " " + release_label(newest) + " was yanked: " + yank_reason(newest);
    std::set<pep::Version> older;
    for (const auto& w : yanked) {
        if (w.name->version.public_str() != newest.front().name->version.public_str()) {
            older.insert(w.name->version.without_local());
        }
    }
    return older.empty() ? out : out + "; so " + (older.size() == 1 ? "was " : "were ") + enumerate_versions(older);
}

// --- why no tag fits: the interpreter, or this host's platform ---

// "glibc 2.36" -> {2, 36}; nullopt for musl, unknown or anything else.
std::optional<pep::LibcVersion> host_glibc(std::string_view libc) {
    constexpr std::string_view prefix = "glibc ";
    if (!libc.starts_with(prefix)) {
        return std::nullopt;
    }
    libc.remove_prefix(prefix.size());
    pep::LibcVersion v;
    const char* end = libc.data() + libc.size();
    auto major = std::from_chars(libc.data(), end, v.major);
    if (major.ec != std::errc{} || major.ptr == end || *major.ptr != '.') {
        return std::nullopt;
    }
    auto minor = std::from_chars(major.ptr + 1, end, v.minor);
    return minor.ec == std::errc{} && minor.ptr == end ? std::optional(v) : std::nullopt;
}

std::string glibc_str(pep::LibcVersion v) { return std::to_string(v.major) + "." + std::to_string(v.minor); }

std::string host_of(const SelectRequest& req) {
    std::string machine = req.machine.empty() ? "an unknown machine" : req.machine;
    return machine + (req.libc.empty() ? "" : " with " + req.libc);
}

// Linux on this machine (an armv8l interpreter also runs armv7l wheels), or `any`.
bool fits_host(const std::string& platform, const std::string& machine) {
    if (platform == "any" || machine.empty()) {
        return true;
    }
    bool linux_family = platform.starts_with("manylinux") || platform.starts_with("musllinux") ||
                        platform.starts_with("linux_");
    bool arch = platform.ends_with("_" + machine) || (machine == "armv8l" && platform.ends_with("_armv7l"));
    return linux_family && arch;
}

// The least glibc with which this machine's tag list (pep::linux_platforms) would hold
// `platform`: manylinux1 -> 2.5, manylinux2014 -> 2.17, manylinux_2_39_x86_64 -> 2.39.
std::optional<pep::LibcVersion> glibc_needed(const std::string& platform, const std::string& machine) {
    constexpr int newest_minor = 99;
    if (!platform.starts_with("manylinux") || !fits_host(platform, machine)) {
        return std::nullopt;
    }
    const pep::PlatformPolicy policy{pep::LinuxTagPosition::Last, pep::ManylinuxFloor::Glibc2_5};
    for (int minor = 0; minor <= newest_minor; ++minor) {
        auto platforms = pep::linux_platforms(machine, pep::LibcVersion{2, minor}, std::nullopt, policy);
        if (std::find(platforms.begin(), platforms.end(), platform) != platforms.end()) {
            return pep::LibcVersion{2, minor};
        }
    }
    return std::nullopt;
}

// "cp313" -> {3, 13}, "py3" -> {3, -1}: to list the newest interpreter first.
std::pair<int, int> interpreter_version(const std::string& interpreter) {
    auto at = interpreter.find_first_of("0123456789");
    if (at == std::string::npos) {
        return {-1, -1};
    }
    int major = interpreter[at] - '0';
    int minor = -1;
    std::from_chars(interpreter.data() + at + 1, interpreter.data() + interpreter.size(), minor);
    return {major, minor};
}

std::vector<std::string> newest_interpreter_first(std::vector<pep::Tag> tags) {
    std::sort(tags.begin(), tags.end(), [](const pep::Tag& a, const pep::Tag& b) {
        auto va = interpreter_version(a.interpreter);
        auto vb = interpreter_version(b.interpreter);
        return va != vb ? va > vb : a < b;
    });
    std::vector<std::string> out;
    for (const auto& t : tags) {
        out.push_back(t.str());
    }
    return out;
}

std::set<std::string> platforms_of(const std::vector<Wheel>& wheels) {
    std::set<std::string> out;
    for (const auto& w : wheels) {
        for (const auto& t : w.name->tags) {
            out.insert(t.platform);
        }
    }
    return out;
}

// Tags on this host's OS and machine (plus `any`), newest interpreter first; when
// none is, the platforms that exist.
std::string interpreters_of(const std::vector<Wheel>& wheels, const SelectRequest& req) {
    std::set<pep::Tag> tags;
    for (const auto& w : wheels) {
        std::copy_if(w.name->tags.begin(), w.name->tags.end(), std::inserter(tags, tags.end()),
                     [&](const pep::Tag& t) { return fits_host(t.platform, req.machine); });
    }
    if (tags.empty()) {
        auto platforms = platforms_of(wheels);
        return enumerate({platforms.begin(), platforms.end()}, few_tags) + "; this host is " + host_of(req);
    }
    return enumerate(newest_interpreter_first({tags.begin(), tags.end()}), few_tags) + "; this venv is " +
           req.python_tag;
}

// The wheels with a tag this interpreter loads on some platform, only those tags kept.
std::vector<Wheel> for_interpreter(const std::vector<Wheel>& wheels, const pep::TagRanking& tags) {
    std::set<std::pair<std::string, std::string>> loads;
    for (const auto& t : tags.tags()) {
        loads.emplace(t.interpreter, t.abi);
    }
    std::vector<Wheel> out;
    for (const auto& w : wheels) {
        auto name = *w.name;  // only these tags kept: a copy of its own
        std::erase_if(name.tags, [&](const pep::Tag& t) { return !loads.contains({t.interpreter, t.abi}); });
        if (!name.tags.empty()) {
            out.push_back({w.file, std::make_shared<const pep::WheelFilename>(std::move(name))});
        }
    }
    return out;
}

// The right interpreter, the wrong platform: a newer glibc, or another OS or machine.
std::string platform_why(const std::string& name, const std::vector<Wheel>& release, const SelectRequest& req) {
    const std::string head = name + " " + release_label(release) + " for " + req.python_tag;
    const auto platforms = platforms_of(release);
    const auto host = host_glibc(req.libc);
    std::optional<std::pair<pep::LibcVersion, std::string>> least;
    for (const auto& p : platforms) {
        auto needed = glibc_needed(p, req.machine);
        if (needed && (!host || *needed > *host) && (!least || *needed < least->first)) {
            least = {{*needed, p}};
        }
    }
    if (least) {
        return head + " needs glibc " + glibc_str(least->first) + " (" + least->second + "); " +
               (req.libc.empty() ? "this host's libc is unknown" : "this host has " + req.libc);
    }
    return head + " exists only for " + enumerate({platforms.begin(), platforms.end()}, few_tags) +
           "; this host is " + host_of(req);
}

// --- warnings about the choice ---

std::optional<std::string> duplicate_warning(const std::vector<Wheel>& wheels, const Wheel& chosen) {
    std::set<std::string> hashes;
    for (const auto& w : wheels) {
        if (w.file->filename == chosen.file->filename) {
            std::string sha256 = w.file->sha256();
            hashes.insert(sha256.empty() ? "(no sha256)" : sha256);
        }
    }
    if (hashes.size() < 2) {
        return std::nullopt;
    }
    return chosen.file->filename + " is listed " + std::to_string(hashes.size()) +
           " times with different sha256; the first listing was chosen";
}

std::optional<std::string> yank_warning(const std::string& name, const Wheel& chosen, const SelectRequest& req) {
    if (!chosen.file->yanked) {
        return std::nullopt;
    }
    return name + " " + chosen.name->version.str() + " was yanked: " + yank_reason({chosen}) +
           "; chosen anyway because the requirement pins " + req.requirement.specifier.str();
}

// When the newest release that satisfies the request has no wheels and is newer than the choice.
std::optional<std::string> source_only_warning(const Page& page, const SelectRequest& req, const Wheel& chosen,
                                               const std::vector<Wheel>& matching) {
    const auto& picked = chosen.name->version;
    const bool pre = explicit_prerelease(req) || picked.is_prerelease();
    std::set<pep::Version> newer;
    for (const auto& s : source_only(page, req)) {
        if (s.version > picked && req.requirement.specifier.contains(s.version, pep::Prereleases::allow) &&
            (pre || !s.version.is_prerelease())) {
            newer.insert(s.version);
        }
    }
    auto wheel_versions = versions_of(matching);
    if (newer.empty() || *newer.rbegin() < *wheel_versions.rbegin()) {
        return std::nullopt;
    }
    return source_only_note(page.name, newer) + ", so " + picked.str() + " was chosen";
}

}  // namespace

std::string no_wheels_why(const Page& page) {
    if (page.sdists.empty()) {
        return "no files for " + page.name + " on this index";
    }
    return page.name + " has only source distributions here, no wheels (" +
           enumerate_versions(versions_of(page.sdists)) + "); stackup installs wheels only";
}

std::string unmatched_why(const Page& page, const SelectRequest& req, const std::vector<Wheel>& yanked) {
    std::vector<std::string> causes;
    if (auto matches = satisfying(yanked, req); !matches.empty()) {
        causes.push_back(yank_note(page.name, matches));
    }
    if (auto sources = satisfying(source_only(page, req), req); !sources.empty()) {
        causes.push_back(source_only_note(page.name, versions_of(sources)));
    }
    const std::string wanted = wanted_of(req);
    if (causes.empty()) {
        return "no " + page.name + " satisfies " + wanted + (req.prerelease ? "" : " (pre-releases not admitted)") +
               "; newest here is " + newest_version(page.wheels);
    }
    std::string out;
    for (const auto& c : causes) {
        out += c + "; ";
    }
    return out + "no other " + page.name + " wheel satisfies " + wanted;
}

std::string label_why(const std::string& name, const SelectRequest& req, const std::vector<Wheel>& dropped) {
    std::set<std::string> labels;
    for (const auto& w : dropped) {
        labels.insert(w.name->version.local().empty() ? "none" : w.name->version.local());
    }
    return "no " + name + " with local label " + *req.local + " satisfies " + wanted_of(req) + " (labels here: " +
           join(labels) + ")";
}

std::string python_why(const std::string& name, const SelectRequest& req, const std::vector<Wheel>& dropped) {
    auto newest = newest_release(dropped);
    return name + " " + newest_version(newest) + " requires python " +
           newest.front().file->requires_python.value_or("?") + "; this venv has " + req.python.str();
}

std::string no_tag_why(const std::string& name, const std::vector<Wheel>& wheels, const SelectRequest& req,
                       const pep::TagRanking& tags) {
    if (auto fitting = for_interpreter(wheels, tags); !fitting.empty()) {
        return platform_why(name, newest_release(fitting), req);
    }
    auto newest = newest_release(wheels);
    return name + " " + release_label(newest) + " exists only for " + interpreters_of(newest, req);
}

std::vector<std::string> warnings_of(const Page& page, const SelectRequest& req, const Wheel& chosen,
                                     const std::vector<Wheel>& for_python, const std::vector<Wheel>& matching) {
    std::vector<std::string> out;
    for (auto w : {yank_warning(page.name, chosen, req), duplicate_warning(for_python, chosen),
                   source_only_warning(page, req, chosen, matching)}) {
        if (w) {
            out.push_back(std::move(*w));
        }
    }
    return out;
}

}  // namespace stackup::index::detail
