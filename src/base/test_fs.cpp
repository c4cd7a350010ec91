#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "base/fs.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup::base;

namespace {

bool fd_is_open(int fd) {
    return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

std::size_t count_entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
        ++n;
    }
    return n;
}

}  // namespace

TEST_SUITE("base") {
    TEST_CASE("UniqueFd closes once, moves ownership, releases") {
        stackup::testing::TempDir dir;
        auto path = dir.write("f", "x");
        int raw = -1;
        {
            UniqueFd fd = open_file(path, O_RDONLY);
            raw = fd.get();
            CHECK(fd_is_open(raw));
            UniqueFd moved = std::move(fd);
            CHECK_FALSE(fd.valid());
            CHECK(moved.get() == raw);
            UniqueFd other;
            other = std::move(moved);
            CHECK(other.get() == raw);
            CHECK(fd_is_open(raw));
        }
        CHECK_FALSE(fd_is_open(raw));

        UniqueFd fd = open_file(path, O_RDONLY);
        int kept = fd.release();
        CHECK_FALSE(fd.valid());
        CHECK(fd_is_open(kept));
        ::close(kept);
    }

    TEST_CASE("open_file sets O_CLOEXEC and names the path on failure") {
        stackup::testing::TempDir dir;
        UniqueFd fd = open_file(dir.write("f", ""), O_RDONLY);
        CHECK((::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
        try {
            (void)open_file(dir / "nope", O_RDONLY);
            FAIL("expected a throw");
        } catch (const std::system_error& e) {
            CHECK(e.code().value() == ENOENT);
            CHECK(std::string(e.what()).find((dir / "nope").string()) != std::string::npos);
        }
    }

    TEST_CASE("read_file returns exact bytes, binary and large") {
        stackup::testing::TempDir dir;
        std::string content(300000, '\0');
        for (std::size_t i = 0; i < content.size(); ++i) {
            content[i] = static_cast<char>(i * 7);
        }
        CHECK(read_file(dir.write("big", content)) == content);
        CHECK(read_file(dir.write("empty", "")).empty());
        CHECK_THROWS_WITH_AS(read_file(dir / "missing"),
                             doctest::Contains((dir / "missing").string().c_str()), std::system_error);
    }

    TEST_CASE("read_file_capped reads up to the cap, refuses more, stops on an endless file") {
        stackup::testing::TempDir dir;
        std::string content(200000, 'x');
        CHECK(read_file_capped(dir.write("exact", content), content.size()) == content);
        CHECK_FALSE(read_file_capped(dir.write("over", content + "y"), content.size()).has_value());
        CHECK(read_file_capped(dir.write("empty", ""), 0) == std::string());
        CHECK_FALSE(read_file_capped("/dev/zero", 1 << 20).has_value());  // returns: never reads forever
        CHECK_THROWS_AS(read_file_capped(dir / "missing", 10), std::system_error);
    }

    TEST_CASE("write_file_atomic replaces content, sets mode, leaves no temp file") {
        stackup::testing::TempDir dir;
        auto path = dir / "state.json";
        write_file_atomic(path, "first");
        CHECK(read_file(path) == "first");
        write_file_atomic(path, "second, longer", 0600);
        CHECK(read_file(path) == "second, longer");
        struct stat st {};
        REQUIRE(::stat(path.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0600);
        CHECK(count_entries(dir.path()) == 1);
    }

    TEST_CASE("write_file_atomic into a missing directory throws naming it") {
        stackup::testing::TempDir dir;
        auto path = dir / "no-such-dir" / "f";
        CHECK_THROWS_WITH_AS(write_file_atomic(path, "x"),
                             doctest::Contains((dir / "no-such-dir").string().c_str()), std::system_error);
    }

    TEST_CASE("write_all and fsync_dir, sync_filesystem") {
        stackup::testing::TempDir dir;
        auto path = dir / "w";
        {
            UniqueFd fd = open_file(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            write_all(fd.get(), "hello", 5, path);
        }
        CHECK(read_file(path) == "hello");
        fsync_dir(dir.path());
        sync_filesystem(dir.path());
        CHECK_THROWS_AS(fsync_dir(dir / "missing"), std::system_error);
    }

    TEST_CASE("make_temp_dir creates distinct private dirs with the prefix") {
        stackup::testing::TempDir dir;
        auto a = make_temp_dir(dir.path(), "pre-");
        auto b = make_temp_dir(dir.path(), "pre-");
        CHECK(a != b);
        CHECK(a.parent_path() == dir.path());
        CHECK(a.filename().string().rfind("pre-", 0) == 0);
        CHECK(fs::is_directory(a));
        struct stat st {};
        REQUIRE(::stat(a.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0700);
        CHECK_THROWS_WITH_AS((void)make_temp_dir(dir / "missing", "x"),
                             doctest::Contains((dir / "missing").string().c_str()), std::system_error);
    }

    TEST_CASE("to_ns and from_ns: nanoseconds and a timespec, both ways, before 1970 too") {
        for (std::int64_t ns : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1'733'000'000'123'456'789},
                                std::int64_t{-1}, std::int64_t{-1'500'000'000}, std::int64_t{-2'000'000'000}}) {
            CAPTURE(ns);
            const struct timespec ts = from_ns(ns);
            CHECK(ts.tv_nsec >= 0);
            CHECK(ts.tv_nsec < 1'000'000'000);
            CHECK(to_ns(ts) == ns);
        }
        CHECK(from_ns(-1).tv_sec == -1);
        CHECK(from_ns(-1).tv_nsec == 999'999'999);
    }

    TEST_CASE("list_dir: every entry of a directory wider than one getdents64 buffer, with its type and inode") {
        stackup::testing::TempDir dir;
        const auto wide = dir / "wide";
        std::filesystem::create_directory(wide);
        std::filesystem::create_directory(wide / "sub");
        std::filesystem::create_symlink("sub", wide / "link");
        constexpr int kFiles = 3000;  // ~40 bytes a record: about four 32 KiB buffers
        for (int i = 0; i < kFiles; ++i) {
            const auto name = wide / ("file-with-a-longish-name-" + std::to_string(i));
            UniqueFd fd(::open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
            REQUIRE(fd);
        }
        UniqueFd fd(::open(wide.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(fd);
        for (int pass = 0; pass < 2; ++pass) {  // a second listing of the same fd starts from the top again
            const auto entries = list_dir(fd.get(), wide);
            CHECK(entries.size() == kFiles + 2);
            std::size_t files = 0, dirs = 0, links = 0, unknown = 0;
            for (const auto& e : entries) {
                CHECK(e.name != ".");
                CHECK(e.name != "..");
                struct stat st {};
                REQUIRE(::fstatat(fd.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0);
                CHECK(e.inode == static_cast<std::uint64_t>(st.st_ino));
                files += e.type == DT_REG ? 1 : 0;
                dirs += e.type == DT_DIR ? 1 : 0;
                links += e.type == DT_LNK ? 1 : 0;
                unknown += e.type == DT_UNKNOWN ? 1 : 0;
            }
            if (unknown == 0) {  // a filesystem without d_type (DT_UNKNOWN) says no type at all
                CHECK(files == kFiles);
                CHECK(dirs == 1);
                CHECK(links == 1);
            }
        }
        CHECK_THROWS_AS((void)list_dir(-1, wide), std::system_error);
    }
}
