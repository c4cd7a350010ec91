#include <doctest/doctest.h>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "skip.hpp"
#include "snapshot/link.hpp"
#include "snapshot/reflink.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_json.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;
using stackup::Error;
using stackup::ExitCode;

namespace {



// What uv does: a new inode at the same path.
void replace_file(const fs::path& path, const std::string& content) {
    fs::remove(path);
    write_bytes(path, content);
}



}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("a hardlink snapshot shares inodes and records an integrity record, no sha256") {
        LinkFixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        CHECK(info.strategy == Strategy::hardlink);
        const TreeIndex index = f.store.index(info);
        const TreeEntry* e = index.find(kVersionPy);
        REQUIRE(e != nullptr);
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        CHECK(inode_of(object_file(objects, e->inode)) == inode_of(f.venv / kVersionPy));
        std::size_t files = 0;
        for (const auto& entry : fs::directory_iterator(objects)) {
            CHECK(entry.is_regular_file());  // flat: one link per inode, nothing else
            CHECK(entry.path().filename().string() == std::to_string(inode_of(entry.path())));
            ++files;
        }
        CHECK(files == 10);
        CHECK_FALSE(fs::exists(info.dir / "tree"));
        CHECK(e->sha256.empty());
        CHECK(e->inode == inode_of(f.venv / kVersionPy));
        CHECK(e->ctime_ns != 0);
        CHECK(index.find("bin")->inode == 0);
        // The tree as snapshotted is the venv, hashes aside.
        CHECK(diff(index_tree(f.venv, Contents::hash), index).empty());
        CHECK(f.digest() == original);
        CHECK(f.store.verify(info.id).empty());
        const auto doc = nlohmann::json::parse(stackup::base::read_file(info.dir / "snapshot.json"));
        CHECK(doc.at("strategy") == "hardlink");
    }

    TEST_CASE("hardlink restore undoes deletes, replacements, strays and chmod, mtimes included") {
        LinkFixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();

        const auto sp = f.venv / kSitePackages;
        fs::remove_all(sp / "torch/lib");                              // delete a package dir
        replace_file(sp / "sglang/__init__.py", "broken = True\n");   // unlink + create, as uv does
        replace_file(f.venv / "pyvenv.cfg", "home = /elsewhere\n");
        write_bytes(sp / "stray.py", "x");                            // add a stray file
        set_mode(f.venv / "bin/python3", 0700);                        // chmod one (the shared inode)
        set_mode(f.venv, 0700);                                        // the root itself
        REQUIRE(f.digest() != original);

        const RestoreResult r = f.store.restore(info.id, f.venv);
        CHECK(r.swapped_atomically);
        CHECK(r.warnings.empty());
        CHECK(f.digest() == original);
        CHECK(diff(f.store.index(info), index_tree(f.venv, Contents::hash)).empty());
        CHECK(f.store.verify(info.id).empty());  // the snapshot survives its restore
        CHECK(f.store.restore(info.id, f.venv).tree_digest == r.tree_digest);  // and restores again
        CHECK(f.digest() == original);
    }

    TEST_CASE("a chmod of a shared inode is accepted but a touch is refused: no hash tells it from a write") {
        LinkFixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        set_mode(f.venv / "bin/python3", 0700);
        replace_file(f.venv / "pyvenv.cfg", "home = /elsewhere\n");
        (void)f.store.restore(info.id, f.venv);
        CHECK(f.digest() == original);

        set_mtime(f.venv / kVersionPy, 42);
        const Error e = error_of([&] { (void)f.store.restore(info.id, f.venv); });
        CHECK(e.code() == ExitCode::rollback_failed);
        CHECK(std::string(e.what()).find("content may differ: " + kVersionPy) != std::string::npos);
        CHECK(std::string(e.what()).find("no sha256 recorded") != std::string::npos);
    }

    TEST_CASE("a file rewritten in place through the venv damages the hardlink snapshot: refused") {
        LinkFixture f;
        const SnapshotInfo info = f.snap();
        rewrite_in_place(f.venv / kVersionPy, "cuda = '13.0'\n");  // same size as before
        const std::string damaged_venv = f.digest();

        const auto problems = f.store.verify(info.id);
        REQUIRE(problems.size() == 1);
        CHECK(problems[0].find(kVersionPy) != std::string::npos);
        const Error e = error_of([&] { (void)f.store.restore(info.id, f.venv); });
        CHECK(e.code() == ExitCode::rollback_failed);
        const std::string what = e.what();
        CHECK(what.find(kVersionPy) != std::string::npos);
        CHECK(what.find("damaged") != std::string::npos);
        CHECK(what.find("was not touched") != std::string::npos);
        CHECK(f.digest() == damaged_venv);
        for (const auto& entry : fs::directory_iterator(f.dir.path())) {
            CHECK(entry.path().filename().string().rfind(".venv.", 0) != 0);  // no staging left
        }
    }

    TEST_CASE("an object missing from the store, or replaced by another file, is reported and refused") {
        LinkFixture f;
        const SnapshotInfo info = f.snap();
        const TreeIndex index = f.store.index(info);
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        const fs::path version_object = object_file(objects, index.find(kVersionPy)->inode);
        const fs::path init_object = object_file(objects, index.find(kInit)->inode);
        fs::remove(version_object);
        fs::remove(init_object);
        write_bytes(init_object, "not the snapshot's inode\n");
        const auto problems = f.store.verify(info.id);
        REQUIRE(problems.size() == 2);
        CHECK(problems[0] == "content differs: " + kInit + " (" + init_object.string() + " is another file)");
        CHECK(problems[1] == "missing: " + kVersionPy + " (" + version_object.string() + ")");
        CHECK(error_of([&] { (void)f.store.restore(info.id, f.venv); }).code() == ExitCode::rollback_failed);
    }

    TEST_CASE("automatic picks hardlink on the venv's filesystem without reflinks and says why" *
              doctest::test_suite("conditional")) {
        LinkFixture f;
        if (probe_reflink(f.venv, f.dir.path()).supported) {
            stackup::testing::skip(f.dir.path().string() + " has reflinks, so automatic picks them (test_reflink.cpp)");
            return;
        }
        const SnapshotInfo info = f.snap(Strategy::automatic);
        CHECK(info.strategy == Strategy::hardlink);
        CHECK(info.strategy_reason.find("automatic: hardlink, no reflinks (cloning ") != std::string::npos);
        CHECK(info.strategy_reason.find(filesystem_name(f.venv)) != std::string::npos);
        CHECK(info.strategy_reason.find("st_dev") != std::string::npos);
        CHECK(f.store.find(info.id) == info);
        CHECK(f.snap().strategy_reason == "asked for hardlink");
        CHECK(f.snap(Strategy::copy).strategy == Strategy::copy);
        CHECK(strategy_from_string("hardlink") == Strategy::hardlink);
        CHECK(strategy_from_string("automatic") == Strategy::automatic);
        CHECK(strategy_from_string("reflink") == Strategy::reflink);
        CHECK(to_string(Strategy::reflink) == "reflink");
        CHECK_FALSE(strategy_from_string("ficlone"));
    }

    TEST_CASE("usage counts shared blocks once: a hard-link snapshot costs what the venv no longer links") {
        LinkFixture f;
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const std::uint64_t lib_bytes = fs::file_size(f.venv / lib);
        auto info = f.snap();
        auto fresh = f.store.usage();
        REQUIRE(fresh.snapshots.size() == 1);
        CHECK(fresh.snapshots[0].id == info.id);
        CHECK(fresh.snapshots[0].apparent_bytes >= lib_bytes);
        CHECK(fresh.snapshots[0].own_bytes < lib_bytes);   // the venv still links the big file

        replace_file(f.venv / lib, "a new build");            // what uv does: the old inode stays only here
        auto after = f.store.usage();
        CHECK(after.snapshots[0].own_bytes >= fresh.snapshots[0].own_bytes + lib_bytes);
        CHECK(after.disk_bytes >= after.snapshots[0].own_bytes);

        auto second = f.snap();                               // links the new lib; the old one only in the first
        auto both = f.store.usage();
        REQUIRE(both.snapshots.size() == 2);
        CHECK(both.snapshots[0].id == second.id);
        CHECK(both.snapshots[1].own_bytes >= lib_bytes);
        CHECK(both.snapshots[0].own_bytes < lib_bytes);
    }

    TEST_CASE("restore unless drifted: the venv's drift is judged beside the staging, and a drifted venv is not touched") {
        LinkFixture f;
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const auto old = f.snap();
        const std::string old_digest = f.digest();
        replace_file(f.venv / lib, "a new build");
        const auto now = f.snap();                            // the venv is this generation (its root)
        REQUIRE(f.store.candidate(f.venv));
        CHECK(f.store.candidate(f.venv)->id == now.id);
        CHECK_FALSE(f.store.drifted(now, f.venv));
        const auto r = f.store.restore(old.id, f.venv, now.id, now);  // not drifted: restored
        CHECK(r.tree_digest == old.tree_digest);
        CHECK(f.digest() == old_digest);

        // By hand, after the restore: the venv is no longer the generation its root names.
        const auto believed = f.store.candidate(f.venv);
        REQUIRE(believed);
        CHECK(believed->id == old.id);
        replace_file(f.venv / "bin" / "python3", "changed by hand");
        CHECK(f.store.drifted(*believed, f.venv));
        CHECK_FALSE(f.store.live(f.venv));
        const std::string by_hand = f.digest();
        struct stat before {};
        REQUIRE(::lstat(f.venv.c_str(), &before) == 0);
        CHECK_THROWS_AS((void)f.store.restore(now.id, f.venv, believed->id, believed), VenvDrifted);
        struct stat after {};
        REQUIRE(::lstat(f.venv.c_str(), &after) == 0);
        CHECK(after.st_ino == before.st_ino);                  // nothing was swapped
        CHECK(f.digest() == by_hand);                          // nor written
        CHECK(f.store.restore(now.id, f.venv).tree_digest == now.tree_digest);  // without the condition it goes
    }

    TEST_CASE("usage's one walk counts what a brute-force walk of the store counts: each inode once") {
        LinkFixture f;
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const auto first = f.snap();
        REQUIRE(f.store.prepare(first.id) > 0);               // a ready tree: the objects linked twice
        replace_file(f.venv / lib, "a new build");
        const auto second = f.snap();
        REQUIRE(f.store.prepare(second.id) > 0);
        f.snap(Strategy::copy);                               // a copy: inodes of its own
        fs::create_directories(f.store.snapshots_dir() / "20990101T000000Z-dead" / "tree");  // incomplete
        stackup::base::write_file_atomic(f.store.snapshots_dir() / "20990101T000000Z-dead" / "tree" / "x", "partial");
        // Every inode under the store once, by std::filesystem and lstat: what `du` counts.
        std::set<std::pair<dev_t, ino_t>> seen;
        std::uint64_t expected = 0;
        auto add = [&](const fs::path& path) {
            struct stat st {};
            REQUIRE(::lstat(path.c_str(), &st) == 0);
            if (seen.insert({st.st_dev, st.st_ino}).second) {
                expected += static_cast<std::uint64_t>(st.st_blocks) * 512;
            }
        };
        add(f.store.snapshots_dir());
        for (const auto& e : fs::recursive_directory_iterator(f.store.snapshots_dir())) {
            add(e.path());
        }
        const auto usage = f.store.usage();
        CHECK(usage.disk_bytes == expected);
        REQUIRE(usage.snapshots.size() == 3);
        // The old lib is linked only by the first generation (its object and its ready tree).
        CHECK(usage.snapshots[2].id == first.id);
        CHECK(usage.snapshots[2].own_bytes >= fs::file_size(first.dir / "ready" / lib));
        CHECK(usage.snapshots[1].own_bytes < fs::file_size(first.dir / "ready" / lib));
    }

    TEST_CASE("two hard-link snapshots of one file: counted once on disk, owned by neither alone") {
        LinkFixture f;
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const std::uint64_t lib_bytes = fs::file_size(f.venv / lib);
        f.snap();
        f.snap();
        replace_file(f.venv / lib, "a new build");            // now only the two snapshots link the old lib
        auto usage = f.store.usage();
        REQUIRE(usage.snapshots.size() == 2);
        CHECK(usage.snapshots[0].apparent_bytes + usage.snapshots[1].apparent_bytes >= 2 * lib_bytes);
        CHECK(usage.disk_bytes >= lib_bytes);
        CHECK(usage.disk_bytes < 2 * lib_bytes);
        CHECK(usage.snapshots[0].own_bytes < lib_bytes);      // deleting either one alone frees no lib
        CHECK(usage.snapshots[1].own_bytes < lib_bytes);
    }

    TEST_CASE("hard-link snapshots share one object per inode: a second snapshot links only what changed") {
        LinkFixture f;
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const auto first = f.snap();
        const auto old_lib = inode_of(f.venv / lib);
        const auto version_links = fs::hard_link_count(f.venv / kVersionPy);
        CHECK(version_links == 2);  // the venv's and the object's
        replace_file(f.venv / lib, "a new build");
        const auto second = f.snap();
        CHECK(fs::hard_link_count(f.venv / kVersionPy) == version_links);  // not linked again
        const auto new_lib = inode_of(f.venv / lib);
        CHECK(fs::exists(object_file(objects, old_lib)));
        CHECK(fs::exists(object_file(objects, new_lib)));
        std::size_t count = 0;
        for ([[maybe_unused]] const auto& entry : fs::directory_iterator(objects)) {
            ++count;
        }
        CHECK(count == 11);  // ten files, one of them in two versions
        CHECK(f.store.verify(first.id).empty());
        CHECK(f.store.verify(second.id).empty());

        // Deleting the first frees the old lib only; the second still restores exactly.
        const std::string at_second = f.digest();
        CHECK(f.store.remove(first.id));
        CHECK_FALSE(fs::exists(object_file(objects, old_lib)));
        CHECK(fs::exists(object_file(objects, new_lib)));
        CHECK(fs::exists(object_file(objects, inode_of(f.venv / kVersionPy))));
        replace_file(f.venv / kVersionPy, "__version__ = 'broken'\n");
        (void)f.store.restore(second.id, f.venv);
        CHECK(f.digest() == at_second);
        CHECK(f.store.remove(second.id));
        CHECK(fs::is_empty(objects));
    }

    TEST_CASE("removing several snapshots at once drops the objects only they needed, and skips unknown ids") {
        LinkFixture f;
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const auto first = f.snap();
        const auto first_lib = inode_of(f.venv / lib);
        replace_file(f.venv / lib, "build 2");
        const auto second = f.snap();
        const auto second_lib = inode_of(f.venv / lib);
        replace_file(f.venv / lib, "build 3");
        const auto third = f.snap();
        const auto removal = f.store.remove(std::vector<std::string>{first.id, "no-such-id", second.id});
        CHECK(removal.removed == std::vector<std::string>{first.id, second.id});
        CHECK(removal.failed.empty());
        CHECK(removal.garbage_error.empty());
        CHECK_FALSE(fs::exists(object_file(objects, first_lib)));
        CHECK_FALSE(fs::exists(object_file(objects, second_lib)));
        CHECK(f.store.verify(third.id).empty());
    }

    TEST_CASE("while one snapshot's index cannot be read, deleting another drops no object") {
        LinkFixture f;
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        const std::string lib = std::string(kSitePackages) + "/torch/lib/libtorch_cuda.so";
        const auto first = f.snap();
        const auto old_lib = inode_of(f.venv / lib);
        replace_file(f.venv / lib, "a new build");
        const auto second = f.snap();
        stackup::base::write_file_atomic(second.dir / "index.tsv", "not an index\n");
        CHECK(f.store.remove(first.id));
        CHECK(fs::exists(object_file(objects, old_lib)));  // what the unreadable one needs is unknown
    }

    TEST_CASE("objects a crashed create linked are dropped with its incomplete snapshot") {
        LinkFixture f;
        const auto info = f.snap();
        const fs::path objects = f.store.snapshots_dir() / ".objects";
        replace_file(f.venv / kVersionPy, "__version__ = 'new'\n");
        const auto stray = object_file(objects, inode_of(f.venv / kVersionPy));
        fs::create_hard_link(f.venv / kVersionPy, stray);  // linked, then the create died
        fs::create_directory(f.store.snapshots_dir() / "20261203T000000Z-dead");
        CHECK(f.store.cleanup_incomplete() == std::vector<std::string>{"20261203T000000Z-dead"});
        CHECK_FALSE(fs::exists(stray));
        CHECK(f.store.verify(info.id).empty());
    }

    TEST_CASE("an absent store uses nothing") {
        stackup::testing::TempDir dir;
        CHECK(Store(dir / "nowhere").usage() == StoreUsage{});
    }
}
