// PEP 440 specifier sets: parse, normalized form round-trips, contains() never throws.
// Input: "<specifier set>\n<version>" (the version is optional).
#include "fuzz.hpp"
#include "pep/specifier.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::pep;
    auto [spec_text, version_text] = stackup::fuzz::first_line_and_rest(stackup::fuzz::text_of(data, size));
    std::string error;
    auto set = SpecifierSet::parse(spec_text, &error);
    if (!set) {
        stackup::fuzz::check(!error.empty());
        return 0;
    }
    auto again = SpecifierSet::parse(set->str());
    stackup::fuzz::check(again && again->str() == set->str());
    for (auto mode : {Prereleases::unset, Prereleases::allow, Prereleases::deny}) {
        set->contains(version_text, mode);
        set->filter({std::string(version_text), "1.0", "2.0rc1"}, mode);
        set->is_satisfiable(mode);
    }
    return 0;
}
