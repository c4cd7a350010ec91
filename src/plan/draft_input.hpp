#pragma once
// What `stackup init` knows of a venv: the input both drafts (draft.cpp, draft_upgrade.cpp) read.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "venv/probe.hpp"

namespace stackup::plan {

struct DraftToolkit {
    std::string release;              // "12.8", as nvcc reports it
    std::filesystem::path home;       // the folder whose bin/nvcc reported it
};

struct DraftInput {
    std::filesystem::path venv;       // absolute
    venv::Interpreter interpreter;
    std::vector<venv::Distribution> distributions;
    std::optional<DraftToolkit> toolkit;  // nullopt: no nvcc found, or none that reports a release
};

}  // namespace stackup::plan
