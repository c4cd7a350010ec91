#pragma once
// Picks the exact file a requirement installs from one index page, or says
// precisely why none fits (pure: files and the interpreter's facts in).

#include <vector>

#include "index/index_file.hpp"
#include "index/selection.hpp"
#include "pep/tags.hpp"

namespace stackup::index {

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
