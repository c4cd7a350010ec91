#include "cli/render.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

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
    return unit == 0 ? fmt::format("{:.0f} {}", value, units[unit]) : fmt::format("{:.1f} {}", value, units[unit]);
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
    out += "generation:    " + std::to_string(info.generation) +
           (info.parent.empty() ? std::string() : " (built from " + info.parent + ")") + ", " +
           (info.outcome.empty() ? std::string("snapshot") : info.outcome) + "\n";
    for (const auto& c : info.changes) {
        out += "  changed " + c.name + " " + (c.before.empty() ? "-" : c.before) + " -> " +
               (c.after.empty() ? "-" : c.after) + "\n";
    }
    for (const auto& p : info.plan) {
        for (const auto& line : p.requirements) {
            out += "  step " + p.step + ": " + line + "\n";
        }
    }
    out += "distributions: " + std::to_string(info.distributions.size()) + "\n";
    for (const auto& [name, version] : info.distributions) {
        out += "  " + name + " " + version + "\n";
    }
    return out;
}

namespace {

std::string padded(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

Color color_of_change(const std::string& change) {
    if (change == "upgrade") {
        return Color::green;
    }
    if (change == "downgrade" || change == "removed" || change == "remove") {
        return Color::yellow;
    }
    return change == "new" ? Color::cyan : Color::dim;
}

namespace {

// The plan's table: a header row, then one row per removal and per package of each step.
std::vector<std::vector<std::string>> plan_rows(const plan::Plan& plan) {
    std::vector<std::vector<std::string>> rows{{"step", "package", "now", "", "planned", "change", "file"}};
    for (const auto& step : plan.steps) {
        for (const auto& r : step.removals) {
            if (!r.name.empty()) {
                rows.push_back({step.name, r.name, r.installed, "->", "-", "remove", "(remove: " + r.pattern + ")"});
            }
        }
        for (const auto& p : step.packages) {
            std::string planned = p.choice ? p.choice->wheel.version.str() : p.skipped.empty() ? "(none fits)" : "-";
            std::string file = p.choice ? p.choice->file.filename + " (" + p.index + ")" : "(" + p.skipped + ")";
            rows.push_back({step.name, p.name, p.installed.empty() ? "-" : p.installed, "->", planned, p.change(), file});
        }
    }
    return rows;
}

}  // namespace

std::string render_plan(const plan::Plan& plan, const Paint& paint) {
    const auto rows = plan_rows(plan);
    std::vector<std::size_t> widths(rows.front().size(), 0);
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    const std::size_t change_column = 5;
    std::string out;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            std::string cell = i + 1 == row.size() ? row[i] : padded(row[i], widths[i]);
            if (r == 0) {
                cell = paint(cell, Color::bold);
            } else if (i == change_column) {
                cell = paint(cell, row[4] == "(none fits)" ? Color::red : color_of_change(row[i]));
            }
            line += (i ? "  " : "") + cell;
        }
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line + "\n";
    }
    if (!plan.between.empty()) {
        out += paint("between steps:", Color::bold) + "\n";
        for (const auto& b : plan.between) {
            bool left = !b.gone && !b.accepted;
            out += "  " + paint(left ? "left broken: " : "broken for now: ", left ? Color::yellow : Color::dim) + b.text + "\n";
        }
        out += paint("note: ", Color::dim) +
               "the plan reads the requirements of what is installed now; those of the versions the steps install, "
               "and of the dependencies uv adds, are judged by apply after each step\n";
    }
    for (const auto& note : plan.notes) {
        out += paint("note: ", Color::dim) + note + "\n";
    }
    for (const auto& w : plan.warnings) {
        out += paint("warning: ", Color::yellow) + w + "\n";
    }
    for (const auto& problem : plan.problems) {
        bool end_state = problem == plan.end_state;
        out += paint(end_state ? "would end mixed: " : "missing: ", Color::red) + problem + "\n";
    }
    return out;
}

}  // namespace stackup::cli
