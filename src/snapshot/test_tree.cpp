#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>

#include "base/sha256.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "snapshot/tree.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;

namespace {

const TreeEntry& entry(const TreeIndex& index, const std::string& path) {
    const TreeEntry* e = index.find(path);
    if (e == nullptr) {
        throw std::runtime_error("no entry " + path);
    }
    return *e;
}

std::string sp(const std::string& rel) {
    return std::string(kSitePackages) + "/" + rel;
}

TreeIndex sample_index() {
    TreeIndex index;
    index.entries = {
        {".", EntryType::dir, 0755, 0, 100, "", ""},
        {"bin/python", EntryType::symlink, 0777, 7, 200, "python3", ""},
        {"lib/a.py", EntryType::file, 0644, 3, 300, "", std::string(64, 'a')},
        {"lib/b.py", EntryType::file, 0644, 3, 400, "", std::string(64, 'b')},
    };
    return index;
}

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("index_tree records types, modes, sizes, mtimes, targets and hashes") {
        stackup::testing::TempDir dir;
        const auto root = dir / "venv";
        build_fake_venv(root);
        const TreeIndex index = index_tree(root, Contents::hash);

        REQUIRE(!index.entries.empty());
        CHECK(index.entries.front().path == ".");
        CHECK(std::is_sorted(index.entries.begin(), index.entries.end(),
                             [](const TreeEntry& a, const TreeEntry& b) { return path_less(a.path, b.path); }));
        CHECK(entry(index, ".").mode == 0750);
        CHECK(entry(index, "bin/python").type == EntryType::symlink);
        CHECK(entry(index, "bin/python").target == "python3");
        CHECK(entry(index, "bin/dangling").target == "../lib/nowhere/python3.99");
        CHECK(entry(index, "bin/python3").mode == 0755);
        CHECK(entry(index, "bin/suid-helper").mode == 04755);
        CHECK(entry(index, "tmp-sticky").mode == 01777);
        CHECK(entry(index, sp("secret.pth")).mode == 0600);
        CHECK(entry(index, "share/empty").type == EntryType::dir);
        CHECK(entry(index, "share/empty").size == 0);

        const auto& lib = entry(index, sp("torch/lib/libtorch_cuda.so"));
        CHECK(lib.size == 3 * 1024 * 1024 + 17);
        CHECK(lib.sha256 == stackup::base::sha256_hex(binary_blob(3 * 1024 * 1024 + 17, 2)));
        CHECK(entry(index, sp("sglang/__init__.py")).sha256 == stackup::base::sha256_hex(""));

        struct stat st {};
        REQUIRE(::lstat((root / "bin/python").c_str(), &st) == 0);
        CHECK(entry(index, "bin/python").mtime_ns == st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec);
        CHECK(entry(index, "pyvenv.cfg").mtime_ns % 1'000'000'000 != 0);  // nanoseconds kept
    }

    TEST_CASE("index_tree does not follow symlinks to directories") {
        stackup::testing::TempDir dir;
        dir.write("outside/secret.txt", "x");
        dir.write("root/a.txt", "a");
        make_symlink((dir / "outside").string(), dir / "root/link");
        const TreeIndex index = index_tree(dir / "root", Contents::hash);
        CHECK(index.entries.size() == 3);
        CHECK(entry(index, "link").type == EntryType::symlink);
        CHECK(index.find("link/secret.txt") == nullptr);
        CHECK_THROWS_WITH(index_tree(dir / "root/link", Contents::hash), doctest::Contains("not a directory"));
    }

    TEST_CASE("index_tree refuses other file types, naming the path") {
        stackup::testing::TempDir dir;
        dir.write("root/a.txt", "a");
        REQUIRE(::mkfifo((dir / "root/fifo").c_str(), 0644) == 0);
        CHECK_THROWS_WITH(index_tree(dir / "root", Contents::metadata_only),
                          doctest::Contains((dir / "root/fifo").string().c_str()));
    }

    TEST_CASE("metadata_only leaves hashes empty and everything else equal") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        TreeIndex hashed = index_tree(dir / "venv", Contents::hash);
        TreeIndex meta = index_tree(dir / "venv", Contents::metadata_only);
        CHECK(std::all_of(meta.entries.begin(), meta.entries.end(),
                          [](const TreeEntry& e) { return e.sha256.empty(); }));
        for (auto& e : hashed.entries) {
            e.sha256.clear();
        }
        CHECK(hashed == meta);
    }

