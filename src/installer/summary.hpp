#pragma once
// What uv said it did, read from its summary lines (pure).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::installer {

struct PackageChange {
    enum class Kind { removed, added, reinstalled };  // " - ", " + ", " ~ "
    Kind kind;
    std::string name;
    std::string version;
    friend bool operator==(const PackageChange&, const PackageChange&) = default;
};

struct UvSummary {
    std::optional<int> resolved;
    std::optional<int> prepared;
    std::optional<int> uninstalled;
    std::optional<int> installed;
    std::optional<int> checked;   // "Audited N packages" before uv 0.10.10, "Checked N packages" since
    std::vector<PackageChange> changes;

    // uv changed nothing: it only checked what was there.
    bool no_op() const { return changes.empty() && (!installed || *installed == 0); }
    // The change uv reports for `normalized` (" + " wins over " - "), if any.
    const PackageChange* change_of(const std::string& normalized) const;
    // Adds a later uv run of the same step (its uninstall, then its install).
    void merge(const UvSummary& later);
    friend bool operator==(const UvSummary&, const UvSummary&) = default;
};

// Feeds lines one at a time (as they stream) or a whole output at once.
void parse_uv_line(std::string_view line, UvSummary& summary);
UvSummary parse_uv_output(std::string_view output);

}  // namespace stackup::installer
