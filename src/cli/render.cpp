#include "cli/render.hpp"

#include <cstdio>

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

std::string render_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return buf;
}

std::string render_snapshot_row(const snapshot::SnapshotInfo& info) {
    return info.id + "  " + info.created + "  '" + info.label + "'  " + std::to_string(info.entries) +
           " entries  " + render_bytes(info.file_bytes);
}

std::string render_snapshot_details(const snapshot::SnapshotInfo& info) {
    std::string out;
    out += "id:            " + info.id + "\n";
    out += "created:       " + info.created + "\n";
    out += "label:         " + info.label + "\n";
    out += "manifest:      " + (info.manifest.empty() ? std::string("-") : info.manifest) + "\n";
    out += "venv:          " + info.venv.string() + "\n";
    out += "strategy:      " + snapshot::to_string(info.strategy) + "\n";
    out += "entries:       " + std::to_string(info.entries) + "\n";
    out += "bytes:         " + std::to_string(info.file_bytes) + " (" + render_bytes(info.file_bytes) + ")\n";
    out += "tree digest:   " + info.tree_digest + "\n";
    out += "dir:           " + info.dir.string() + "\n";
    out += "distributions: " + std::to_string(info.distributions.size()) + "\n";
    for (const auto& [name, version] : info.distributions) {
        out += "  " + name + " " + version + "\n";
    }
    return out;
}

}  // namespace stackup::cli