    TEST_CASE("identity records each file's type and inode only, dirs and symlinks in full") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        const TreeIndex records = index_tree(dir / "venv", Contents::records);
        const TreeIndex identity = index_tree(dir / "venv", Contents::identity);
        REQUIRE(identity.entries.size() == records.entries.size());
        for (std::size_t i = 0; i < records.entries.size(); ++i) {
            const TreeEntry& want = records.entries[i];
            const TreeEntry& got = identity.entries[i];
            CHECK(got.path == want.path);
            CHECK(got.type == want.type);
            if (want.type == EntryType::file) {
                CHECK(got.inode == want.inode);
                CHECK(got.mode == 0);  // not looked at
                CHECK(got.mtime_ns == 0);
            } else {
                CHECK(got.mode == want.mode);
                CHECK(got.mtime_ns == want.mtime_ns);
                CHECK(got.target == want.target);
            }
        }
        CHECK(diff_identity(records, identity).empty());
    }

    TEST_CASE("FileRecords: a second walk takes the files the first one saw from their inode, and stats the rest") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        fs::copy(dir / "venv", dir / "ready",
                 fs::copy_options::recursive | fs::copy_options::create_hard_links | fs::copy_options::copy_symlinks);
        // The ready tree's own: a file replaced (a new inode) and one added.
        const auto replaced = dir / "ready" / sp("torch/__init__.py");
        fs::remove(replaced);
        write_bytes(replaced, "not the venv's\n");
        write_bytes(dir / "ready" / sp("torch/extra.py"), "x = 1\n");

        FileRecords venv_files;
        const TreeIndex venv = index_tree(dir / "venv", Contents::records, &venv_files);
        CHECK(venv_files.usable);
        CHECK(venv_files.files.size() ==
              static_cast<std::size_t>(std::count_if(venv.entries.begin(), venv.entries.end(),
                                                     [](const TreeEntry& e) { return e.type == EntryType::file; })));
        const TreeIndex fresh = index_tree(dir / "ready", Contents::records);
        CHECK(index_tree(dir / "ready", Contents::records, nullptr, &venv_files) == fresh);
        CHECK(entry(fresh, sp("torch/__init__.py")).inode != entry(venv, sp("torch/__init__.py")).inode);

        // Proof that the records are used: a shared file's record, altered, shows in the second walk;
        // the replaced one (not a shared inode) is stat'ed all the same.
        struct stat st {};
        REQUIRE(::lstat((dir / "venv" / "bin/python3").c_str(), &st) == 0);
        FileRecords altered = venv_files;
        altered.files.at({static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)}).size = 999'999;
        const TreeIndex reused = index_tree(dir / "ready", Contents::records, nullptr, &altered);
        CHECK(entry(reused, "bin/python3").size == 999'999);
        CHECK(entry(reused, sp("torch/__init__.py")) == entry(fresh, sp("torch/__init__.py")));
        CHECK(entry(reused, sp("torch/extra.py")) == entry(fresh, sp("torch/extra.py")));

        // Records from a filesystem whose listings do not name inodes are not used; nor are they
        // for a walk that hashes.
        altered.usable = false;
        CHECK(index_tree(dir / "ready", Contents::records, nullptr, &altered) == fresh);
        altered.usable = true;
        CHECK(entry(index_tree(dir / "ready", Contents::metadata_only, nullptr, &altered), "bin/python3").size != 999'999);
    }

    TEST_CASE("diff_identity: files by inode, everything else as diff does") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        const TreeIndex before = index_tree(dir / "venv", Contents::records);
        const auto version_inode = inode_of(dir / "venv" / kVersionPy);
        set_mode(dir / "venv" / kInit, 0600);  // on the inode: not a file's identity
        write_bytes(dir / "venv/new.tmp", "replaced\n");  // a new inode while the old one lives: not reused
        fs::rename(dir / "venv/new.tmp", dir / "venv" / kVersionPy);
        write_bytes(dir / "venv/stray.py", "x");
        fs::remove(dir / "venv/bin/python");
        const TreeIndex after = index_tree(dir / "venv", Contents::identity);
        const auto problems = diff_identity(before, after);
        CHECK(std::find(problems.begin(), problems.end(),
                        "inode differs: " + kVersionPy + ": " + std::to_string(version_inode) + " -> " +
                            std::to_string(inode_of(dir / "venv" / kVersionPy))) != problems.end());
        CHECK(std::find(problems.begin(), problems.end(), "extra: stray.py") != problems.end());
        CHECK(std::find(problems.begin(), problems.end(), "missing: bin/python") != problems.end());
        CHECK(std::none_of(problems.begin(), problems.end(),
                           [](const std::string& p) { return p.find(kInit) != std::string::npos; }));
        // Directories are compared in full: their mtimes moved with the changes inside them.
        CHECK(std::find(problems.begin(), problems.end(), "mtime differs: bin: " +
                                                              format_time_ns(entry(before, "bin").mtime_ns) + " -> " +
                                                              format_time_ns(entry(after, "bin").mtime_ns)) !=
              problems.end());
    }

    TEST_CASE("diff_drift: what changed in a live tree, not what linking it or importing from it moves") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        const TreeIndex before = index_tree(dir / "venv", Contents::records);
        fs::create_hard_link(dir / "venv" / kInit, dir / "elsewhere");  // moves the file's ctime only
        write_bytes(dir / "venv/lib/__pycache__/x.pyc", "bytecode");    // a python importing: no change
        CHECK(diff_drift(before, index_tree(dir / "venv", Contents::records)).empty());

        const auto version_inode = inode_of(dir / "venv" / kVersionPy);
        write_bytes(dir / "venv/new.tmp", "replaced\n");
        fs::rename(dir / "venv/new.tmp", dir / "venv" / kVersionPy);
        write_bytes(dir / "venv/stray.py", "x");
        set_mode(dir / "venv" / kInit, 0600);
        const auto problems = diff_drift(before, index_tree(dir / "venv", Contents::records));
        CHECK(std::find(problems.begin(), problems.end(),
                        "replaced: " + kVersionPy + " (inode " + std::to_string(version_inode) + " -> " +
                            std::to_string(inode_of(dir / "venv" / kVersionPy)) + ")") != problems.end());
        CHECK(std::find(problems.begin(), problems.end(), "extra: stray.py") != problems.end());
        CHECK(std::find(problems.begin(), problems.end(), "mode differs: " + kInit + ": 0644 -> 0600") !=
              problems.end());
        // Directory mtimes follow their entries, which are compared themselves.
        CHECK(std::none_of(problems.begin(), problems.end(),
                           [](const std::string& p) { return p.starts_with("mtime differs: lib"); }));
    }

    TEST_CASE("diff names each kind of difference") {
        const TreeIndex want = sample_index();
        CHECK(diff(want, want).empty());

        TreeIndex got = want;
        got.entries.erase(got.entries.begin() + 3);                                 // lib/b.py
        got.entries.push_back({"lib/c.py", EntryType::file, 0644, 1, 1, "", ""});  // extra
        got.entries[0].mode = 0700;
        got.entries[1].target = "python3.12";
        got.entries[2].sha256 = std::string(64, 'c');
        got.entries[2].mtime_ns = 1'000'000'001;
        const auto d = diff(want, got);
        const std::vector<std::string> expected = {
            "mode differs: .: 0755 -> 0700",
            "symlink target differs: bin/python: python3 -> python3.12",
            "content differs: lib/a.py",
            "mtime differs: lib/a.py: 1970-01-01T00:00:00.000000300Z -> 1970-01-01T00:00:01.000000001Z",
            "missing: lib/b.py",
            "extra: lib/c.py",
        };
        CHECK(d == expected);
    }

    TEST_CASE("diff reports type and size changes, and skips unhashed contents") {
        const TreeIndex want = sample_index();
        TreeIndex got = want;
        got.entries[1] = {"bin/python", EntryType::file, 0777, 7, 200, "", std::string(64, 'x')};
        got.entries[3].size = 5;
        got.entries[2].sha256.clear();  // metadata-only side: contents not compared
        const std::vector<std::string> expected = {
            "type differs: bin/python: symlink -> file",
            "content differs: lib/b.py (size 3 -> 5)",
        };
        CHECK(diff(want, got) == expected);
    }

    TEST_CASE("tree_digest is stable and changes with every field") {
        const TreeIndex base = sample_index();
        const std::string digest = tree_digest(base);
        CHECK(digest.size() == 64);
        CHECK(tree_digest(sample_index()) == digest);
        std::vector<TreeIndex> variants(7, base);
        variants[0].entries[2].path = "lib/a2.py";
        variants[1].entries[2].type = EntryType::dir;
        variants[2].entries[2].mode = 0600;
        variants[3].entries[2].size = 4;
        variants[4].entries[2].mtime_ns += 1;
        variants[5].entries[1].target = "python";
        variants[6].entries[2].sha256[0] = 'f';
        for (const auto& v : variants) {
            CHECK(tree_digest(v) != digest);
        }
    }

    TEST_CASE("tree_digest's bytes are pinned: snapshots taken earlier must keep matching their index") {
        // The same bytes hashed by Python's hashlib: header, then per entry path, type, mode, size,
        // mtime, target, sha256 (and inode, ctime where recorded), NUL-separated, one line each.
        TreeIndex index;
        index.entries.push_back({".", EntryType::dir, 0755, 0, 1'000'000'000, "", "", 0, 0});
        index.entries.push_back({"a b.py", EntryType::file, 0644, 12, -5, "", std::string(32 * 2, 'a'), 0, 0});
        for (std::size_t i = 1; i < 64; i += 2) {
            index.entries.back().sha256[i] = 'b';
        }
        index.entries.push_back({"lib", EntryType::file, 0600, 3, 7, "", "", 123, 456});
        index.entries.push_back({"link", EntryType::symlink, 0777, 3, 9, "lib", "", 0, 0});
        CHECK(tree_digest(index) == "ef8ac92ece103f0ae1bf82ba682a6c7bf5692ea7dba9b54c0603693f0fd7bde6");
    }

    TEST_CASE("path order puts the root first and directories before their contents") {
        CHECK(path_less(".", "-weird"));
        CHECK_FALSE(path_less("-weird", "."));
        CHECK_FALSE(path_less(".", "."));
        CHECK(path_less("a", "a/b"));
        CHECK(path_less("a-b", "a/b"));
    }

    TEST_CASE("format_time_ns and format_mode") {
        CHECK(format_time_ns(0) == "1970-01-01T00:00:00.000000000Z");
        CHECK(format_time_ns(1'764'691'501'123'456'789) == "2025-12-02T16:05:01.123456789Z");
        CHECK(format_time_ns(-1) == "1969-12-31T23:59:59.999999999Z");
        CHECK(format_mode(0644) == "0644");
        CHECK(format_mode(04755) == "4755");
    }
}
