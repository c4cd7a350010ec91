#include "venv/driver.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "base/text.hpp"

namespace stackup::venv {
namespace {

bool looks_like_version(const std::string& s) {
    static const std::regex re("\\d+(\\.\\d+)+");
    return std::regex_match(s, re);
}

}  // namespace

std::optional<std::string> parse_nvidia_smi(std::string_view output) {
    std::string line(base::trim(output.substr(0, output.find('\n'))));
    if (looks_like_version(line)) {
        return line;
    }
    return std::nullopt;
}

std::optional<std::string> parse_proc_driver_version(std::string_view text) {
    static const std::regex re("Kernel Module(?: for [^ ]+)?\\s+(\\d+(?:\\.\\d+)+)");
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_search(text.begin(), text.end(), m, re)) {
        return m[1].str();
    }
    return std::nullopt;
}

std::vector<std::string> parse_compute_caps(std::string_view output) {
    static const std::regex re("[1-9][0-9]?\\.[0-9]");
    std::vector<std::string> caps;
    std::istringstream lines{std::string(output)};
    for (std::string line; std::getline(lines, line);) {
        std::string cap(base::trim(line));
        if (std::regex_match(cap, re) && std::find(caps.begin(), caps.end(), cap) == caps.end()) {
            caps.push_back(cap);
        }
    }
    return caps;
}

GpuFacts probe_gpus(const base::Environment& env) {
    std::string smi = base::find_program("nvidia-smi", env);
    if (smi.empty()) {
        return {{}, "nvidia-smi is not on PATH"};
    }
    auto r = base::run_process({{smi, "--query-gpu=compute_cap", "--format=csv,noheader"}, env, std::nullopt});
    if (!r.ok()) {
        return {{}, smi + " " + r.describe()};
    }
    auto caps = parse_compute_caps(r.output);
    return {caps, caps.empty() ? smi + " printed no compute capability" : smi};
}

DriverFacts probe_driver(const base::Environment& env, const std::filesystem::path& proc_file) {
    std::string smi = base::find_program("nvidia-smi", env);
    std::string why = "nvidia-smi is not on PATH";
    if (!smi.empty()) {
        auto r = base::run_process({{smi, "--query-gpu=driver_version", "--format=csv,noheader"}, env, std::nullopt});
        if (r.ok()) {
            if (auto v = parse_nvidia_smi(r.output)) {
                return {v, smi};
            }
            why = smi + " printed no driver version";
        } else {
            why = smi + " " + r.describe();
        }
    }
    std::ifstream in(proc_file);
    if (in) {
        std::stringstream text;
        text << in.rdbuf();
        if (auto v = parse_proc_driver_version(text.str())) {
            return {v, proc_file.string()};
        }
    }
    return {std::nullopt, why + ", and " + proc_file.string() + " has no driver version"};
}

}  // namespace stackup::venv
