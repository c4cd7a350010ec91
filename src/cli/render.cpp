#include "cli/render.hpp"

#include "pep/version.hpp"

namespace stackup::cli {

std::string change_kind(const txn::PackageRow& row) {
    if (row.before.empty()) {
        return "new";
    }
    if (row.after.empty()) {
        return "removed";
    }
    auto before = pep::Version::parse(row.before);
    auto after = pep::Version::parse(row.after);
    if (!before || !after || *before == *after) {
        return row.before == row.after ? "reinstall" : "change";
    }
    return *after > *before ? "upgrade" : "downgrade";
}

std::string render_package_row(const txn::PackageRow& row) {
    std::string before = row.before.empty() ? "-" : row.before;
    std::string after = row.after.empty() ? "-" : row.after;
    return row.name + "  " + before + " -> " + after + "  (" + change_kind(row) + ")";
}

}  // namespace stackup::cli
