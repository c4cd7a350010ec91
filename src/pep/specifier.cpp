// PEP 440 specifiers with packaging >= 26 semantics: what each operator admits
// (Specifier::matches) and, for is_satisfiable(), the same operator described as a
// union of version intervals (specifier_ranges below); the two views are kept in one
// file so they cannot drift apart. Parsing and spelling are in specifier_parse.cpp.

#include "pep/specifier.hpp"

#include <algorithm>
#include <tuple>

namespace stackup::pep {

namespace {

using Op = Specifier::Op;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

// ==X.* : same epoch, and the release (zero-padded) starts with X's release.
bool prefix_matches(const Version& v, const Version& prefix) {
    if (v.epoch() != prefix.epoch()) {
        return false;
    }
    const auto& release = v.release();
    for (std::size_t i = 0; i < prefix.release().size(); ++i) {
        std::uint64_t part = i < release.size() ? release[i] : 0;
        if (part != prefix.release()[i]) {
            return false;
        }
    }
    return true;
}

// The release of `v` with its last number dropped, as a wildcard prefix (~=1.4.5 -> 1.4.*).
Version compatible_prefix(const Version& v) {
    std::vector<std::uint64_t> release(v.release().begin(), v.release().end() - 1);
    return Version::from_parts(v.epoch(), release);
}

// The prefix that follows `prefix` (1.4 -> 1.5): ==1.4.* ends where ==1.5.* begins.
Version next_prefix(const Version& prefix) {
    std::vector<std::uint64_t> release = prefix.release();
    ++release.back();
    return Version::from_parts(prefix.epoch(), release);
}

Version with_dev0(const Version& v) { return Version::from_parts(v.epoch(), v.release(), v.pre(), v.post(), 0); }

// ---- intervals over public versions, for is_satisfiable() ----

// What decides where a version's post-releases sit: epoch, release and pre segment.
struct FamilyKey {
    std::uint64_t epoch;
    std::vector<std::uint64_t> release;  // trailing zeros removed
    int rank;                            // 0 dev-only, 1 a/b/rc, 2 final or post
    std::optional<PreRelease> pre;
    friend auto operator<=>(const FamilyKey&, const FamilyKey&) = default;
};

FamilyKey family_key(const Version& v) {
    std::vector<std::uint64_t> release = v.release();
    while (!release.empty() && release.back() == 0) {
        release.pop_back();
    }
    int rank = v.pre() ? 1 : (!v.post() && v.dev() ? 0 : 2);
    return FamilyKey{v.epoch(), release, rank, v.pre()};
}

// A point of the version line; `top` is the point just above every post-release
// of v's family (">1.0" starts above 1.0.post1, 1.0.post2, ...).
struct Point {
    Version v;
    bool top = false;
};

std::strong_ordering compare(const Point& a, const Point& b) {
    if (!a.top && !b.top) {
        return a.v <=> b.v;
    }
    if (auto c = family_key(a.v) <=> family_key(b.v); c != 0) {
        return c;
    }
    if (a.top == b.top) {
        return std::strong_ordering::equal;
    }
    return a.top ? std::strong_ordering::greater : std::strong_ordering::less;
}

struct Bound {
    Point at;
    bool inclusive = true;
};

// nullopt ends are unbounded.
struct Interval {
    std::optional<Bound> lo;
    std::optional<Bound> hi;
};

Bound at_least(const Version& v) { return Bound{Point{v}, true}; }
Bound above(const Version& v) { return Bound{Point{v}, false}; }

Bound tighter_lo(const Bound& a, const Bound& b) {
    auto c = compare(a.at, b.at);
    if (c != 0) {
        return c > 0 ? a : b;
    }
    return a.inclusive ? b : a;
}

Bound tighter_hi(const Bound& a, const Bound& b) {
    auto c = compare(a.at, b.at);
    if (c != 0) {
        return c < 0 ? a : b;
    }
    return a.inclusive ? b : a;
}

template <typename Pick>
std::optional<Bound> tighter(const std::optional<Bound>& a, const std::optional<Bound>& b, Pick pick) {
    if (!a || !b) {
        return a ? a : b;
    }
    return pick(*a, *b);
}

Interval intersect(const Interval& a, const Interval& b) {
    return Interval{tighter(a.lo, b.lo, tighter_lo), tighter(a.hi, b.hi, tighter_hi)};
}

// The least version after `v`: every version has one (1.0 -> 1.0.post0.dev0).
Version successor(const Version& v) {
    if (v.dev()) {
        return Version::from_parts(v.epoch(), v.release(), v.pre(), v.post(), *v.dev() + 1);
    }
    std::uint64_t post = v.post() ? *v.post() + 1 : 0;
    return Version::from_parts(v.epoch(), v.release(), v.pre(), post, 0);
}

// The least non-pre-release at or after the pre-release `v` (same release).
Version next_final(const Version& v) {
    if (v.post() && !v.pre()) {
        return Version::from_parts(v.epoch(), v.release(), std::nullopt, v.post());
    }
    return Version::from_parts(v.epoch(), v.release());
}

// The least version the bound admits, or nullopt when there is none: above
// every post-release of a final, the next versions are higher releases, which
// have no least element (1.0.1, 1.0.0.1, 1.0.0.0.1, ...).
std::optional<Version> least_admitted(const Bound& lo, bool finals_only) {
    Version first = lo.at.v;
    if (lo.at.top) {
        const auto& pre = lo.at.v.pre();
        if (!pre) {
            return std::nullopt;
        }
        first = Version::from_parts(first.epoch(), first.release(), PreRelease{pre->kind, pre->number + 1}, {}, 0);
    } else if (!lo.inclusive) {
        first = successor(first);
    }
    return finals_only && first.is_prerelease() ? next_final(first) : first;
}

bool release_above(const Version& a, const Version& b) {
    FamilyKey x = family_key(a);
    FamilyKey y = family_key(b);
    return std::tie(x.epoch, x.release) > std::tie(y.epoch, y.release);
}

bool has_member(const Interval& r, bool finals_only) {
    static const Version lowest = Version::from_parts(0, {0}, std::nullopt, std::nullopt, 0);  // 0.dev0
    Bound lo = r.lo.value_or(at_least(lowest));
    auto first = least_admitted(lo, finals_only);
    if (!r.hi) {
        return true;
    }
    if (!first) {
        // Some release lies strictly between the two (1.0 < 1.0.0.1 < 1.1).
        return release_above(r.hi->at.v, lo.at.v);
    }
    auto c = compare(Point{*first}, r.hi->at);
    return c < 0 || (c == 0 && r.hi->inclusive);
}

std::vector<Interval> complement(const Interval& r) {
    std::vector<Interval> out;
    if (r.lo) {
        out.push_back(Interval{std::nullopt, Bound{r.lo->at, !r.lo->inclusive}});
    }
    if (r.hi) {
        out.push_back(Interval{Bound{r.hi->at, !r.hi->inclusive}, std::nullopt});
    }
    return out;
}

Interval prefix_range(const Version& prefix) {
    return Interval{at_least(with_dev0(prefix)), above(with_dev0(next_prefix(prefix)))};
}

// The public versions the specifier admits (local labels aside, see is_satisfiable).
std::vector<Interval> specifier_ranges(const Specifier& s) {
    const Version& v = *s.version();
    switch (s.op()) {
        case Op::equal:
            return {s.is_wildcard() ? prefix_range(v) : Interval{at_least(v), Bound{Point{v}, true}}};
        case Op::not_equal:
            return complement(s.is_wildcard() ? prefix_range(v) : Interval{at_least(v), Bound{Point{v}, true}});
        case Op::greater_equal:
            return {Interval{at_least(v), std::nullopt}};
        case Op::less_equal:
            return {Interval{std::nullopt, Bound{Point{v}, true}}};
        case Op::greater:
            if (v.is_postrelease() || v.is_devrelease()) {
                return {Interval{above(v), std::nullopt}};
            }
            return {Interval{Bound{Point{v, true}, false}, std::nullopt}};
        case Op::less:
            return {Interval{std::nullopt, above(v.is_prerelease() ? v : with_dev0(v))}};
        case Op::compatible:
            return {intersect(Interval{at_least(v), std::nullopt}, prefix_range(compatible_prefix(v)))};
        case Op::arbitrary:
            break;
    }
    return {Interval{}};
}

}  // namespace

bool Specifier::matches(const Version& v, std::string_view text) const {
    if (op_ == Op::arbitrary) {
        return iequals(text, version_);  // === compares the strings, nothing else
    }
    const Version& target = *target_;
    Version pub = v.without_local();
    switch (op_) {
        case Op::equal:
        case Op::not_equal: {
            bool same = wildcard_ ? prefix_matches(pub, target)
                                  : (target.local_segments().empty() ? pub == target : v == target);
            return same == (op_ == Op::equal);
        }
        case Op::compatible:
            return pub >= target && prefix_matches(pub, compatible_prefix(target));
        case Op::less_equal:
            return pub <= target;
        case Op::greater_equal:
            return pub >= target;
        case Op::less:
            // <V admits no pre-release of V itself unless V is one (<2.0 rejects 2.0a1).
            return pub < (target.is_prerelease() ? target : with_dev0(target));
        case Op::greater:
            // >V admits no post-release of V unless V is one (>1.0 rejects 1.0.post1).
            if (target.is_postrelease() || target.is_devrelease()) {
                return pub > target;
            }
            return compare(Point{pub}, Point{target, true}) > 0;
        case Op::arbitrary:
            break;
    }
    return false;
}

bool Specifier::admits(const Version* v, std::string_view text, Prereleases prereleases) const {
    if (!v) {
        return op_ == Op::arbitrary && iequals(text, version_);
    }
    if (prereleases == Prereleases::deny && v->is_prerelease()) {
        return false;
    }
    return matches(*v, text);
}

bool Specifier::contains(const Version& v, Prereleases prereleases) const {
    return admits(&v, v.str(), prereleases);
}

bool Specifier::contains(std::string_view version_text, Prereleases prereleases) const {
    auto v = Version::parse(version_text);
    return admits(v ? &*v : nullptr, version_text, prereleases);
}

bool Specifier::names_prerelease() const {
    if (op_ == Op::not_equal || wildcard_ || !target_) {
        return false;
    }
    return target_->is_prerelease();
}

bool SpecifierSet::contains(const Version& v, Prereleases prereleases) const {
    std::string text = v.str();
    return std::all_of(specifiers_.begin(), specifiers_.end(),
                       [&](const Specifier& s) { return s.admits(&v, text, prereleases); });
}

bool SpecifierSet::contains(std::string_view version_text, Prereleases prereleases) const {
    auto v = Version::parse(version_text);
    if (v && prereleases == Prereleases::deny && v->is_prerelease()) {
        return false;
    }
    const Version* parsed = v ? &*v : nullptr;
    return std::all_of(specifiers_.begin(), specifiers_.end(),
                       [&](const Specifier& s) { return s.admits(parsed, version_text, prereleases); });
}

std::vector<std::string> SpecifierSet::filter(const std::vector<std::string>& versions,
                                              Prereleases prereleases) const {
    if (prereleases == Prereleases::unset &&
        std::any_of(specifiers_.begin(), specifiers_.end(), [](const Specifier& s) { return s.names_prerelease(); })) {
        prereleases = Prereleases::allow;
    }
    std::vector<std::string> kept;
    std::vector<bool> is_pre;
    for (const auto& text : versions) {
        auto v = Version::parse(text);
        bool pre = v && v->is_prerelease();
        if ((pre && prereleases == Prereleases::deny) || !contains(text, Prereleases::allow)) {
            continue;
        }
        kept.push_back(text);
        is_pre.push_back(pre);
    }
    bool any_final = std::find(is_pre.begin(), is_pre.end(), false) != is_pre.end();
    if (prereleases != Prereleases::unset || !any_final) {
        return kept;
    }
    std::vector<std::string> finals;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (!is_pre[i]) {
            finals.push_back(kept[i]);
        }
    }
    return finals;
}

bool SpecifierSet::is_satisfiable(Prereleases prereleases) const {
    // `===` admits one string and `==V+local` one version: ask contains() about that one.
    for (const auto& s : specifiers_) {
        if (s.op() == Specifier::Op::arbitrary) {
            return contains(s.version_text(), prereleases);
        }
    }
    for (const auto& s : specifiers_) {
        if (s.op() == Specifier::Op::equal && !s.is_wildcard() && !s.version()->local_segments().empty()) {
            return contains(*s.version(), prereleases);
        }
    }
    // Otherwise locals do not matter: !=V+local still leaves V itself.
    bool finals_only = prereleases == Prereleases::deny;
    std::vector<Interval> alive{Interval{}};
    for (const auto& s : specifiers_) {
        if (s.op() == Specifier::Op::not_equal && !s.version()->local_segments().empty()) {
            continue;
        }
        std::vector<Interval> next;
        for (const auto& a : alive) {
            for (const auto& b : specifier_ranges(s)) {
                Interval both = intersect(a, b);
                if (has_member(both, finals_only)) {
                    next.push_back(both);
                }
            }
        }
        alive = std::move(next);
    }
    return !alive.empty();
}

}  // namespace stackup::pep
