#pragma once
// A file a project page lists, and what parsing a page gives: the values index/ shares between
// its page parsers and the selection.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stackup::index {

struct IndexFile {
    std::string filename;                        // "torch-2.7.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    std::string url;                             // absolute, without the "#sha256=" fragment
    std::map<std::string, std::string> hashes;   // "sha256" -> hex digest
    std::optional<std::string> requires_python;  // ">=3.10", HTML entities decoded
    bool yanked = false;
    std::string yanked_reason;                   // "" when yanked without a reason
    std::optional<std::string> metadata;         // PEP 658/714: "true" or "sha256=<hex>"
    // The sha256 the index gave, "" when none.
    std::string sha256() const {
        auto it = hashes.find("sha256");
        return it == hashes.end() ? "" : it->second;
    }
    friend bool operator==(const IndexFile&, const IndexFile&) = default;
};

struct ParseResult {
    std::vector<IndexFile> files;                // in page order; one name may appear more than once
    std::optional<std::string> error;
};

struct RootListing {
    std::vector<std::string> projects;           // PEP 503-normalized, page order, no duplicates
    std::optional<std::string> error;
};

}  // namespace stackup::index
