#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "base/fs.hpp"
#include "skip.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/test_fake_venv.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::snapshot;
using namespace stackup::snapshot::testing;

TEST_SUITE("snapshot") {
    TEST_CASE("copy_tree makes an exact copy and returns the source's index in one pass") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        const TreeIndex before = index_tree(dir / "venv", Contents::hash);

        const TreeIndex copied = copy_tree(dir / "venv", dir / "copy");
        CHECK(copied == before);
        const TreeIndex after = index_tree(dir / "copy", Contents::hash);
        CHECK(diff(before, after).empty());
        CHECK(tree_digest(after) == tree_digest(before));
        CHECK(fs::is_symlink(dir / "copy/bin/python"));
        CHECK(fs::read_symlink(dir / "copy/bin/dangling") == "../lib/nowhere/python3.99");
        // The source is left as it was (reading does not change mtimes).
        CHECK(index_tree(dir / "venv", Contents::hash) == before);
    }

    TEST_CASE("copy_tree with metadata_only copies in the kernel, the same tree") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        const TreeIndex copied = copy_tree(dir / "venv", dir / "copy", Contents::metadata_only);
        CHECK(copied.find("pyvenv.cfg")->sha256.empty());
        CHECK(tree_digest(index_tree(dir / "copy", Contents::hash)) ==
              tree_digest(index_tree(dir / "venv", Contents::hash)));
    }

    TEST_CASE("copy_tree refuses an existing destination and leaves it alone") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        dir.write("copy/keep.txt", "mine");
        CHECK_THROWS_WITH_AS((void)copy_tree(dir / "venv", dir / "copy"),
                             doctest::Contains((dir / "copy").string().c_str()), std::system_error);
        CHECK(stackup::base::read_file(dir / "copy/keep.txt") == "mine");
    }

    TEST_CASE("copy_tree of a tree it cannot copy leaves nothing behind") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        REQUIRE(::mkfifo((dir / "venv/bin/fifo").c_str(), 0644) == 0);
        CHECK_THROWS_WITH((void)copy_tree(dir / "venv", dir / "copy"),
                          doctest::Contains((dir / "venv/bin/fifo").string().c_str()));
        CHECK_FALSE(fs::exists(fs::symlink_status(dir / "copy")));
    }

    TEST_CASE("copy_tree keeps owners when run as root" * doctest::test_suite("conditional")) {
        if (::geteuid() != 0) {
            stackup::testing::skip("needs root to chown");
            return;
        }
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        REQUIRE(::lchown((dir / "venv/pyvenv.cfg").c_str(), 1234, 2345) == 0);
        REQUIRE(::lchown((dir / "venv/bin/python").c_str(), 1235, 2346) == 0);
        REQUIRE(::lchown((dir / "venv/share/empty").c_str(), 1236, 2347) == 0);
        REQUIRE(::chmod((dir / "venv/bin/suid-helper").c_str(), 04755) == 0);
        REQUIRE(::lchown((dir / "venv/bin/suid-helper").c_str(), 1237, 2348) == 0);
        REQUIRE(::chmod((dir / "venv/bin/suid-helper").c_str(), 04755) == 0);  // chown cleared setuid
        pin_mtimes(dir / "venv");
        (void)copy_tree(dir / "venv", dir / "copy");
        struct stat st {};
        REQUIRE(::lstat((dir / "copy/pyvenv.cfg").c_str(), &st) == 0);
        CHECK(st.st_uid == 1234);
        CHECK(st.st_gid == 2345);
        REQUIRE(::lstat((dir / "copy/bin/python").c_str(), &st) == 0);
        CHECK(st.st_uid == 1235);
        REQUIRE(::lstat((dir / "copy/share/empty").c_str(), &st) == 0);
        CHECK(st.st_gid == 2347);
        REQUIRE(::lstat((dir / "copy/bin/suid-helper").c_str(), &st) == 0);
        CHECK(st.st_uid == 1237);
        CHECK((st.st_mode & 07777) == 04755);
    }

    TEST_CASE("space_needed rounds files up to blocks and counts inodes") {
        TreeIndex plan;
        plan.entries = {
            {".", EntryType::dir, 0755, 0, 0, "", ""},
            {"a", EntryType::file, 0644, 1, 0, "", ""},
            {"b", EntryType::file, 0644, 4096, 0, "", ""},
            {"c", EntryType::file, 0644, 0, 0, "", ""},
            {"l", EntryType::symlink, 0777, 7, 0, "python3", ""},
            {"m", EntryType::symlink, 0777, 80, 0, std::string(80, 'x'), ""},
        };
        CHECK(space_needed(plan, 4096) == SpaceNeeded{4 * 4096, 6});
    }

    TEST_CASE("require_free_space fails clearly when the copy will not fit") {
        stackup::testing::TempDir dir;
        TreeIndex plan;
        plan.entries = {{"huge", EntryType::file, 0644, 1ull << 60, 0, "", ""}};
        try {
            require_free_space(dir.path(), plan, "/some/venv");
            FAIL("expected a throw");
        } catch (const std::system_error& e) {
            CHECK(e.code().value() == ENOSPC);
            const std::string what = e.what();
            CHECK(what.find(dir.path().string()) != std::string::npos);
            CHECK(what.find("/some/venv") != std::string::npos);
            CHECK(what.find("needs") != std::string::npos);
        }
        plan.entries[0].size = 1;
        CHECK_NOTHROW(require_free_space(dir.path(), plan, "/some/venv"));
    }

    TEST_CASE("remove_tree removes read-only trees") {
        stackup::testing::TempDir dir;
        build_fake_venv(dir / "venv");
        set_mode(dir / "venv/share", 0555);
        set_mode(dir / "venv/include/private", 0000);
        CHECK(remove_tree(dir / "venv"));
        CHECK_FALSE(fs::exists(dir / "venv"));
        CHECK_FALSE(remove_tree(dir / "venv"));
    }
}
