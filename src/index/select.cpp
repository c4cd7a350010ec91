// select_wheel as its filter pipeline: the project's files, then yanked, specifier, local
// label, requires-python and tag, each step keeping what passes; the near-miss texts and the
// warnings about the choice are near_miss.cpp's.

#include "index/select.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "index/near_miss.hpp"

namespace stackup::index {
namespace detail {

bool is_exact_pin(const pep::Requirement& r) {
    const auto& specs = r.specifier.specifiers();
    return specs.size() == 1 && specs[0].op() == pep::Specifier::Op::equal && !specs[0].is_wildcard();
}

bool explicit_prerelease(const SelectRequest& req) {
    const auto& specs = req.requirement.specifier.specifiers();
    return req.prerelease ||
           std::any_of(specs.begin(), specs.end(), [](const pep::Specifier& s) { return s.names_prerelease(); });
}

bool python_allows(const IndexFile& f, const pep::Version& python) {
    if (!f.requires_python) {
        return true;
    }
    auto spec = pep::SpecifierSet::parse(*f.requires_python);
    return !spec || spec->contains(python, pep::Prereleases::allow);  // unreadable: let uv judge
}

Wheel with_tags(const Wheel& w) {
    auto name = pep::parse_wheel_filename(w.file->filename);  // parsed once already: it reads
    return {w.file, name ? std::make_shared<const pep::WheelFilename>(std::move(*name)) : w.name};
}

std::vector<Wheel> with_tags(const std::vector<Wheel>& wheels) {
    std::vector<Wheel> out;
    out.reserve(wheels.size());
    for (const auto& w : wheels) {
        out.push_back(with_tags(w));
    }
    return out;
}

}  // namespace detail

namespace {

using detail::Page;
using detail::Wheel;

// One filter step: what passed, what it dropped, and (when nothing passed) why.
struct Filtered {
    std::vector<Wheel> kept;
    std::vector<Wheel> dropped;
    std::string why_none;
};

Page collect(const std::vector<IndexFile>& files, const std::string& name) {
    Page page{name, {}, {}};
    for (const auto& f : files) {
        if (auto w = pep::parse_wheel_filename(f.filename); w && w->name == name) {
            std::set<pep::Tag>().swap(w->tags);  // with_tags brings them back where needed
            page.wheels.push_back({&f, std::make_shared<const pep::WheelFilename>(std::move(*w))});
        } else if (auto s = pep::parse_sdist_filename(f.filename); s && s->name == name) {
            page.sdists.push_back({&f, s->version});
        }
    }
    return page;
}

// --- the filter steps, in order ---

Filtered drop_yanked(const std::vector<Wheel>& wheels, const SelectRequest& req) {
    Filtered out;
    for (const auto& w : wheels) {
        (!w.file->yanked || detail::is_exact_pin(req.requirement) ? out.kept : out.dropped).push_back(w);
    }
    return out;  // never the near miss itself: by_specifier says whether a yank mattered
}

Filtered by_specifier(const std::vector<Wheel>& wheels, const SelectRequest& req, const Page& page,
                      const std::vector<Wheel>& yanked) {
    Filtered out;
    out.kept = detail::satisfying(wheels, req);
    std::set<const IndexFile*> kept;
    for (const auto& w : out.kept) {
        kept.insert(w.file);
    }
    std::copy_if(wheels.begin(), wheels.end(), std::back_inserter(out.dropped),
                 [&](const Wheel& w) { return !kept.contains(w.file); });
    if (out.kept.empty()) {
        out.why_none = detail::unmatched_why(page, req, yanked);
    }
    return out;
}

Filtered by_label(const std::vector<Wheel>& wheels, const SelectRequest& req, const std::string& name) {
    Filtered out;
    for (const auto& w : wheels) {
        (!req.local || w.name->version.local() == *req.local ? out.kept : out.dropped).push_back(w);
    }
    if (out.kept.empty()) {
        out.why_none = detail::label_why(name, req, out.dropped);
    }
    return out;
}

Filtered by_python(const std::vector<Wheel>& wheels, const SelectRequest& req, const std::string& name) {
    Filtered out;
    for (const auto& w : wheels) {
        (detail::python_allows(*w.file, req.python) ? out.kept : out.dropped).push_back(w);
    }
    if (out.kept.empty()) {
        out.why_none = detail::python_why(name, req, out.dropped);
    }
    return out;
}

struct Best {
    Choice choice;
    const Wheel* wheel = nullptr;
};

// Newer version first; then the better tag; then the higher build tag.
bool beats(const Wheel& w, std::size_t rank, const Choice& best) {
    if (w.name->version != best.wheel.version) {
        return w.name->version > best.wheel.version;
    }
    return rank != best.rank ? rank < best.rank : w.name->build > best.wheel.build;
}

// Newest version first: the tags of a release are read only while no newer one had a wheel
// that fits (the first that does wins, whatever the older releases' tags).
std::optional<Best> best_by_tag(const std::vector<Wheel>& wheels, const pep::TagRanking& tags) {
    std::vector<const Wheel*> newest_first;
    for (const auto& w : wheels) {
        newest_first.push_back(&w);
    }
    std::stable_sort(newest_first.begin(), newest_first.end(),
                     [](const Wheel* a, const Wheel* b) { return a->name->version > b->name->version; });
    std::optional<Best> best;
    for (const Wheel* w : newest_first) {
        if (best && w->name->version != best->choice.wheel.version) {
            break;
        }
        const Wheel tagged = detail::with_tags(*w);
        auto rank = tags.rank(tagged.name->tags);
        if (rank && (!best || beats(tagged, *rank, best->choice))) {
            best = Best{Choice{*w->file, *tagged.name, *rank, {}}, w};
        }
    }
    return best;
}

Selection none(std::string why) { return {std::nullopt, std::move(why)}; }

}  // namespace

Selection select_wheel(const std::vector<IndexFile>& files, const SelectRequest& req, const pep::TagRanking& tags) {
    const Page page = collect(files, req.requirement.normalized_name());
    if (page.wheels.empty()) {
        return none(detail::no_wheels_why(page));
    }
    const auto listed = drop_yanked(page.wheels, req);
    const auto matching = by_specifier(listed.kept, req, page, listed.dropped);
    if (matching.kept.empty()) {
        return none(matching.why_none);
    }
    const auto labelled = by_label(matching.kept, req, page.name);
    if (labelled.kept.empty()) {
        return none(labelled.why_none);
    }
    const auto for_python = by_python(labelled.kept, req, page.name);
    if (for_python.kept.empty()) {
        return none(for_python.why_none);
    }
    auto best = best_by_tag(for_python.kept, tags);
    if (!best) {
        return none(detail::no_tag_why(page.name, detail::with_tags(for_python.kept), req, tags));
    }
    best->choice.warnings = detail::warnings_of(page, req, *best->wheel, for_python.kept, matching.kept);
    return {std::move(best->choice), ""};
}

}  // namespace stackup::index

