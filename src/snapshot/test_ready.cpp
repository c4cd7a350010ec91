#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/link.hpp"
#include "snapshot/ready.hpp"
#include "snapshot/store.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;

namespace {

// An object store of links to the fake venv, as a hard-link snapshot draws on it.
struct ReadyFixture {
    stackup::testing::TempDir dir;
    fs::path venv = dir / "venv";
    fs::path flat = dir / "flat";
    fs::path ready = dir / "ready";
    TreeIndex index;
    ReadyFixture() {
        build_fake_venv(venv);
        index = link_tree(venv, flat).index;
    }
    Convergence converge() const { return converge_links(index, flat, ready); }
    // The ready tree as restore needs it: the index's metadata, and the snapshot's own inodes.
    std::vector<std::string> problems() const {
        const TreeIndex now = index_tree(ready, Contents::records);
        std::vector<std::string> out = diff(index, now);
        for (const auto& e : index.entries) {
            const TreeEntry* seen = now.find(e.path);
            if (e.type == EntryType::file && seen != nullptr && seen->inode != e.inode) {
                out.push_back("inode differs: " + e.path);
            }
        }
        return out;
    }
};



}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("converge_links builds the ready tree from nothing: the index, on the snapshot's inodes") {
        ReadyFixture f;
        const Convergence c = f.converge();
        CHECK(c.damage.empty());
        CHECK(c.changes >= f.index.entries.size());
        CHECK(f.problems().empty());
        CHECK(inode_of(f.ready / kInit) == inode_of(f.venv / kInit));
        CHECK(fs::read_symlink(f.ready / "bin/python") == "python3");
        CHECK(f.converge().changes == 0);  // a ready tree that is up to date costs one walk
    }

    TEST_CASE("converge_links repairs any tree into the ready tree, read-only directories included") {
        ReadyFixture f;
        REQUIRE(f.converge().damage.empty());
        fs::remove(f.ready / kInit);                                           // missing file
        write_bytes(f.ready / kInit, "__version__ = 'other'\n");              // ... replaced by another inode
        write_bytes(f.ready / "stray/deep/file.py", "x");                     // extra tree
        fs::remove(f.ready / "pyvenv.cfg");
        fs::create_directories(f.ready / "pyvenv.cfg/inside");                // a dir where a file was
        fs::remove(f.ready / "bin/python");
        make_symlink("python3.99", f.ready / "bin/python");                   // retargeted symlink
        fs::remove_all(f.ready / "share");                                    // missing dirs
        set_mode(f.ready / "include/private", 0500);                          // wrong mode, read-only
        write_bytes(f.ready / "include/private/stray", "x");                  // ... with an extra inside
        set_mode(f.ready / "include/private", 0500);
        set_mode(f.ready / "bin", 0555);                                      // read-only dir with changes
        set_mtime(f.ready / "lib", 42);
        REQUIRE(!f.problems().empty());

        const Convergence c = f.converge();
        CHECK(c.damage.empty());
        CHECK(c.changes > 0);
        CHECK(f.problems().empty());
        CHECK(f.converge().changes == 0);
    }

    TEST_CASE("converge_links gives shared inodes their recorded mode and mtime back") {
        ReadyFixture f;
        REQUIRE(f.converge().damage.empty());
        set_mode(f.venv / "bin/python3", 0700);  // through the venv: the same inode
        CHECK(f.converge().changes == 1);
        CHECK(f.problems().empty());
        CHECK((fs::status(f.venv / "bin/python3").permissions() & fs::perms::group_exec) != fs::perms::none);
    }

    TEST_CASE("converge_links refuses a file rewritten in place and changes nothing") {
        ReadyFixture f;
        REQUIRE(f.converge().damage.empty());
        fs::remove(f.ready / "bin/python");  // something it would change
        {
            stackup::base::UniqueFd fd = stackup::base::open_file(f.venv / kInit, O_WRONLY | O_TRUNC);
            REQUIRE(::write(fd.get(), "x", 1) == 1);
        }
        const Convergence c = f.converge();
        REQUIRE(c.damage.size() == 1);
        CHECK(c.damage[0].find(kInit) != std::string::npos);
        CHECK(c.changes == 0);
        CHECK_FALSE(fs::exists(fs::symlink_status(f.ready / "bin/python")));
    }

    TEST_CASE("converge_links judges a file it must link by its object's record") {
        ReadyFixture f;
        const fs::path object = object_file(f.flat, f.index.find(kInit)->inode);
        fs::remove(object);
        const Convergence c = f.converge();
        CHECK(c.damage == std::vector<std::string>{"missing: " + kInit + " (" + object.string() + ")"});
        CHECK_FALSE(fs::exists(f.ready));
    }

    TEST_CASE("a hardlink restore leaves the replaced venv behind as the next ready tree") {
        LinkFixture f;
        const fs::path& venv = f.venv;
        Store& store = f.store;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        CHECK_FALSE(fs::exists(info.dir / "ready"));

        fs::remove(venv / kInit);
        write_bytes(venv / kInit, "broken = True\n");
        write_bytes(venv / "stray.py", "x");
        const RestoreResult first = store.restore(info.id, venv);
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == original);
        REQUIRE(fs::exists(info.dir / "ready"));
        CHECK(fs::exists(info.dir / "ready/stray.py"));  // the replaced venv, as it was
        CHECK(store.prepare(info.id) > 0);               // brought back to the snapshot
        CHECK(store.prepare(info.id) == 0);
        CHECK_FALSE(fs::exists(info.dir / "ready/stray.py"));
        CHECK(inode_of(info.dir / "ready" / kInit) == inode_of(venv / kInit));
        REQUIRE(first.phases.size() == 6);
        CHECK(first.phases[1].name == "stage");

        write_bytes(venv / "stray.py", "again");
        (void)store.restore(info.id, venv);
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == original);
        CHECK(store.verify(info.id).empty());
    }

    TEST_CASE("a hardlink restore recreates a deleted venv, and builds the ready tree again next time") {
        LinkFixture f;
        const fs::path& venv = f.venv;
        Store& store = f.store;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        fs::remove_all(venv);
        (void)store.restore(info.id, venv);
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == original);
        CHECK_FALSE(fs::exists(info.dir / "ready"));  // it became the venv; nothing came back
        fs::remove(venv / kInit);
        (void)store.restore(info.id, venv);
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == original);
        CHECK(store.prepare(info.id) > 0);  // the replaced venv lacked a file
        CHECK(store.prepare(info.id) == 0);
    }

    TEST_CASE("prepare builds the ready tree ahead of a restore; copies have none") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        Store store(dir / "state");
        const SnapshotInfo linked = store.create(dir / "venv", {"t", "", {}, Strategy::hardlink});
        CHECK(store.prepare(linked.id) > 0);
        CHECK(store.prepare(linked.id) == 0);
        CHECK(fs::is_directory(linked.dir / "ready/bin"));
        const SnapshotInfo copied = store.create(dir / "venv", {"t", "", {}, Strategy::copy});
        CHECK(store.prepare(copied.id) == 0);
        CHECK_FALSE(fs::exists(copied.dir / "ready"));
        // The ready tree links the objects' inodes again: counted once.
        const auto usage = store.usage();
        REQUIRE(usage.snapshots.size() == 2);
        CHECK(usage.snapshots[1].id == linked.id);
        CHECK(usage.snapshots[1].apparent_bytes >= linked.file_bytes);
        CHECK(usage.snapshots[1].apparent_bytes < 2 * linked.file_bytes);
    }
}
