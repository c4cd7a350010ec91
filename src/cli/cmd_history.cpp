// stackup history [MANIFEST]: the generations of the venv, which one is live, what is staged.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/render.hpp"
#include "txn/running.hpp"
#include "txn/snapshots.hpp"
#include "venv/processes.hpp"

namespace stackup::cli {
namespace {

constexpr std::size_t kChangesShown = 4;

std::string render_changes(const std::vector<snapshot::PackageChange>& changes) {
    if (changes.empty()) {
        return "-";
    }
    std::string out;
    for (std::size_t i = 0; i < changes.size() && i < kChangesShown; ++i) {
        const auto& c = changes[i];
        out += (i == 0 ? "" : ", ") + c.name + " " + (c.before.empty() ? "-" : c.before) + " -> " +
               (c.after.empty() ? "-" : c.after);
    }
    if (changes.size() > kChangesShown) {
        out += ", ... (" + std::to_string(changes.size() - kChangesShown) + " more)";
    }
    return out;
}

}  // namespace

std::function<int()> setup_history(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    add_venv_manifest(sub, *manifest_path);
    return [manifest_path, &common] {
        auto options = venv_options(*manifest_path, common);
        auto h = txn::history(options);
        // Whose code each process runs: the live generation's (it uses the venv) or a replaced one's.
        auto in_use = txn::code_in_use(options.venv, options.state_dir);  // one walk of /proc for both
        const auto live_users = std::move(in_use.live.using_venv);
        const auto old_code = std::move(in_use.old_code);
        auto running_code_of = [&](const std::string& id) {
            std::vector<venv::ProcessUse> out = id == h.live_id ? live_users : std::vector<venv::ProcessUse>();
            for (const auto& p : old_code) {
                if (p.generation_id == id && id != h.live_id) {
                    out.push_back(p.use);
                }
            }
            return out;
        };
        Json list = Json::array();
        for (const auto& info : h.generations) {
            Json g = snapshot_json(info);
            g["live"] = info.id == h.live_id;
            g["staged"] = h.staged && h.staged->generation_id == info.id;
            g["running"] = running_json(running_code_of(info.id));
            list.push_back(g);
        }
        common.doc->body()["generations"] = list;
        common.doc->body()["live"] = h.live_id.empty() ? Json(nullptr) : Json(h.live_id);
        common.doc->body()["staged"] = h.staged ? Json(h.staged->generation_id) : Json(nullptr);
        if (h.generations.empty()) {
            std::cout << "no generations of " << options.venv.string() << " yet (`stackup apply` or "
                      << "`stackup snapshots create` makes one)\n";
            return 0;
        }
        for (const auto& info : h.generations) {
            const bool live = info.id == h.live_id;
            const bool staged = h.staged && h.staged->generation_id == info.id;
            std::cout << (live ? "* " : staged ? "+ " : "  ") << "generation " << info.generation << "  " << info.id
                      << "  " << info.created << "  " << (info.outcome.empty() ? "snapshot" : info.outcome) << "  '"
                      << info.label << "'" << (info.manifest.empty() ? "" : "  " + info.manifest) << "\n"
                      << "      " << render_changes(info.changes) << "\n";
            for (const auto& p : running_code_of(info.id)) {
                std::cout << "      " << (live ? "in use by " : "still running its code (restart it): ")
                          << venv::describe(p) << "\n";
            }
        }
        std::cout << (h.live_id.empty() ? "the venv is none of these: it changed since the last one was made\n"
                                        : "* live")
                  << (h.staged ? ", + staged (`stackup switch` puts it in)" : "") << (h.live_id.empty() ? "" : "\n");
        return 0;
    };
}

}  // namespace stackup::cli
