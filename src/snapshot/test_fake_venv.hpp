#pragma once
// Test helper: a small tree shaped like a venv, with the awkward parts a real
// one has (odd modes, setuid, sticky, symlinks, a dangling link, empty dirs)
// and fixed nanosecond mtimes everywhere, so an exact restore is observable.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "snapshot/store.hpp"
#include "snapshot/tree.hpp"
#include "temp_dir.hpp"

namespace stackup::snapshot::testing {

// Runs `f`, which must throw stackup::Error; returns it.
template <typename F>
stackup::Error error_of(F&& f) {
    try {
        f();
    } catch (const stackup::Error& e) {
        return e;
    }
    FAIL("expected stackup::Error");
    return stackup::Error(stackup::ExitCode::ok, "");
}

inline void write_bytes(const std::filesystem::path& path, std::string_view content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
}

inline void set_mode(const std::filesystem::path& path, ::mode_t mode) {
    if (::chmod(path.c_str(), mode) != 0) {
        throw std::runtime_error("chmod failed: " + path.string());
    }
}

inline void set_mtime(const std::filesystem::path& path, std::int64_t ns) {
    const struct timespec times[2] = {{ns / 1'000'000'000, ns % 1'000'000'000},
                                      {ns / 1'000'000'000, ns % 1'000'000'000}};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        throw std::runtime_error("utimensat failed: " + path.string());
    }
}

inline void make_symlink(const std::string& target, const std::filesystem::path& link) {
    std::filesystem::create_directories(link.parent_path());
    if (::symlink(target.c_str(), link.c_str()) != 0) {
        throw std::runtime_error("symlink failed: " + link.string());
    }
}

inline std::string binary_blob(std::size_t size, unsigned seed) {
    std::string out(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
        seed = seed * 1103515245u + 12345u;
        out[i] = static_cast<char>(seed >> 16);
    }
    return out;
}

inline const char* const kSitePackages = "lib/python3.12/site-packages";
inline const std::string kVersionPy = std::string(kSitePackages) + "/torch/version.py";
inline const std::string kInit = std::string(kSitePackages) + "/torch/__init__.py";

inline ino_t inode_of(const std::filesystem::path& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_ino;
}

// What uv never does but other tools might: the same inode, new bytes.
inline void rewrite_in_place(const std::filesystem::path& path, const std::string& content) {
    stackup::base::UniqueFd fd = stackup::base::open_file(path, O_WRONLY | O_TRUNC);
    REQUIRE(::write(fd.get(), content.data(), content.size()) == static_cast<ssize_t>(content.size()));
}
inline const std::int64_t kBaseMtime = 1'764'691'501'123'456'789;  // 2025-12-02, odd nanoseconds

// Gives every entry below (and including) `root` a distinct fixed mtime,
// deepest first so setting a directory's time comes after its children.
inline void pin_mtimes(const std::filesystem::path& root) {
    std::vector<std::filesystem::path> all;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
        all.push_back(e.path());
    }
    std::sort(all.begin(), all.end());
    std::int64_t t = kBaseMtime;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        set_mtime(*it, t);
        t += 1'000'000'007;
    }
    set_mtime(root, t);
}

inline void build_fake_venv(const std::filesystem::path& root) {
    const auto sp = root / kSitePackages;
    write_bytes(root / "pyvenv.cfg", "home = /usr/bin\nversion = 3.12.3\n");
    write_bytes(root / "bin/python3", binary_blob(4096, 1));
    set_mode(root / "bin/python3", 0755);
    make_symlink("python3", root / "bin/python");
    make_symlink("../lib/nowhere/python3.99", root / "bin/dangling");
    write_bytes(root / "bin/suid-helper", "#!/bin/sh\n");
    set_mode(root / "bin/suid-helper", 04755);
    write_bytes(sp / "torch/__init__.py", "__version__ = '2.10.0+cu128'\n");
    write_bytes(sp / "torch/version.py", "cuda = '12.8'\n");
    write_bytes(sp / "torch/lib/libtorch_cuda.so", binary_blob(3 * 1024 * 1024 + 17, 2));
    set_mode(sp / "torch/lib/libtorch_cuda.so", 0755);
    write_bytes(sp / "torch-2.10.0+cu128.dist-info/METADATA", "Name: torch\nVersion: 2.10.0+cu128\n");
    write_bytes(sp / "torch-2.10.0+cu128.dist-info/RECORD", "torch/__init__.py,,\n");
    write_bytes(sp / "sglang/__init__.py", "");  // an empty file
    write_bytes(sp / "secret.pth", "import secret\n");
    set_mode(sp / "secret.pth", 0600);
    std::filesystem::create_directories(root / "share/empty");
    std::filesystem::create_directories(root / "tmp-sticky");
    set_mode(root / "tmp-sticky", 01777);
    std::filesystem::create_directories(root / "include/private");
    set_mode(root / "include/private", 0700);
    set_mode(root, 0750);
    pin_mtimes(root);
}

// A fake venv in a temp dir and a store beside it, for the hard-link tests.
struct LinkFixture {
    stackup::testing::TempDir dir;
    std::filesystem::path venv = dir / "venv";
    Store store{dir / "state"};
    LinkFixture() { build_fake_venv(venv); }

    SnapshotInfo snap(Strategy strategy = Strategy::hardlink) {
        return store.create(venv, {"before apply", "/etc/m.yaml", {{"torch", "2.10.0+cu128"}}, strategy});
    }
    std::string digest() const { return tree_digest(index_tree(venv, Contents::hash)); }
};

}  // namespace stackup::snapshot::testing
