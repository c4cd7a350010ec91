#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "skip.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/reflink.hpp"
#include "snapshot/store.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;
using stackup::Error;
using stackup::ExitCode;

namespace {

const char* const kReflinkDirVariable = "STACKUP_TEST_REFLINK_DIR";

// Whether `dir` can clone a file into itself.
bool has_reflinks(const fs::path& dir) {
    const fs::path probe = stackup::base::make_temp_dir(dir, "stackup-reflink-probe-");
    write_bytes(probe / "venv/file", "x");
    const bool supported = probe_reflink(probe / "venv", probe).supported;
    fs::remove_all(probe);
    return supported;
}

// A temp dir on a filesystem with reflinks ($STACKUP_TEST_REFLINK_DIR, else
// $TMPDIR when it has them), kept and named when the test fails, as TempDir is.
// None: the caller skips loudly.
std::optional<fs::path> reflink_dir() {
    const char* env = std::getenv(kReflinkDirVariable);
    const fs::path parent = env != nullptr && *env != '\0' ? fs::path(env) : fs::temp_directory_path();
    if (!has_reflinks(parent)) {
        return std::nullopt;
    }
    fs::path dir = stackup::base::make_temp_dir(parent, "stackup-test-");
    stackup::testing::live_temp_dirs().push_back(dir);
    return dir;
}

std::string skip_reason() {
    return std::string("no filesystem with reflinks here (") + filesystem_name(fs::temp_directory_path()) +
           " at " + fs::temp_directory_path().string() + "); set " + kReflinkDirVariable +
           " to a directory on btrfs or XFS (reflink=1) to run it";
}




}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("an explicit reflink snapshot where the filesystem has none fails clearly and leaves nothing" *
              doctest::test_suite("conditional")) {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        if (has_reflinks(dir.path())) {
            stackup::testing::skip(dir.path().string() + " has reflinks, so nothing fails here");
            return;
        }
        Store store(dir / "state");
        const Error e = error_of([&] { (void)store.create(dir / "venv", {"t", "", {}, Strategy::reflink}); });
        CHECK(e.code() == ExitCode::usage);
        const std::string what = e.what();
        CHECK(what.find("cannot take a reflink snapshot of " + fs::canonical(dir / "venv").string()) !=
              std::string::npos);
        CHECK(what.find("(" + filesystem_name(dir.path()) + ")") != std::string::npos);
        CHECK(what.find("failed: ") != std::string::npos);  // and the errno's words
        CHECK(what.find("hardlink or copy") != std::string::npos);
        CHECK(fs::is_empty(store.snapshots_dir()));  // no snapshot dir, no probe file
        CHECK(store.list().empty());
    }

    TEST_CASE("probe_reflink says no across filesystems, naming both" * doctest::test_suite("conditional")) {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        if (!fs::is_directory("/dev/shm") || filesystem_name("/dev/shm") == filesystem_name(dir.path())) {
            stackup::testing::skip("no second filesystem at /dev/shm to clone across");
            return;
        }
        const fs::path shm = stackup::base::make_temp_dir("/dev/shm", "stackup-test-");
        stackup::testing::live_temp_dirs().push_back(shm);
        const ReflinkProbe probe = probe_reflink(dir / "venv", shm);
        CHECK_FALSE(probe.supported);
        CHECK(probe.reason.find(filesystem_name(shm)) != std::string::npos);
        CHECK(fs::is_empty(shm));
    }

    TEST_CASE("copy_tree with FileData::clone fails where it cannot clone; clone_or_copy copies instead" *
              doctest::test_suite("conditional")) {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        if (has_reflinks(dir.path())) {
            stackup::testing::skip(dir.path().string() + " has reflinks, so cloning works here");
            return;
        }
        CopyOptions clone;
        clone.data = FileData::clone;
        CHECK_THROWS_WITH_AS((void)copy_tree(dir / "venv", dir / "clone", clone), doctest::Contains("cannot clone"),
                             std::system_error);
        CHECK_FALSE(fs::exists(fs::symlink_status(dir / "clone")));
        CopyOptions fallback;
        fallback.data = FileData::clone_or_copy;
        fallback.record_copies = true;
        const TreeIndex copied = copy_tree(dir / "venv", dir / "copy", fallback);
        CHECK(tree_digest(index_tree(dir / "copy", Contents::hash)) ==
              tree_digest(index_tree(dir / "venv", Contents::hash)));
        CHECK(copied.find(kVersionPy)->inode == inode_of(dir / "copy" / kVersionPy));
    }

    TEST_CASE("a reflink snapshot: its own inodes, sha256s, untouched by in-place writes, restored exactly" *
              doctest::test_suite("conditional")) {
        const auto dir = reflink_dir();
        if (!dir) {
            stackup::testing::skip(skip_reason());
            return;
        }
        const fs::path venv = *dir / "venv";
        build_fake_venv(venv);
        const std::string original = tree_digest(index_tree(venv, Contents::hash));
        Store store(*dir / "state");
        const SnapshotInfo info = store.create(venv, {"t", "", {}, Strategy::automatic});
        CHECK(info.strategy == Strategy::reflink);
        CHECK(info.strategy_reason.find("automatic: reflink, cloning ") != std::string::npos);
        const TreeIndex index = store.index(info);
        const TreeEntry* e = index.find(kVersionPy);
        REQUIRE(e != nullptr);
        CHECK(e->sha256 == stackup::base::sha256_file(venv / kVersionPy));
        CHECK(e->inode == inode_of(info.dir / "tree" / kVersionPy));
        CHECK(e->inode != inode_of(venv / kVersionPy));

        rewrite_in_place(venv / kVersionPy, "cuda = '13.0'\n");  // reaches a hard link, not a clone
        fs::remove_all(venv / kSitePackages / "torch/lib");
        write_bytes(venv / "stray.py", "x");
        set_mode(venv / "bin/python3", 0700);
        CHECK(store.verify(info.id).empty());
        const RestoreResult r = store.restore(info.id, venv);
        CHECK(r.warnings.empty());
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == original);
        CHECK(store.verify(info.id).empty());
    }

    TEST_CASE("a reflink snapshot whose clone was changed is refused, naming the file" *
              doctest::test_suite("conditional")) {
        const auto dir = reflink_dir();
        if (!dir) {
            stackup::testing::skip(skip_reason());
            return;
        }
        const fs::path venv = *dir / "venv";
        build_fake_venv(venv);
        Store store(*dir / "state");
        const SnapshotInfo info = store.create(venv, {"t", "", {}, Strategy::reflink});
        CHECK(info.strategy_reason.find("asked for reflink: cloning ") != std::string::npos);
        const fs::path clone = info.dir / "tree" / kVersionPy;
        struct stat st {};
        REQUIRE(::lstat(clone.c_str(), &st) == 0);
        rewrite_in_place(clone, "cuda = '99.9'\n");  // same size, and the old mtime back
        set_mtime(clone, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec);
        const std::string before = tree_digest(index_tree(venv, Contents::hash));
        CHECK(store.verify(info.id) == std::vector<std::string>{"content differs: " + kVersionPy});
        const Error e = error_of([&] { (void)store.restore(info.id, venv); });
        CHECK(e.code() == ExitCode::rollback_failed);
        CHECK(std::string(e.what()).find("content differs: " + kVersionPy) != std::string::npos);
        CHECK(tree_digest(index_tree(venv, Contents::hash)) == before);
    }
}
