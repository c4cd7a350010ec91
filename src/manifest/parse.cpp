// YAML -> typed Manifest (schema version 1, PRODUCT.md). Each read_* function
// owns one part of the schema; every problem is an Error at file:line:col.
// This file reads the document, the top level and its sections; parse_lists.cpp reads the top
// level's lists and maps (checks, allow_mixed, allow_unmet, env, snapshot); parse_steps.cpp reads 'steps'.

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <yaml-cpp/eventhandler.h>

#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "base/url.hpp"
#include "base/text.hpp"
#include "manifest/manifest.hpp"
#include "manifest/parse_parts.hpp"
#include "manifest/text.hpp"
#include "manifest/yaml_fields.hpp"
#include "pep/name.hpp"

namespace stackup::manifest {

namespace detail {

bool matches(const std::string& text, const char* pattern) {
    return std::regex_match(text, std::regex(pattern));
}

// pep's messages may already start with what we prefix them with; say it once.
std::string without_prefix(const std::string& error, const std::string& prefix) {
    return error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
}

pep::SpecifierSet read_specifier(const Reader& reader, const Field& field, const std::string& label) {
    std::string text = read_nonempty(reader, field, label);
    std::string error;
    std::optional<pep::SpecifierSet> set = pep::SpecifierSet::parse(text, &error);
    if (!set) {
        std::string what = "invalid specifier '" + text + "': ";
        reader.fail(field.value, label + ": " + what + without_prefix(error, what));
    }
    if (!set->is_satisfiable(pep::Prereleases::allow)) {
        reader.fail(field.value, label + ": '" + text + "' can never be satisfied");
    }
    return *set;
}

std::string read_index_name(const Reader& reader, const Field& field, const Indexes& indexes, std::string_view what) {
    std::string name = read_nonempty(reader, field, field.key);
    if (indexes.urls.count(name) == 0) {
        std::string message = std::string(what) + " '" + name + "' is not defined under 'indexes' (defined: " +
                              (indexes.order.empty() ? "none" : base::join(indexes.order)) + ")";
        if (auto near = closest_match(name, indexes.order)) {
            message += "; did you mean '" + *near + "'?";
        }
        reader.fail(field.value, message);
    }
    return name;
}

}  // namespace detail

namespace {

using detail::describe;
using detail::EmptyMap;
using detail::Field;
using detail::Fields;
using detail::Indexes;
using detail::matches;
using detail::read_checks;
using detail::read_dist_names;
using detail::read_env;
using detail::read_index_name;
using detail::read_snapshot_keep;
using detail::read_specifier;
using detail::read_steps;
using detail::Reader;
namespace fs = std::filesystem;

constexpr const char* supported_version = "1";

const std::vector<std::string> top_keys = {"version", "name", "venv", "python", "cuda", "indexes", "default_index",
                                           "steps", "checks", "allow_mixed", "allow_unmet", "env", "snapshot"};
const std::vector<std::string> cuda_keys = {"toolkit", "home", "driver", "require_driver", "arch"};

// What every part of the parse needs besides the node it reads.
struct Context {
    const Reader& reader;
    const EnvLookup& env;
    fs::path base_dir;  // anchors relative paths: the manifest file's directory
};

std::optional<std::string> process_env(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
}

// Where each document the parser reads starts; nothing else.
class DocumentStarts : public YAML::EventHandler {
public:
    std::vector<YAML::Mark> marks;
    void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

// Refuses text of more than one document. Only two are read: yaml-cpp 0.7's LoadAll never
// returns on some malformed text (a lone ',' gives an empty document without consuming the
// ',', again and again, until memory runs out); a document that starts where the last one did
// is that case.
void check_single_document(const Reader& reader, const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    for (int i = 0; i < 2 && parser.HandleNextDocument(starts); ++i) {
    }
    if (starts.marks.size() < 2) {
        return;
    }
    const YAML::Mark& second = starts.marks[1];
    if (second.pos == starts.marks[0].pos) {
        std::string at = second.pos >= 0 && static_cast<std::size_t>(second.pos) < text.size()
                             ? std::string(1, text[static_cast<std::size_t>(second.pos)])
                             : std::string();
        reader.fail(reader.at(second), "invalid YAML: unexpected '" + at + "'");
    }
    reader.fail(reader.at(second), "a manifest is a single YAML document; this is a second one");
}

YAML::Node load_document(const Reader& reader, const std::string& text) {
    YAML::Node doc;
    try {
        check_single_document(reader, text);
        doc = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        reader.fail(reader.at(e.mark), "invalid YAML: " + e.msg);
    }
    if (doc.IsNull()) {
        reader.fail(SourceLocation{reader.file(), 1, 1}, "the manifest is empty (expected 'version: 1' and 'steps')");
    }
    return doc;
}

void read_schema_version(const Reader& reader, const Fields& top) {
    const Field* field = top.find("version");
    if (field == nullptr) {
        top.only(top_keys);  // a misspelt 'version' is better reported as such
        reader.fail(top.node(), std::string("missing 'version' (this stackup reads version ") + supported_version + ")");
    }
    std::string text = read_string(reader, *field, "version");
    if (text != supported_version) {
        reader.fail(field->value, "unsupported manifest version " + text + " (this stackup reads version " +
                                      supported_version + ")");
    }
}

// Normal form without a trailing '/': "~/ml-env/" and "~/ml-env" name the same venv.
fs::path clean_path(const fs::path& path) {
    fs::path normal = path.lexically_normal();
    if (normal.filename().empty() && normal.has_parent_path() && normal != normal.root_path()) {
        normal = normal.parent_path();
    }
    return normal;
}

// ~ and ${VAR} expanded; a relative result is taken from the manifest's directory.
fs::path read_path(const Context& ctx, const Field& field, std::string_view label) {
    std::string text = read_nonempty(ctx.reader, field, label);
    std::string error;
    std::optional<std::string> expanded = expand_path_text(text, ctx.env, &error);
    if (!expanded) {
        ctx.reader.fail(field.value, "'" + std::string(label) + "': " + error);
    }
    return clean_path(ctx.base_dir / *expanded);
}

fs::path read_venv(const Context& ctx, const Fields& top, const ParseOptions& options) {
    const Field* field = top.find("venv");
    if (options.venv_override) {
        if (field != nullptr) {
            read_nonempty(ctx.reader, *field, "venv");  // still type-checked; not expanded, since unused
        }
        return clean_path(fs::absolute(*options.venv_override));
    }
    if (field == nullptr) {
        ctx.reader.fail(top.node(), "no venv: set 'venv' in the manifest or pass --venv");
    }
    return read_path(ctx, *field, "venv");
}

std::string read_major_minor(const Reader& reader, const Field& field, std::string_view label,
                             std::string_view example) {
    std::string text = read_string(reader, field, label);
    if (!matches(text, R"([0-9]+\.[0-9]+)")) {
        reader.fail(field.anchor(), "expected '" + std::string(label) + "' as MAJOR.MINOR, like \"" +
                                        std::string(example) + "\", got " + describe(field.value));
    }
    return text;
}

// cuda.arch: compute capabilities as nvidia-smi prints them ("12.0"), each once.
std::vector<std::string> read_arch(const Reader& reader, const Field& field) {
    std::vector<std::string> arch;
    for (const YAML::Node& item : read_list(reader, field, "arch")) {
        std::string text = read_item(reader, item, "arch");
        if (!matches(text, R"([1-9][0-9]?\.[0-9])")) {
            reader.fail(item, "expected a compute capability in 'arch' as MAJOR.MINOR, like \"12.0\" (nvidia-smi "
                              "--query-gpu=compute_cap), got '" + text + "'");
        }
        if (std::find(arch.begin(), arch.end(), text) == arch.end()) {
            arch.push_back(text);
        }
    }
    return arch;
}

Cuda read_cuda(const Context& ctx, const Field& field) {
    Fields fields(ctx.reader, field, "cuda", "in 'cuda'");
    fields.only(cuda_keys);
    Cuda cuda;
    cuda.toolkit = read_major_minor(ctx.reader, fields.require("toolkit"), "toolkit", "13.0");
    const Field* home = fields.find("home");
    cuda.home = home ? read_path(ctx, *home, "home") : fs::path("/usr/local/cuda-" + cuda.toolkit);
    if (const Field* driver = fields.find("driver")) {
        cuda.driver = read_specifier(ctx.reader, *driver, "'driver'");
    }
    if (const Field* require = fields.find("require_driver")) {
        cuda.require_driver = read_bool(ctx.reader, *require, "require_driver");
    }
    if (const Field* arch = fields.find("arch")) {
        cuda.arch = read_arch(ctx.reader, *arch);
    }
    return cuda;
}

// The URL itself is never echoed: it may carry credentials.
void check_index_url(const Reader& reader, const Field& field, const std::string& url) {
    base::UrlError why = base::UrlError::malformed;
    std::optional<base::Url> parsed = base::parse_url(url, &why);
    if (!parsed && why == base::UrlError::no_host) {
        reader.fail(field.value, "index '" + field.key + "' has no host");
    }
    if (!parsed) {
        reader.fail(field.value, "index '" + field.key + "' is not a URL (expected https://host/path, http://... or file:///path)");
    }
    if (parsed->scheme != "http" && parsed->scheme != "https" && parsed->scheme != "file") {
        reader.fail(field.value, "index '" + field.key + "' has scheme '" + parsed->scheme + "' (expected http, https or file)");
    }
}

Indexes read_indexes(const Context& ctx, const Fields& top) {
    const Reader& reader = ctx.reader;
    const Field* field = top.find("indexes");
    if (field == nullptr) {
        reader.fail(top.node(), "missing 'indexes': every step installs from a named index");
    }
    Fields fields(reader, *field, "indexes", "in 'indexes'");
    Indexes indexes;
    for (const Field& entry : fields.all()) {
        if (!matches(entry.key, R"([A-Za-z0-9_.-]+)")) {
            reader.fail(entry.key_node, "index name '" + entry.key + "' may hold only letters, digits, '-', '_' and '.'");
        }
        std::string error;
        std::optional<std::string> url = expand_vars(read_nonempty(reader, entry, entry.key), ctx.env, &error);
        if (!url) {
            reader.fail(entry.value, "index '" + entry.key + "': " + error);
        }
        check_index_url(reader, entry, *url);
        indexes.urls[entry.key] = *url;
        indexes.order.push_back(entry.key);
    }
    return indexes;
}

// The optional parts of the top level, each read only when present.
void read_optional_sections(const Context& ctx, const Fields& top, Manifest& m) {
    const Reader& reader = ctx.reader;
    if (const Field* f = top.find("name")) {
        m.name = read_nonempty(reader, *f, "name");
    }
    if (const Field* f = top.find("python")) {
        m.python = read_major_minor(reader, *f, "python", "3.12");
    }
    if (const Field* f = top.find("cuda")) {
        m.cuda = read_cuda(ctx, *f);
    }
    if (const Field* f = top.find("checks")) {
        m.checks = read_checks(reader, *f);
    }
    if (const Field* f = top.find("allow_mixed")) {
        m.allow_mixed = read_dist_names(reader, *f, "allow_mixed");
    }
    if (const Field* f = top.find("allow_unmet")) {
        m.allow_unmet = read_dist_names(reader, *f, "allow_unmet");
    }
    if (const Field* f = top.find("env")) {
        m.env = read_env(reader, *f);
    }
    if (const Field* f = top.find("snapshot")) {
        m.snapshot_keep = read_snapshot_keep(reader, *f);
    }
}

Manifest read_manifest(const Context& ctx, const YAML::Node& root, const ParseOptions& options) {
    const Reader& reader = ctx.reader;
    Fields top(reader, root, "at the top level");
    read_schema_version(reader, top);  // first: a newer schema may have keys this one does not know
    top.only(top_keys);
    Manifest m;
    m.source = reader.file();
    m.name = fs::path(reader.file()).stem().string();
    m.venv = read_venv(ctx, top, options);
    Indexes indexes = read_indexes(ctx, top);
    m.indexes = indexes.urls;
    if (const Field* f = top.find("default_index")) {
        m.default_index = read_index_name(reader, *f, indexes, "default_index");
    }
    m.steps = read_steps(reader, top, indexes);
    read_optional_sections(ctx, top, m);
    return m;
}

fs::path directory_of(const std::string& file) {
    fs::path path = file.empty() ? fs::path(".") : fs::path(file);
    return fs::absolute(path).parent_path();
}

}  // namespace

Manifest parse(const std::string& text, const std::string& file, const ParseOptions& options) {
    Reader reader(file);
    EnvLookup env = options.env ? options.env : EnvLookup(process_env);
    Context ctx{reader, env, directory_of(file)};
    try {
        Manifest m = read_manifest(ctx, load_document(reader, text), options);
        m.digest = base::sha256_hex(text);
        return m;
    } catch (const YAML::Exception& e) {
        // Not expected once the document is loaded; still a manifest error, never a crash.
        reader.fail(reader.at(e.mark), "invalid YAML: " + e.msg);
    }
}

std::string read_input(const fs::path& path, std::string_view what) {
    const std::string named = "cannot read " + std::string(what) + " '" + path.string() + "': ";
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        throw Error(ExitCode::usage, named + "it is a directory");
    }
    std::optional<std::string> bytes;
    try {
        bytes = base::read_file_capped(path, max_input_bytes);
    } catch (const std::system_error& e) {
        throw Error(ExitCode::usage, named + e.code().message());
    }
    if (!bytes) {
        throw Error(ExitCode::usage, named + "it holds more than " + std::to_string(max_input_bytes >> 20) +
                                         " MiB, the most a manifest or plan may hold (is it the right file?)");
    }
    return std::move(*bytes);
}

Manifest load(const fs::path& path, const ParseOptions& options) {
    return parse(read_input(path, "manifest"), path.string(), options);
}

}  // namespace stackup::manifest
