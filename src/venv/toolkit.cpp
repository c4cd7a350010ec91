#include "venv/toolkit.hpp"

#include <regex>

namespace stackup::venv {

std::optional<std::string> parse_nvcc_release(std::string_view nvcc_output) {
    static const std::regex re("release (\\d+\\.\\d+)");
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_search(nvcc_output.begin(), nvcc_output.end(), m, re)) {
        return m[1].str();
    }
    return std::nullopt;
}

ToolkitFacts probe_toolkit(const std::filesystem::path& cuda_home, const base::Environment& env) {
    ToolkitFacts facts;
    facts.nvcc = cuda_home / "bin" / "nvcc";
    if (!std::filesystem::exists(facts.nvcc)) {
        facts.problem = facts.nvcc.string() + " does not exist";
        return facts;
    }
    auto r = base::run_process({{facts.nvcc.string(), "--version"}, env, std::nullopt});
    if (!r.ok()) {
        facts.problem = facts.nvcc.string() + " --version: " + r.describe();
        return facts;
    }
    facts.release = parse_nvcc_release(r.output);
    if (!facts.release) {
        facts.problem = facts.nvcc.string() + " --version printed no 'release X.Y'";
    }
    return facts;
}

}  // namespace stackup::venv
