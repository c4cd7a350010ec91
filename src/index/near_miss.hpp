#pragma once
// Internal to select_wheel: the files of one project as its filters see them, and the texts
// that say why no file fits (the near miss) or what to know about the one chosen (warnings).

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "index/selection.hpp"
#include "pep/tags.hpp"

namespace stackup::index::detail {

struct Wheel {
    const IndexFile* file;
    // Shared: each filter step copies the wheels it keeps, and a page lists 15,000 of them
    // (its parsed name copied five times was most of a plan's memory). Its `tags` are empty
    // until with_tags: 15,000 expanded tag sets cost 6 MB, and only the few wheels of the
    // newest fitting release, or a near miss, need them.
    std::shared_ptr<const pep::WheelFilename> name;
};

// The wheel with its tag set, parsed again from its file name.
Wheel with_tags(const Wheel& w);
std::vector<Wheel> with_tags(const std::vector<Wheel>& wheels);

struct Sdist {
    const IndexFile* file;
    pep::Version version;
};

inline const pep::Version& version_of(const Wheel& w) { return w.name->version; }
inline const pep::Version& version_of(const Sdist& s) { return s.version; }

// The files of one project on the page, split by kind.
struct Page {
    std::string name;  // PEP 503 normalized
    std::vector<Wheel> wheels;
    std::vector<Sdist> sdists;
};

template <class T>
std::set<pep::Version> versions_of(const std::vector<T>& items) {
    std::set<pep::Version> out;
    for (const auto& item : items) {
        out.insert(version_of(item));
    }
    return out;
}

// The filters' rules (select.cpp), which the near misses apply again to what was dropped.
bool is_exact_pin(const pep::Requirement& r);
bool explicit_prerelease(const SelectRequest& req);
bool python_allows(const IndexFile& f, const pep::Version& python);

// uv's default "if-necessary-or-explicit": pre-releases only when asked, when the
// specifier names one, or when nothing else matches.
template <class T>
std::vector<T> satisfying(const std::vector<T>& items, const SelectRequest& req) {
    std::vector<T> finals;
    std::vector<T> all;
    for (const auto& item : items) {
        if (req.requirement.specifier.contains(version_of(item), pep::Prereleases::allow)) {
            all.push_back(item);
            if (!version_of(item).is_prerelease()) {
                finals.push_back(item);
            }
        }
    }
    return explicit_prerelease(req) || finals.empty() ? all : finals;
}

// --- why none: one text per filter that can leave nothing ---

// The page has no wheel of the project: no files at all, or only source distributions.
std::string no_wheels_why(const Page& page);

// No listed wheel satisfies the specifier: yanked or source-only matches, else the newest here.
std::string unmatched_why(const Page& page, const SelectRequest& req, const std::vector<Wheel>& yanked);

// No matching wheel has the wanted local label; `dropped` are those that did not.
std::string label_why(const std::string& name, const SelectRequest& req, const std::vector<Wheel>& dropped);

// Every labelled wheel's requires-python excludes this venv's interpreter.
std::string python_why(const std::string& name, const SelectRequest& req, const std::vector<Wheel>& dropped);

// No tag fits: the interpreter, or this host's platform (a newer glibc, another OS or machine).
std::string no_tag_why(const std::string& name, const std::vector<Wheel>& wheels, const SelectRequest& req,
                       const pep::TagRanking& tags);

// --- warnings about the choice: a yanked pin, duplicate listings, a newer source-only release ---

std::vector<std::string> warnings_of(const Page& page, const SelectRequest& req, const Wheel& chosen,
                                     const std::vector<Wheel>& for_python, const std::vector<Wheel>& matching);

}  // namespace stackup::index::detail
