#pragma once
// What a verification round says, check by check: the checks made (Judgement) and the failed
// ones (Mismatch). verify.hpp judges expectations and CUDA, binaries.hpp the shared objects.

#include <string>

namespace stackup::verify {

struct Mismatch {
    std::string step;       // the step whose expectation failed ("" for env-wide scans)
    std::string dist;       // normalized
    std::string field;      // installed, version, local, cuda, import, __version__, attrs.<name>, mixed-cuda, check
    std::string expected;
    std::string found;
    friend bool operator==(const Mismatch&, const Mismatch&) = default;
};

// One check that was made, passed or not: what `verify` and `--json` list.
struct Judgement {
    std::string step;
    std::string dist;       // "" for env-wide scans
    std::string field;
    std::string expected;
    std::string found;
    bool ok = false;
    bool warning = false;   // passed, but worth saying (ok stays true)
    friend bool operator==(const Judgement&, const Judgement&) = default;
};

}  // namespace stackup::verify
