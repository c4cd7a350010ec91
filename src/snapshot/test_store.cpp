#include <doctest/doctest.h>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/fs.hpp"
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

struct Fixture {
    stackup::testing::TempDir dir;
    fs::path venv = dir / "venv";
    Store store{dir / "state"};
    Fixture() { build_fake_venv(venv); }

    SnapshotInfo snap(const std::string& label = "before apply") {
        // The copy strategy's tests: they damage the venv in place, which a hard link would share.
        return store.create(venv, {label, "/etc/m.yaml", {{"torch", "2.10.0+cu128"}}, Strategy::copy});
    }
    std::string digest() const { return tree_digest(index_tree(venv, Contents::hash)); }
    // Names in the venv's parent that a restore would have left behind.
    std::vector<std::string> litter() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir.path())) {
            if (e.path().filename().string().rfind(".venv.", 0) == 0) {
                out.push_back(e.path().filename().string());
            }
        }
        return out;
    }
};

// Rewrites a file with the same number of bytes and its old mtime: only its hash tells.
void rewrite_same_size(const fs::path& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    std::string bytes = stackup::base::read_file(path);
    REQUIRE(!bytes.empty());
    bytes[0] = static_cast<char>(bytes[0] ^ 0x20);
    write_bytes(path, bytes);
    set_mtime(path, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec);
}

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("create writes tree, index.tsv and a versioned snapshot.json") {
        Fixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();

        CHECK(info.dir == f.store.snapshots_dir() / info.id);
        CHECK(info.id.size() == std::string("20261202T160501Z-3fa9").size());
        CHECK(info.id[8] == 'T');
        CHECK(info.created.back() == 'Z');
        CHECK(info.venv == fs::canonical(f.venv));
        CHECK(info.tree_digest == original);
        CHECK(tree_digest(index_tree(info.dir / "tree", Contents::hash)) == original);
        CHECK(info.file_bytes > 3 * 1024 * 1024);

        const auto doc = nlohmann::json::parse(stackup::base::read_file(info.dir / "snapshot.json"));
        CHECK(doc.at("format") == 1);
        CHECK(doc.at("id") == info.id);
        CHECK(doc.at("label") == "before apply");
        CHECK(doc.at("manifest") == "/etc/m.yaml");
        CHECK(doc.at("strategy") == "copy");
        CHECK(doc.at("venv") == info.venv.string());
        CHECK(doc.at("distributions")[0].at("name") == "torch");
        CHECK(doc.at("distributions")[0].at("version") == "2.10.0+cu128");
        CHECK(doc.at("index").at("file") == "index.tsv");
        CHECK(stackup::base::read_file(info.dir / "index.tsv").rfind("stackup snapshot index 2\n", 0) == 0);

        CHECK(f.store.find(info.id) == info);
        CHECK(f.store.index(info) == index_tree(f.venv, Contents::hash));
        CHECK(f.store.verify(info.id).empty());
    }

    TEST_CASE("restore undoes every kind of damage, mtimes and the root included") {
        Fixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();

        const auto sp = f.venv / kSitePackages;
        fs::remove_all(sp / "torch");                                  // delete a package dir
        write_bytes(sp / "sglang/__init__.py", "broken = True\n");    // rewrite a file
        rewrite_same_size(f.venv / "pyvenv.cfg");                      // same size, same mtime
        write_bytes(sp / "stray.py", "x");                            // add a stray file
        set_mode(f.venv / "bin/python3", 0700);                        // chmod one
        set_mtime(sp / "secret.pth", 42);                              // touch one
        fs::remove(f.venv / "bin/python");                             // symlink -> file
        write_bytes(f.venv / "bin/python", "not a link");
        set_mode(f.venv, 0700);                                        // the root itself
        REQUIRE(f.digest() != original);

        const RestoreResult r = f.store.restore(info.id, f.venv);
        CHECK(r.id == info.id);
        CHECK(r.venv == info.venv);
        CHECK(r.swapped_atomically);
        CHECK(r.warnings.empty());
        CHECK(r.tree_digest == original);
        CHECK(f.digest() == original);
        CHECK(diff(f.store.index(info), index_tree(f.venv, Contents::hash)).empty());
        CHECK(fs::read_symlink(f.venv / "bin/python") == "python3");
        CHECK(f.litter().empty());
        CHECK(f.store.verify(info.id).empty());  // the snapshot survives its restore
    }

    TEST_CASE("restore recreates a venv that was deleted") {
        Fixture f;
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        fs::remove_all(f.venv);
        const RestoreResult r = f.store.restore(info.id, f.venv);
        CHECK(r.tree_digest == original);
        CHECK(f.digest() == original);
        CHECK(f.litter().empty());
    }

    TEST_CASE("a damaged snapshot is refused, naming the file, and the venv is left as it was") {
        Fixture f;
        const SnapshotInfo info = f.snap();
        write_bytes(f.venv / "stray.py", "the venv's own damage");
        const std::string damaged_venv = f.digest();

        const std::string rel = std::string(kSitePackages) + "/torch/version.py";
        rewrite_same_size(info.dir / "tree" / rel);
        const Error e = error_of([&] { (void)f.store.restore(info.id, f.venv); });
        CHECK(e.code() == ExitCode::rollback_failed);
        const std::string what = e.what();
        CHECK(what.find("content differs: " + rel) != std::string::npos);
        CHECK(what.find("damaged") != std::string::npos);
        CHECK(what.find("was not touched") != std::string::npos);
        CHECK(f.digest() == damaged_venv);
        CHECK(f.litter().empty());
        CHECK(f.store.verify(info.id) == std::vector<std::string>{"content differs: " + rel});
    }

    TEST_CASE("a snapshot whose index.tsv was altered is refused") {
        Fixture f;
        const SnapshotInfo info = f.snap();
        const std::string before = f.digest();
        std::string index = stackup::base::read_file(info.dir / "index.tsv");
        index.replace(index.find("\t755\t"), 5, "\t777\t");
        stackup::base::write_file_atomic(info.dir / "index.tsv", index);
        const Error e = error_of([&] { (void)f.store.restore(info.id, f.venv); });
        CHECK(e.code() == ExitCode::rollback_failed);
        CHECK(std::string(e.what()).find((info.dir / "index.tsv").string()) != std::string::npos);
        CHECK(f.digest() == before);
    }

    TEST_CASE("restore refuses an unknown id and a venv the snapshot was not taken of") {
        Fixture f;
        const SnapshotInfo info = f.snap();
        CHECK(error_of([&] { (void)f.store.restore("20000101T000000Z-0000", f.venv); }).code() ==
              ExitCode::rollback_failed);
        build_fake_venv(f.dir / "other");
        const std::string other = tree_digest(index_tree(f.dir / "other", Contents::hash));
        const Error e = error_of([&] { (void)f.store.restore(info.id, f.dir / "other"); });
        CHECK(e.code() == ExitCode::rollback_failed);
        CHECK(std::string(e.what()).find("was taken of") != std::string::npos);
        CHECK(tree_digest(index_tree(f.dir / "other", Contents::hash)) == other);
    }

    TEST_CASE("list is newest first; find and remove") {
        Fixture f;
        CHECK(f.store.list().empty());
        const SnapshotInfo a = f.snap("a");
        const SnapshotInfo b = f.snap("b");
        const SnapshotInfo c = f.snap("c");
        const auto all = f.store.list();
        REQUIRE(all.size() == 3);
        CHECK(all[0] == c);
        CHECK(all[1] == b);
        CHECK(all[2] == a);

        CHECK(f.store.remove(b.id));
        CHECK_FALSE(fs::exists(b.dir));
        CHECK_FALSE(f.store.find(b.id));
        CHECK_FALSE(f.store.remove(b.id));
        CHECK_FALSE(f.store.remove("../state"));
        CHECK(f.store.list() == std::vector<SnapshotInfo>{c, a});
        CHECK(f.store.remove(c.id));
        CHECK(f.store.list().front() == a);
    }

    TEST_CASE("an incomplete snapshot is ignored by list and removed by cleanup") {
        Fixture f;
        const SnapshotInfo done = f.snap();
        const SnapshotInfo half = f.snap();
        fs::remove(half.dir / "snapshot.json");  // as if killed before the last write
        fs::create_directories(f.store.snapshots_dir() / "20990101T000000Z-dead/tree");
        CHECK(f.store.list() == std::vector<SnapshotInfo>{done});
        CHECK_FALSE(f.store.find(half.id));
        CHECK(f.store.cleanup_incomplete() == std::vector<std::string>{half.id, "20990101T000000Z-dead"});
        CHECK_FALSE(fs::exists(half.dir));
        CHECK(fs::exists(done.dir / "tree"));
        CHECK(f.store.cleanup_incomplete().empty());
    }

    TEST_CASE("an unreadable snapshot.json is skipped by list and reported by find") {
        Fixture f;
        const SnapshotInfo info = f.snap();
        stackup::base::write_file_atomic(info.dir / "snapshot.json", "{\"format\": 2}");
        CHECK(f.store.list().empty());
        const Error e = error_of([&] { (void)f.store.find(info.id); });
        CHECK(e.code() == ExitCode::rollback_failed);
        CHECK(std::string(e.what()).find("unsupported format 2") != std::string::npos);
    }

    TEST_CASE("file names that are not UTF-8 survive a snapshot and restore") {
        Fixture f;
        write_bytes(f.venv / "caf\xe9.txt", "latin-1 name");
        make_symlink("caf\xe9.txt", f.venv / "link\xff");
        pin_mtimes(f.venv);
        const std::string original = f.digest();
        const SnapshotInfo info = f.snap();
        fs::remove(f.venv / "caf\xe9.txt");
        (void)f.store.restore(info.id, f.venv);
        CHECK(f.digest() == original);
    }

    TEST_CASE("create refuses a state dir inside the venv and a missing venv") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        Store inside(dir / "venv/.stackup");
        CHECK(error_of([&] { (void)inside.create(dir / "venv", {}); }).code() == ExitCode::usage);
        Store store(dir / "state");
        CHECK_THROWS_AS((void)store.create(dir / "missing", {}), std::system_error);
        CHECK(store.list().empty());
    }

    TEST_CASE("generations: the venv is the generation whose root it is, until it changes; an exchange switches") {
        Fixture f;
        CreateRequest request{"base", "/etc/m.yaml", {}, Strategy::hardlink};
        const SnapshotInfo base = f.store.create(f.venv, request);
        CHECK(base.generation == 1);
        CHECK(base.root_inode == static_cast<std::uint64_t>(inode_of(f.venv)));
        REQUIRE(f.store.live(f.venv));
        CHECK(f.store.live(f.venv)->id == base.id);
        CHECK_FALSE(f.store.exchange_blocker(f.venv));

        // The clone: the base's ready tree; a file replaced in it as uv replaces files.
        (void)f.store.prepare(base.id, false);
        const fs::path clone = f.store.tree_of(base);
        write_bytes(clone / "new.tmp", "__version__ = '2.11.0'\n");
        fs::rename(clone / "new.tmp", clone / kVersionPy);
        CHECK(f.store.drift(base, f.venv).empty());  // the live venv did not move
        request.label = "next";
        request.parent = base.id;
        request.outcome = "applied";
        request.venv = f.venv;
        request.changes = {{"torch", "2.10.0", "2.11.0"}};
        request.plan = {{"torch", {"torch==2.11.0 --hash=sha256:ab12"}}};
        const SnapshotInfo next = f.store.create(clone, request);
        CHECK(f.store.find(next.id)->plan == request.plan);
        CHECK(next.generation == 2);
        CHECK(next.venv == fs::canonical(f.venv));
        CHECK(f.store.find(next.id)->changes == request.changes);

        const auto old_root = inode_of(f.venv);
        f.store.exchange(base, f.venv);
        CHECK(inode_of(f.venv) == next.root_inode);
        CHECK(inode_of(clone) == old_root);
        CHECK(stackup::base::read_file(f.venv / kVersionPy) == "__version__ = '2.11.0'\n");
        REQUIRE(f.store.live(f.venv));
        CHECK(f.store.live(f.venv)->id == next.id);
        CHECK(f.store.drift(base, clone).empty());  // the old tree, exactly as it was

        // A restore of the base keeps the replaced tree as the next generation's: undone by another.
        (void)f.store.restore(base.id, f.venv, next.id);
        CHECK(inode_of(f.venv) == old_root);
        CHECK(f.store.live(f.venv)->id == base.id);
        (void)f.store.restore(next.id, f.venv, base.id);
        CHECK(inode_of(f.venv) == next.root_inode);
        CHECK(stackup::base::read_file(f.venv / kVersionPy) == "__version__ = '2.11.0'\n");

        write_bytes(f.venv / "stray.py", "x");  // a change by hand: no generation is the venv now
        CHECK_FALSE(f.store.live(f.venv));
    }

    TEST_CASE("a removal for later is gone from the list at once; its folder waits in the trash") {
        Fixture f;
        const SnapshotInfo a = f.snap("a");
        auto removal = f.store.remove(std::vector<std::string>{a.id}, true);
        CHECK(removal.removed == std::vector<std::string>{a.id});
        CHECK(f.store.list().empty());
        CHECK_FALSE(fs::exists(a.dir));
        CHECK(f.store.empty_trash() == 1);
        CHECK(f.store.empty_trash() == 0);
    }
}
