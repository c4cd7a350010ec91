#pragma once
// Picks the exact file a requirement installs from one index page, or says
// precisely why none fits (pure: files and the interpreter's facts in).

#include <optional>
#include <string>
#include <vector>

#include "index/page.hpp"
#include "pep/requirement.hpp"
#include "pep/tags.hpp"
#include "pep/version.hpp"
#include "pep/wheel.hpp"

namespace stackup::index {

struct SelectRequest {
    pep::Requirement requirement;
    bool prerelease = false;                 // the step's flag: admit .dev/.a/.b/.rc
    std::optional<std::string> local;        // the expectation's local label, "cu130"
    pep::Version python;                     // the venv's interpreter, "3.11.7"
    std::string python_tag;                  // "cp311", for messages
    std::string machine;                     // the host's, "x86_64"; "" when unknown (then every platform fits)
    std::string libc;                        // the host's, "glibc 2.36", "musl 1.2.4"; "" when unknown
};

struct Choice {
    IndexFile file;
    pep::WheelFilename wheel;
    std::size_t rank = 0;                    // of its best tag; lower is preferred
    std::vector<std::string> warnings;       // e.g. the same name listed with different hashes
};

struct Selection {
    std::optional<Choice> chosen;
    std::string why_none;                    // the near miss, when nothing was chosen
};

// Newest version that satisfies the requirement (and the prerelease rule, and
// the local label), among wheels compatible with `tags`; ties go to the best tag,
// then the highest build tag. Yanked files count only for an exact == pin (with a
// warning). The near miss names the first filter that left nothing: yanked or
// source-only releases, the label, requires-python, then the interpreter or this
// host's platform (glibc, architecture, OS). A newer release that is source-only
// is warned about.
Selection select_wheel(const std::vector<IndexFile>& files, const SelectRequest& request,
                       const pep::TagRanking& tags);

}  // namespace stackup::index
