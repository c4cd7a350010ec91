// PEP 440 versions: parse, and the normalized form parses back to an equal version.
#include "fuzz.hpp"
#include "pep/version.hpp"

STACKUP_FUZZ_TARGET {
    using stackup::pep::Version;
    auto text = stackup::fuzz::text_of(data, size);
    auto v = Version::parse(text);
    stackup::pep::canonicalize_version(text);
    if (!v) {
        return 0;
    }
    auto again = Version::parse(v->str());
    stackup::fuzz::check(again && *again == *v && again->str() == v->str());
    auto pub = Version::parse(v->public_str());
    stackup::fuzz::check(pub && *pub == v->without_local());
    stackup::fuzz::check(v->without_local() <= *v);
    return 0;
}
