// stackup snapshots create|list|show|delete|prune: the snapshot store of one venv.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/render.hpp"
#include "txn/snapshots.hpp"

namespace stackup::cli {
namespace {

// What every nested command shares: an optional manifest naming the venv.
struct Target {
    std::string manifest_path;
    std::optional<manifest::Manifest> manifest;
    txn::Options options;

    void resolve(const CommonOptions& common) {
        if (!manifest_path.empty()) {
            manifest = load_manifest(manifest_path, common);
        }
        options = txn_options(common, manifest ? &*manifest : nullptr);
    }
};

void add_manifest(CLI::App& sub, Target& target) {
    sub.add_option("manifest", target.manifest_path, "a manifest naming the venv (or pass --venv)")->type_name("MANIFEST");
}

std::function<int()> setup_create(CLI::App& sub, const CommonOptions& common, std::shared_ptr<Target> target) {
    auto label = std::make_shared<std::string>("manual");
    sub.add_option("--label", *label, "a label to recognise it by (default: manual)")->type_name("TEXT");
    return [label, target, &common] {
        target->resolve(common);
        auto m = target->manifest ? &*target->manifest : nullptr;
        auto info = txn::create_snapshot(target->options, m, *label);
        common.doc->body()["snapshot"] = snapshot_json(info);
        std::cout << "snapshot " << info.id << " created (" << info.entries << " entries, "
                  << render_bytes(info.file_bytes) << "): " << info.dir.string() << "\n";
        return 0;
    };
}

std::function<int()> setup_list(const CommonOptions& common, std::shared_ptr<Target> target) {
    return [target, &common] {
        target->resolve(common);
        auto all = txn::list_snapshots(target->options);
        Json list = Json::array();
        for (const auto& info : all) {
            list.push_back(snapshot_json(info));
        }
        common.doc->body()["snapshots"] = list;
        if (all.empty()) {
            std::cout << "no snapshots of " << target->options.venv.string() << "\n";
        }
        for (const auto& info : all) {
            std::cout << render_snapshot_row(info) << "\n";
        }
        return 0;
    };
}

std::function<int()> setup_show(CLI::App& sub, const CommonOptions& common, std::shared_ptr<Target> target) {
    auto id = std::make_shared<std::string>();
    sub.add_option("id", *id, "the snapshot id, from `stackup snapshots list`")->required()->type_name("ID");
    return [id, target, &common] {
        target->resolve(common);
        auto info = txn::show_snapshot(target->options, *id);
        common.doc->body()["snapshot"] = snapshot_json(info);
        std::cout << render_snapshot_details(info);
        return 0;
    };
}

std::function<int()> setup_delete(CLI::App& sub, const CommonOptions& common, std::shared_ptr<Target> target) {
    auto id = std::make_shared<std::string>();
    sub.add_option("id", *id, "the snapshot id, from `stackup snapshots list`")->required()->type_name("ID");
    return [id, target, &common] {
        target->resolve(common);
        txn::delete_snapshot(target->options, *id);
        common.doc->body()["deleted"] = Json::array({*id});
        std::cout << "snapshot " << *id << " deleted\n";
        return 0;
    };
}

std::function<int()> setup_prune(CLI::App& sub, const CommonOptions& common, std::shared_ptr<Target> target) {
    auto keep = std::make_shared<int>(-1);
    sub.add_option("--keep", *keep, "how many to keep (default: the manifest's snapshot.keep, else 3)")->type_name("N")
        ->check(CLI::NonNegativeNumber);
    return [keep, target, &common] {
        target->resolve(common);
        int n = *keep >= 0 ? *keep : (target->manifest ? target->manifest->snapshot_keep : 3);
        auto removed = txn::prune_snapshots(target->options, n);
        common.doc->body()["deleted"] = removed;
        common.doc->body()["keep"] = n;
        std::cout << "pruned " << removed.size() << " snapshot(s), keeping the newest " << n << "\n";
        for (const auto& id : removed) {
            std::cout << "  deleted " << id << "\n";
        }
        return 0;
    };
}

}  // namespace

std::function<int()> setup_snapshots(CLI::App& sub, const CommonOptions& common) {
    sub.require_subcommand(1);
    auto target = std::make_shared<Target>();
    auto chosen = std::make_shared<std::function<int()>>();
    auto add = [&](const char* name, const char* summary, auto&& setup) {
        CLI::App* nested = sub.add_subcommand(name, summary);
        auto runner = std::make_shared<std::function<int()>>(setup(*nested));
        add_manifest(*nested, *target);  // after the command's own positionals: `show ID [MANIFEST]`
        std::string command = std::string("snapshots ") + name;
        nested->callback([chosen, runner, command, &common] {
            common.doc->set_command(command);
            *chosen = *runner;
        });
    };
    add("create", "snapshot the venv now (reads it only)",
        [&](CLI::App& s) { return setup_create(s, common, target); });
    add("list", "this venv's snapshots, newest first", [&](CLI::App&) { return setup_list(common, target); });
    add("show", "one snapshot: metadata and distributions",
        [&](CLI::App& s) { return setup_show(s, common, target); });
    add("delete", "delete one snapshot (never the one an interrupted run needs)",
        [&](CLI::App& s) { return setup_delete(s, common, target); });
    add("prune", "keep the newest N (never the one an interrupted run needs)",
        [&](CLI::App& s) { return setup_prune(s, common, target); });
    return [chosen] { return (*chosen)(); };
}

}  // namespace stackup::cli
