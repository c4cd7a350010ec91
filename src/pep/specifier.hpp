#pragma once
// PEP 440 version specifiers and specifier sets ("==2.10.*", ">=2.11.0.dev0,<3").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pep/version.hpp"

namespace stackup::pep {

// Whether pre-releases are admitted: `unset` is PEP 440's default
// (packaging >= 26: contains() admits them; filter() drops them when a final also matches).
enum class Prereleases { unset, allow, deny };

class Specifier {
public:
    enum class Op { compatible, equal, not_equal, less_equal, greater_equal, less, greater, arbitrary };

    // nullopt and `*error` set when `text` is not a valid specifier.
    static std::optional<Specifier> parse(std::string_view text, std::string* error = nullptr);

    Op op() const { return op_; }
    const std::string& version_text() const { return version_; }  // as written after the operator
    bool is_wildcard() const { return wildcard_; }                  // "==2.10.*" / "!=2.10.*"
    // The parsed version after the operator (the prefix for ==X.*); nullopt only for a
    // `===` text that is not a PEP 440 version.
    const std::optional<Version>& version() const { return target_; }
    std::string str() const;  // normalized spelling, e.g. ">=2.11.0.dev0"

    // Pre-release handling of one specifier: explicitly given (constructor) or unset.
    bool contains(const Version& v, Prereleases prereleases = Prereleases::unset) const;
    bool contains(std::string_view version_text, Prereleases prereleases = Prereleases::unset) const;
    // True when the specifier itself names a pre-release (">=2.11.0.dev0" does).
    bool names_prerelease() const;

    friend bool operator==(const Specifier&, const Specifier&) = default;

private:
    friend class SpecifierSet;
    // The operator alone, pre-release rule aside; `text` is what `===` compares.
    bool matches(const Version& v, std::string_view text) const;
    // contains() on an already-parsed item (nullptr when `text` is not a version).
    bool admits(const Version* v, std::string_view text, Prereleases prereleases) const;

    Op op_ = Op::equal;
    std::string version_;
    bool wildcard_ = false;
    std::optional<Version> target_;
};

class SpecifierSet {
public:
    // "" is the empty set, which matches every version.
    static std::optional<SpecifierSet> parse(std::string_view text, std::string* error = nullptr);

    const std::vector<Specifier>& specifiers() const { return specifiers_; }
    bool empty() const { return specifiers_.empty(); }
    std::string str() const;  // comma-joined, normalized

    bool contains(const Version& v, Prereleases prereleases = Prereleases::unset) const;
    // A text that is not a version is contained only by `===` (or by the empty set, as filter()).
    bool contains(std::string_view version_text, Prereleases prereleases = Prereleases::unset) const;
    // Keeps order; with `unset`, pre-releases are dropped when a final release also matches,
    // unless a specifier names a pre-release itself (packaging's `prereleases` property).
    // With no specifiers at all, strings that are not versions pass through unchanged.
    std::vector<std::string> filter(const std::vector<std::string>& versions,
                                    Prereleases prereleases = Prereleases::unset) const;
    // False when no version at all can satisfy every specifier (">=2.0,<1.0").
    bool is_satisfiable(Prereleases prereleases = Prereleases::unset) const;

    friend bool operator==(const SpecifierSet&, const SpecifierSet&) = default;

private:
    std::vector<Specifier> specifiers_;
};

}  // namespace stackup::pep
