#include "index/select.hpp"

#include <algorithm>
#include <set>

#include "pep/name.hpp"

namespace stackup::index {
namespace {

struct Wheel {
    const IndexFile* file;
    pep::WheelFilename name;
};

std::string join(const std::set<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

bool is_exact_pin(const pep::Requirement& r) {
    const auto& specs = r.specifier.specifiers();
    return specs.size() == 1 && specs[0].op() == pep::Specifier::Op::equal && !specs[0].is_wildcard();
}

bool python_allows(const IndexFile& f, const pep::Version& python) {
    if (!f.requires_python) {
        return true;
    }
    auto spec = pep::SpecifierSet::parse(*f.requires_python);
    return !spec || spec->contains(python, pep::Prereleases::allow);  // unreadable: let uv judge
}

// uv's default "if-necessary-or-explicit": pre-releases only when asked, when the
// specifier names one, or when nothing else matches.
std::vector<Wheel> by_specifier(const std::vector<Wheel>& wheels, const SelectRequest& req) {
    bool explicit_pre = req.prerelease || std::any_of(req.requirement.specifier.specifiers().begin(),
                                                      req.requirement.specifier.specifiers().end(),
                                                      [](const pep::Specifier& s) { return s.names_prerelease(); });
    std::vector<Wheel> finals;
    std::vector<Wheel> all;
    for (const auto& w : wheels) {
        if (req.requirement.specifier.contains(w.name.version, pep::Prereleases::allow)) {
            all.push_back(w);
            if (!w.name.version.is_prerelease()) {
                finals.push_back(w);
            }
        }
    }
    return explicit_pre || finals.empty() ? all : finals;
}

std::string labels_of(const std::vector<Wheel>& wheels) {
    std::set<std::string> labels;
    for (const auto& w : wheels) {
        labels.insert(w.name.version.local().empty() ? "none" : w.name.version.local());
    }
    return join(labels);
}

std::string interpreters_of(const std::vector<Wheel>& wheels) {
    std::set<std::string> tags;
    for (const auto& w : wheels) {
        for (const auto& t : w.name.tags) {
            tags.insert(t.interpreter + "-" + t.abi + "-" + t.platform);
        }
    }
    return join(tags);
}

std::string newest_version(const std::vector<Wheel>& wheels) {
    auto it = std::max_element(wheels.begin(), wheels.end(),
                               [](const Wheel& a, const Wheel& b) { return a.name.version < b.name.version; });
    return it == wheels.end() ? "" : it->name.version.str();
}

std::vector<std::string> duplicate_warnings(const std::vector<Wheel>& wheels, const Wheel& chosen) {
    std::set<std::string> hashes;
    for (const auto& w : wheels) {
        if (w.file->filename == chosen.file->filename) {
            std::string sha256 = w.file->sha256();
            hashes.insert(sha256.empty() ? "(no sha256)" : sha256);
        }
    }
    if (hashes.size() < 2) {
        return {};
    }
    return {chosen.file->filename + " is listed " + std::to_string(hashes.size()) +
            " times with different sha256; the first listing was chosen"};
}

}  // namespace

Selection select_wheel(const std::vector<IndexFile>& files, const SelectRequest& req, const pep::TagRanking& tags) {
    const std::string name = req.requirement.normalized_name();
    std::vector<Wheel> wheels;
    bool sdists = false;
    for (const auto& f : files) {
        if (auto w = pep::parse_wheel_filename(f.filename); w && w->name == name) {
            wheels.push_back({&f, *w});
        } else if (auto s = pep::parse_sdist_filename(f.filename); s && s->name == name) {
            sdists = true;
        }
    }
    if (wheels.empty()) {
        return {std::nullopt, sdists ? name + " has only source distributions here, no wheels"
                                     : "no files for " + name + " on this index"};
    }
    std::vector<Wheel> listed;
    for (const auto& w : wheels) {
        if (!w.file->yanked || is_exact_pin(req.requirement)) {
            listed.push_back(w);
        }
    }
    auto matching = by_specifier(listed, req);
    std::string wanted = req.requirement.specifier.empty() ? "any version" : req.requirement.specifier.str();
    if (matching.empty()) {
        return {std::nullopt, "no " + name + " satisfies " + wanted + (req.prerelease ? "" : " (pre-releases not admitted)") +
                                  "; newest here is " + newest_version(wheels)};
    }
    std::vector<Wheel> labelled;
    for (const auto& w : matching) {
        if (!req.local || w.name.version.local() == *req.local) {
            labelled.push_back(w);
        }
    }
    if (labelled.empty()) {
        return {std::nullopt, "no " + name + " with local label " + *req.local + " satisfies " + wanted +
                                  " (labels here: " + labels_of(matching) + ")"};
    }
    std::vector<Wheel> for_python;
    for (const auto& w : labelled) {
        if (python_allows(*w.file, req.python)) {
            for_python.push_back(w);
        }
    }
    if (for_python.empty()) {
        return {std::nullopt, name + " " + newest_version(labelled) + " requires python " +
                                  labelled.front().file->requires_python.value_or("?") + "; this venv has " +
                                  req.python.str()};
    }
    std::optional<Choice> best;
    const Wheel* best_wheel = nullptr;
    for (const auto& w : for_python) {
        auto rank = tags.rank(w.name.tags);
        if (!rank) {
            continue;
        }
        bool better = !best || w.name.version > best->wheel.version ||
                      (w.name.version == best->wheel.version &&
                       (*rank < best->rank || (*rank == best->rank && w.name.build > best->wheel.build)));
        if (better) {
            best = Choice{*w.file, w.name, *rank, {}};
            best_wheel = &w;
        }
    }
    if (!best) {
        return {std::nullopt, name + " " + newest_version(for_python) + " exists only for " +
                                  interpreters_of(for_python) + "; this venv is " + req.python_tag};
    }
    best->warnings = duplicate_warnings(for_python, *best_wheel);
    return {best, ""};
}

}  // namespace stackup::index
