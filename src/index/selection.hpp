#pragma once
// What select_wheel is asked and answers: the values select.cpp and its near misses share.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "index/index_file.hpp"
#include "pep/requirement.hpp"
#include "pep/version.hpp"
#include "pep/wheel.hpp"

namespace stackup::index {

struct SelectRequest {
    pep::Requirement requirement;
    bool prerelease = false;                 // the step's flag: admit .dev/.a/.b/.rc
    std::optional<std::string> local;        // the expectation's local label, "cu130"
    pep::Version python;                     // the venv's interpreter, "3.11.7"
    std::string python_tag;                  // "cp311", for messages
    std::string machine;                     // the host's, "x86_64"; "" when unknown (then every platform fits)
    std::string libc;                        // the host's, "glibc 2.36", "musl 1.2.4"; "" when unknown
};

struct Choice {
    IndexFile file;
    pep::WheelFilename wheel;
    std::size_t rank = 0;                    // of its best tag; lower is preferred
    std::vector<std::string> warnings;       // e.g. the same name listed with different hashes
};

struct Selection {
    std::optional<Choice> chosen;
    std::string why_none;                    // the near miss, when nothing was chosen
};

}  // namespace stackup::index
