#include "plan/plan_file.hpp"

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/sha256.hpp"
#include "pep/wheel.hpp"

namespace stackup::plan {
namespace {

using json = nlohmann::ordered_json;

// Reads fields with messages that name the file and the field's path.
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw Error(ExitCode::usage, origin_ + ": saved plan: " + path + " " + what);
    }
    const json& field(const json& object, const std::string& path, const char* key) const {
        auto it = object.find(key);
        if (it == object.end()) {
            fail(path + key, "is missing");
        }
        return *it;
    }
    std::string string(const json& object, const std::string& path, const char* key) const {
        const json& v = field(object, path, key);
        if (!v.is_string()) {
            fail(path + key, "must be a string");
        }
        return v.get<std::string>();
    }
    std::vector<std::string> strings(const json& object, const std::string& path, const char* key) const {
        const json& v = field(object, path, key);
        std::vector<std::string> out;
        if (!v.is_array()) {
            fail(path + key, "must be a list of strings");
        }
        for (const auto& item : v) {
            if (!item.is_string()) {
                fail(path + key, "must be a list of strings");
            }
            out.push_back(item.get<std::string>());
        }
        return out;
    }
    std::map<std::string, std::string> string_map(const json& object, const std::string& path, const char* key) const {
        const json& v = field(object, path, key);
        std::map<std::string, std::string> out;
        if (!v.is_object()) {
            fail(path + key, "must be a map of strings");
        }
        for (const auto& [k, item] : v.items()) {
            if (!item.is_string()) {
                fail(path + key + "." + k, "must be a string");
            }
            out[k] = item.get<std::string>();
        }
        return out;
    }
    const json& list(const json& object, const std::string& path, const char* key) const {
        const json& v = field(object, path, key);
        if (!v.is_array()) {
            fail(path + key, "must be a list");
        }
        return v;
    }

private:
    std::string origin_;
};

json package_json(const SavedPackage& p) {
    json j = {{"name", p.name},         {"requirement", p.requirement}, {"installed", p.installed},
              {"version", p.version},   {"change", p.change},           {"index", p.index},
              {"filename", p.filename}, {"url", p.url},                 {"sha256", p.sha256},
              {"pin", p.pin}};
    if (!p.skipped.empty()) {
        j["skipped"] = p.skipped;
    }
    return j;
}

SavedPackage read_package(const Reader& r, const json& j, const std::string& path) {
    SavedPackage p;
    p.name = r.string(j, path, "name");
    p.requirement = r.string(j, path, "requirement");
    p.installed = r.string(j, path, "installed");
    p.version = r.string(j, path, "version");
    p.change = r.string(j, path, "change");
    p.index = r.string(j, path, "index");
    p.filename = r.string(j, path, "filename");
    p.url = r.string(j, path, "url");
    p.sha256 = r.string(j, path, "sha256");
    p.pin = r.string(j, path, "pin");
    if (p.change == "skip") {
        p.skipped = r.string(j, path, "skipped");
        return p;
    }
    if (!pep::parse_wheel_filename(p.filename)) {
        r.fail(path + "filename", "is not a wheel file name: " + p.filename);
    }
    return p;
}

SavedStep read_step(const Reader& r, const json& j, const std::string& path) {
    SavedStep s;
    s.name = r.string(j, path, "name");
    s.index = r.string(j, path, "index");
    const json& packages = r.list(j, path, "packages");
    for (std::size_t i = 0; i < packages.size(); ++i) {
        s.packages.push_back(read_package(r, packages[i], path + "packages[" + std::to_string(i) + "]."));
    }
    s.argv = r.strings(j, path, "argv");
    s.requirements = r.strings(j, path, "requirements");
    s.env = r.string_map(j, path, "env");
    if (j.contains("remove")) {  // plans written before `remove:` have neither
        s.remove = r.strings(j, path, "remove");
        s.remove_argv = r.strings(j, path, "remove_argv");
    }
    return s;
}

std::string digest_of(const VenvState& s) {
    std::string text = "python " + s.python + "\nexecutable " + s.executable + "\nsoabi " + s.soabi + "\n";
    for (const auto& [name, version] : s.distributions) {
        text += name + " " + version + "\n";
    }
    return base::sha256_hex(text);
}

}  // namespace

VenvState venv_state_of(const venv::Facts& facts) {
    VenvState s;
    s.python = facts.interpreter.version;
    s.executable = facts.interpreter.executable;
    s.soabi = facts.interpreter.soabi;
    for (const auto& d : facts.distributions) {
        s.distributions[d.normalized] = d.version;
    }
    s.digest = digest_of(s);
    return s;
}

