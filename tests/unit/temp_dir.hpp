#pragma once
// A fresh directory per test; removed when the test passes, kept and named when it fails.

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "paths.hpp"

namespace stackup::testing {

inline std::vector<std::filesystem::path>& live_temp_dirs() {
    static std::vector<std::filesystem::path> dirs;
    return dirs;
}

inline void finish_temp_dirs(bool passed) {
    for (const auto& dir : live_temp_dirs()) {
        if (passed) {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        } else {
            std::cerr << "kept temp dir of failed test: " << dir.string() << "\n";
        }
    }
    live_temp_dirs().clear();
}

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "stackup-test-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = pattern;
        live_temp_dirs().push_back(path_);
    }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(std::string_view rel) const { return path_ / rel; }

    // Writes `content` to path()/rel, creating parent directories.
    std::filesystem::path write(std::string_view rel, std::string_view content) const {
        auto p = path_ / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream out(p, std::ios::binary);
        out << content;
        return p;
    }

private:
    std::filesystem::path path_;
};

inline std::filesystem::path fixtures_dir() {
    if (const char* env = std::getenv("STACKUP_FIXTURES")) {
        return env;
    }
    return configured_fixtures_dir();
}

}  // namespace stackup::testing
