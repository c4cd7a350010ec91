// PEP 508 requirements and markers: parse, the canonical spelling parses back the same,
// and a marker is either evaluated or refused with a reason.
#include "fuzz.hpp"
#include "pep/marker.hpp"
#include "pep/requirement.hpp"

namespace {

const stackup::pep::MarkerEnvironment& environment() {
    static const stackup::pep::MarkerEnvironment env{
        {"implementation_name", "cpython"}, {"implementation_version", "3.12.3"},
        {"os_name", "posix"}, {"platform_machine", "x86_64"}, {"platform_release", "6.8.0"},
        {"platform_system", "Linux"}, {"platform_version", "#1 SMP"},
        {"python_full_version", "3.12.3"}, {"platform_python_implementation", "CPython"},
        {"python_version", "3.12"}, {"sys_platform", "linux"}, {"extra", ""},
    };
    return env;
}

}  // namespace

STACKUP_FUZZ_TARGET {
    using namespace stackup::pep;
    auto text = stackup::fuzz::text_of(data, size);
    std::string error;
    auto requirement = parse_requirement(text, &error);
    if (!requirement) {
        stackup::fuzz::check(!error.empty());
    } else {
        auto again = parse_requirement(requirement->str());
        stackup::fuzz::check(again && again->str() == requirement->str());
    }
    std::string marker_error;
    auto verdict = evaluate_marker(text, environment(), &marker_error);
    stackup::fuzz::check(verdict.has_value() || !marker_error.empty());
    stackup::fuzz::check(marker_syntax_error(text).has_value() == (!verdict && marker_error.rfind("invalid marker", 0) == 0));
    return 0;
}