std::vector<std::string> venv_changes(const VenvState& then, const VenvState& now) {
    std::vector<std::string> out;
    if (then.python != now.python || then.executable != now.executable || then.soabi != now.soabi) {
        out.push_back("the interpreter changed from python " + then.python + " (" + then.executable +
                      ") to python " + now.python + " (" + now.executable + ")");
    }
    for (const auto& [name, version] : then.distributions) {
        auto it = now.distributions.find(name);
        if (it == now.distributions.end()) {
            out.push_back(name + " " + version + " was removed");
        } else if (it->second != version) {
            out.push_back(name + " changed from " + version + " to " + it->second);
        }
    }
    for (const auto& [name, version] : now.distributions) {
        if (!then.distributions.count(name)) {
            out.push_back(name + " " + version + " was installed");
        }
    }
    if (out.empty() && then.digest != now.digest) {
        out.push_back("the venv's digest changed");
    }
    return out;
}

std::string to_json(const SavedPlan& plan) {
    json steps = json::array();
    for (const auto& s : plan.steps) {
        json packages = json::array();
        for (const auto& p : s.packages) {
            packages.push_back(package_json(p));
        }
        steps.push_back({{"name", s.name},
                         {"index", s.index},
                         {"packages", packages},
                         {"argv", s.argv},
                         {"requirements", s.requirements},
                         {"env", s.env},
                         {"remove", s.remove},
                         {"remove_argv", s.remove_argv}});
    }
    const VenvState& v = plan.venv_state;
    json doc = {{"schema", plan.schema},
                {"kind", "stackup-plan"},
                {"created", plan.created},
                {"stackup_version", plan.stackup_version},
                {"manifest", {{"path", plan.manifest}, {"sha256", plan.manifest_sha256}}},
                {"venv",
                 {{"path", plan.venv},
                  {"python", v.python},
                  {"executable", v.executable},
                  {"soabi", v.soabi},
                  {"distributions", v.distributions},
                  {"digest", v.digest}}},
                {"toolkit", plan.toolkit},
                {"driver", plan.driver},
                {"env_dropped", plan.env_dropped},
                {"steps", steps}};
    return doc.dump(2) + "\n";
}

bool looks_like_saved_plan(std::string_view text) {
    auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' &&
           text.find("\"stackup-plan\"") != std::string_view::npos;
}

SavedPlan parse_saved_plan(std::string_view text, const std::string& origin) {
    Reader r(origin);
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        throw Error(ExitCode::usage, origin + ": not a saved plan (not a JSON object)");
    }
    const json& schema = r.field(doc, "", "schema");
    if (!schema.is_number_integer() || schema.get<int>() != plan_schema_version) {
        throw Error(ExitCode::usage, origin + ": saved plan schema " + schema.dump() + "; this stackup reads schema " +
                                         std::to_string(plan_schema_version) + ": make the plan again");
    }
    SavedPlan plan;
    plan.created = r.string(doc, "", "created");
    plan.stackup_version = r.string(doc, "", "stackup_version");
    const json& manifest = r.field(doc, "", "manifest");
    plan.manifest = r.string(manifest, "manifest.", "path");
    plan.manifest_sha256 = r.string(manifest, "manifest.", "sha256");
    const json& venv = r.field(doc, "", "venv");
    plan.venv = r.string(venv, "venv.", "path");
    plan.venv_state.python = r.string(venv, "venv.", "python");
    plan.venv_state.executable = r.string(venv, "venv.", "executable");
    plan.venv_state.soabi = r.string(venv, "venv.", "soabi");
    plan.venv_state.distributions = r.string_map(venv, "venv.", "distributions");
    plan.venv_state.digest = r.string(venv, "venv.", "digest");
    plan.toolkit = r.string(doc, "", "toolkit");
    plan.driver = r.string(doc, "", "driver");
    plan.env_dropped = r.strings(doc, "", "env_dropped");
    const json& steps = r.list(doc, "", "steps");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        plan.steps.push_back(read_step(r, steps[i], "steps[" + std::to_string(i) + "]."));
    }
    return plan;
}

Plan plan_of(const SavedPlan& saved) {
    Plan plan;
    for (const auto& s : saved.steps) {
        PlannedStep step{s.name, s.index, {}, {}};
        for (const auto& name : s.remove) {
            auto installed = saved.venv_state.distributions.find(name);
            step.removals.push_back(
                {name, name, installed == saved.venv_state.distributions.end() ? "" : installed->second});
        }
        for (const auto& p : s.packages) {
            PlannedPackage planned;
            planned.name = p.name;
            planned.requirement = p.requirement;
            planned.installed = p.installed;
            if (!p.skipped.empty()) {
                planned.skipped = p.skipped;
                step.packages.push_back(std::move(planned));
                continue;
            }
            planned.index = p.index;
            index::Choice choice;
            choice.file.filename = p.filename;
            choice.file.url = p.url;
            if (!p.sha256.empty()) {
                choice.file.hashes["sha256"] = p.sha256;
            }
            choice.wheel = *pep::parse_wheel_filename(p.filename);  // checked when read
            planned.choice = std::move(choice);
            step.packages.push_back(std::move(planned));
        }
        plan.steps.push_back(std::move(step));
    }
    return plan;
}

}  // namespace stackup::plan
