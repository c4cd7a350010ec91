#include "venv/probe.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/json_number.hpp"

namespace stackup::venv {

extern const char* const kProbeScript;

namespace {

using nlohmann::json;

std::optional<std::string> optional_string(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return std::nullopt;
    }
    return it->get<std::string>();
}

std::map<std::string, std::string> string_map(const json& j, const char* key) {
    std::map<std::string, std::string> out;
    if (auto it = j.find(key); it != j.end()) {
        for (const auto& [k, v] : it->items()) {
            out[k] = v.get<std::string>();
        }
    }
    return out;
}

Interpreter parse_interpreter(const json& j) {
    Interpreter i;
    i.executable = j.value("executable", "");
    i.version = j.value("version", "");
    i.major = base::whole_number_field<int>(j, "major", 0);
    i.minor = base::whole_number_field<int>(j, "minor", 0);
    i.implementation = j.value("implementation", "");
    i.soabi = j.value("soabi", "");
    i.machine = j.value("machine", "");
    i.libc = j.value("libc", "");
    i.is_venv = j.value("is_venv", false);
    return i;
}

ImportResult parse_import(const json& j) {
    ImportResult r;
    r.dist = j.value("dist", "");
    r.module = j.value("module", "");
    r.error = optional_string(j, "error");
    r.version = optional_string(j, "version");
    r.cuda = optional_string(j, "cuda");
    r.attrs = string_map(j, "attrs");
    r.attr_errors = string_map(j, "attr_errors");
    r.skipped = j.value("skipped", "");
    const std::string record = j.value("file_record", "");
    using Record = ImportResult::Record;
    r.file_record = record == "matches"      ? Record::matches
                    : record == "differs"    ? Record::differs
                    : record == "not-listed" ? Record::not_listed
                    : record == "no-record"  ? Record::no_record
                                             : Record::unchecked;
    r.file = j.value("file", "");
    return r;
}

}  // namespace

const Distribution* Facts::find(const std::string& normalized) const {
    auto it = std::find_if(distributions.begin(), distributions.end(),
                           [&](const Distribution& d) { return d.normalized == normalized; });
    return it == distributions.end() ? nullptr : &*it;
}

const ImportResult* Facts::import_of(const std::string& dist) const {
    auto it = std::find_if(imports.begin(), imports.end(),
                           [&](const ImportResult& r) { return r.dist == dist; });
    return it == imports.end() ? nullptr : &*it;
}

std::filesystem::path python_of(const std::filesystem::path& venv) { return venv / "bin" / "python"; }

std::string probe_request_json(const std::vector<ImportRequest>& requests, const std::filesystem::path& venv,
                               const Bytecode& bytecode) {
    json imports = json::array();
    for (const auto& r : requests) {
        imports.push_back({{"dist", r.dist}, {"module", r.module}, {"attrs", r.attrs}});
    }
    json request = {{"imports", imports}};
    if (bytecode.write && !bytecode.named_as.empty() && bytecode.named_as != venv) {
        request["bytecode_names"] = {{"from", venv.string()}, {"to", bytecode.named_as.string()}};
    }
    return request.dump();
}

Facts parse_probe_result(const std::string& json_text) {
    json j = json::parse(json_text);
    Facts facts;
    facts.interpreter = parse_interpreter(j.at("interpreter"));
    for (const auto& d : j.at("distributions")) {
        facts.distributions.push_back({d.at("name").get<std::string>(), d.at("normalized").get<std::string>(),
                                       d.at("version").get<std::string>(),
                                       d.value("requires", std::vector<std::string>{})});
    }
    facts.markers = string_map(j, "markers");
    for (const auto& r : j.at("imports")) {
        facts.imports.push_back(parse_import(r));
    }
    return facts;
}

namespace {

// Why the venv has no python to run: none at all, or a link to a base interpreter since removed
// (named as the links lead: bin/python -> python3.12 -> /usr/bin/python3.12).
std::string missing_python(const std::filesystem::path& venv, const std::filesystem::path& python) {
    std::error_code ec;
    std::filesystem::path at = python;
    for (int hops = 0; hops < 40 && std::filesystem::is_symlink(at, ec); ++hops) {
        const auto target = std::filesystem::read_symlink(at, ec);
        if (ec) {
            break;
        }
        at = target.is_absolute() ? target : at.parent_path() / target;
    }
    if (at == python) {
        return "no python in venv " + venv.string() + " (looked for " + python.string() + ")";
    }
    return "the base interpreter of venv " + venv.string() + " is gone: " + python.string() + " leads to " +
           at.lexically_normal().string() + ", which does not exist (removed or moved since the venv was made); "
           "recreate the venv";
}

}  // namespace

Facts probe(const std::filesystem::path& venv, const std::vector<ImportRequest>& requests,
            const base::Environment& env, const Bytecode& bytecode) {
    auto python = python_of(venv);
    if (!std::filesystem::exists(python)) {
        throw Error(ExitCode::preflight_failed, missing_python(venv, python));
    }
    // The answer goes to an anonymous file the child opens through /proc: a
    // kill -9 of stackup meanwhile leaves nothing behind in /tmp.
    const base::UniqueFd answer(::memfd_create("stackup-probe", MFD_CLOEXEC));
    if (!answer) {
        throw base::errno_error(errno, "cannot create the venv probe's answer file");
    }
    const std::string out = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(answer.get());
    std::vector<std::string> argv = {python.string(), "-I"};
    if (!bytecode.write) {
        argv.push_back("-B");
    }
    argv.insert(argv.end(), {"-c", kProbeScript, probe_request_json(requests, venv, bytecode), out});
    base::ProcessSpec spec{argv, env, std::nullopt};
    auto result = base::run_process(spec);
    std::string text = base::read_file(out);  // a new open of the memfd: from its start
    if (!result.ok() || text.empty()) {
        throw Error(ExitCode::preflight_failed, "cannot inspect venv " + venv.string() + ": " + python.string() +
                                                    " " + result.describe() + "\n" + result.output);
    }
    Facts facts;
    try {
        facts = parse_probe_result(text);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ExitCode::preflight_failed, "cannot read the venv probe's answer: " + std::string(e.what()));
    }
    std::vector<InstalledDist> dists;
    for (const auto& d : facts.distributions) {
        dists.push_back({d.normalized, d.version});
    }
    const auto site_packages = venv / "lib" /
                               ("python" + std::to_string(facts.interpreter.major) + "." +
                                std::to_string(facts.interpreter.minor)) / "site-packages";
    const bool driver = std::filesystem::exists("/proc/driver/nvidia/version");
    facts.binaries = scan_binaries(site_packages, dists, env, driver, process_binary_cache());
    return facts;
}

}  // namespace stackup::venv
