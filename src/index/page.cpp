#include "index/page.hpp"

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>

#include "index/url.hpp"
#include "pep/name.hpp"

namespace stackup::index {
namespace {

using JsonValue = nlohmann::json;

// ---- shared by both formats ----

std::string_view trim(std::string_view s) {
    constexpr std::string_view space = " \t\n\r\f\v";
    auto first = s.find_first_not_of(space);
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(space) - first + 1);
}


bool has_dist_suffix(std::string_view name) {
    constexpr std::array suffixes{".whl", ".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tgz", ".tbz", ".egg"};
    std::string l = ascii_lower(name);
    return std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view s) { return l.ends_with(s) && l.size() > s.size(); });
}

bool plausible_filename(std::string_view s) {
    bool clean = std::none_of(s.begin(), s.end(), [](unsigned char c) { return c <= ' ' || c == '/' || c == '\\' || c == 0x7f; });
    return clean && has_dist_suffix(s);
}

// The stated name (anchor text, JSON "filename") wins when it looks like a file name: the URL may
// end in a redirector or content-addressed segment. Otherwise the URL's last segment, decoded.
// "" when neither names a distribution file (a navigation link, say): the caller skips it.
std::string choose_filename(std::string_view stated, std::string_view url) {
    if (plausible_filename(trim(stated))) {
        return std::string(trim(stated));
    }
    std::string from_url = path_basename(url);
    return plausible_filename(from_url) ? from_url : std::string{};
}

// "sha256=abc..." -> hashes["sha256"] = "abc...".
void add_fragment_hash(std::string_view fragment, std::map<std::string, std::string>& hashes) {
    auto eq = fragment.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == fragment.size()) {
        return;
    }
    // Python's guaranteed hashlib names; "#egg=name" and other legacy fragments are no hash.
    constexpr std::array known{"md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s",
                               "sha3_224", "sha3_256", "sha3_384", "sha3_512"};
    std::string name = ascii_lower(fragment.substr(0, eq));
    if (std::find(known.begin(), known.end(), name) != known.end()) {
        hashes[name] = std::string(fragment.substr(eq + 1));
    }
}

// A file from its resolved URL; nullopt when it names no distribution file.
std::optional<IndexFile> file_at(const std::string& absolute_url, std::string_view stated_name) {
    IndexFile f;
    f.url = std::string(without_fragment(absolute_url));
    f.filename = choose_filename(stated_name, f.url);
    if (f.filename.empty()) {
        return std::nullopt;
    }
    add_fragment_hash(url_fragment(absolute_url), f.hashes);
    return f;
}

// PEP 629 / 691: a major version this client does not know must not be guessed at.
std::optional<std::string> check_api_version(std::string_view version) {
    auto major = trim(version.substr(0, version.find('.')));
    if (!major.empty() && major != "1") {
        return "unsupported simple-API version " + std::string(version) + " (this client reads 1.x)";
    }
    return std::nullopt;
}

std::optional<std::string> empty_to_null(std::string_view s) {
    auto t = trim(s);
    return t.empty() ? std::nullopt : std::optional<std::string>(t);
}

// ---- HTML (gumbo) ----

struct GumboDeleter {
    void operator()(GumboOutput* out) const { gumbo_destroy_output(&kGumboDefaultOptions, out); }
};
using GumboDocument = std::unique_ptr<GumboOutput, GumboDeleter>;

struct Anchor {
    std::string href;
    std::string text;
    const GumboElement* element = nullptr;
};

struct HtmlPage {
    std::vector<Anchor> anchors;
    std::optional<std::string> base_href;           // <base href>, when the page has one
    std::optional<std::string> repository_version;  // <meta name="pypi:repository-version">
};

std::optional<std::string> attribute(const GumboElement& e, const char* name) {
    const GumboAttribute* a = gumbo_get_attribute(&e.attributes, name);
    return a ? std::optional<std::string>(a->value) : std::nullopt;
}

// Calls `visit` on every node below `root` in document order; iterative, so deep garbage cannot
// overflow the stack.
template <typename Visit>
void for_each_node(const GumboNode* root, Visit visit) {
    std::vector<const GumboNode*> stack{root};
    while (!stack.empty()) {
        const GumboNode* node = stack.back();
        stack.pop_back();
        visit(*node);
        if (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE) {
            const GumboVector& children = node->v.element.children;
            for (unsigned i = children.length; i > 0; --i) {
                stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
            }
        }
    }
}

std::string text_of(const GumboNode& node) {
    std::string text;
    for_each_node(&node, [&](const GumboNode& n) {
        if (n.type == GUMBO_NODE_TEXT || n.type == GUMBO_NODE_WHITESPACE || n.type == GUMBO_NODE_CDATA) {
            text += n.v.text.text;
        }
    });
    return std::string(trim(text));
}

void note_element(const GumboNode& node, HtmlPage& page) {
    const GumboElement& e = node.v.element;
    if (e.tag == GUMBO_TAG_A) {
        if (auto href = attribute(e, "href")) {
            page.anchors.push_back({*href, text_of(node), &e});
        }
    } else if (e.tag == GUMBO_TAG_BASE && !page.base_href) {
        page.base_href = attribute(e, "href");
    } else if (e.tag == GUMBO_TAG_META && attribute(e, "name") == "pypi:repository-version") {
        page.repository_version = attribute(e, "content");
    }
}

HtmlPage read_html(const GumboOutput& doc) {
    HtmlPage page;
    for_each_node(doc.root, [&](const GumboNode& node) {
        if (node.type == GUMBO_NODE_ELEMENT) {
            note_element(node, page);
        }
    });
    return page;
}

// PEP 714 renamed data-dist-info-metadata to data-core-metadata; the new name wins.
std::optional<std::string> html_metadata(const GumboElement& e) {
    auto value = attribute(e, "data-core-metadata");
    if (!value) {
        value = attribute(e, "data-dist-info-metadata");
    }
    if (!value) {
        return std::nullopt;
    }
    auto t = trim(*value);
    return t.empty() ? "true" : std::string(t);  // a bare attribute means "available, hash unknown"
}

std::optional<IndexFile> html_file(const Anchor& a, const std::string& base) {
    auto absolute = resolve_url(base, a.href);
    if (!absolute) {
        return std::nullopt;
    }
    auto f = file_at(*absolute, a.text);
    if (!f) {
        return std::nullopt;
    }
    f->requires_python = empty_to_null(attribute(*a.element, "data-requires-python").value_or(""));  // gumbo decoded &gt;
    if (auto yanked = attribute(*a.element, "data-yanked")) {
        f->yanked = true;
        f->yanked_reason = std::string(trim(*yanked));
    }
    f->metadata = html_metadata(*a.element);
    return f;
}

std::optional<std::string> check_base(std::string_view page_url) {
    if (!resolve_url(page_url, "")) {
        return "page URL is not an absolute http(s) or file URL: " + redacted(page_url);
    }
    return std::nullopt;
}

std::optional<GumboDocument> parse_html(std::string_view text) {
    GumboDocument doc(gumbo_parse_with_options(&kGumboDefaultOptions, text.data(), text.size()));
    if (!doc || !doc->root) {
        return std::nullopt;
    }
    return doc;
}

// ---- JSON (PEP 691) ----

ParseResult failure(std::string message) { return {{}, std::move(message)}; }

std::optional<std::string> check_json_meta(const JsonValue& page) {
    auto meta = page.find("meta");
    if (meta == page.end() || !meta->is_object()) {
        return std::nullopt;
    }
    auto version = meta->find("api-version");
    return version != meta->end() && version->is_string() ? check_api_version(version->get<std::string>()) : std::nullopt;
}

// Hash objects are {"sha256": "<hex>", ...}; a non-string value makes the page malformed.
bool read_hashes(const JsonValue& value, std::map<std::string, std::string>& hashes) {
    if (!value.is_object()) {
        return false;
    }
    for (const auto& [name, digest] : value.items()) {
        if (!digest.is_string()) {
            return false;
        }
        hashes[ascii_lower(name)] = digest.get<std::string>();
    }
    return true;
}

// PEP 714 renamed "dist-info-metadata" to "core-metadata"; the new name wins.
bool read_json_metadata(const JsonValue& entry, std::optional<std::string>& metadata) {
    auto it = entry.find("core-metadata");
    if (it == entry.end()) {
        it = entry.find("dist-info-metadata");
    }
    if (it == entry.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) {
        return true;
    }
    if (it->is_boolean()) {
        metadata = "true";
        return true;
    }
    std::map<std::string, std::string> hashes;
    if (!read_hashes(*it, hashes)) {
        return false;
    }
    auto pick = hashes.contains("sha256") ? hashes.find("sha256") : hashes.begin();
    metadata = pick == hashes.end() ? "true" : pick->first + "=" + pick->second;
    return true;
}

bool read_json_yanked(const JsonValue& entry, IndexFile& f) {
    auto it = entry.find("yanked");
    if (it == entry.end() || it->is_null()) {
        return true;
    }
    if (it->is_boolean()) {
        f.yanked = it->get<bool>();
        return true;
    }
    if (it->is_string()) {  // a string means yanked, with that reason
        f.yanked = true;
        f.yanked_reason = it->get<std::string>();
        return true;
    }
    return false;
}

// The fields beyond name and URL; false when one has the wrong type.
bool read_json_details(const JsonValue& entry, IndexFile& f) {
    if (auto h = entry.find("hashes"); h != entry.end() && !read_hashes(*h, f.hashes)) {
        return false;
    }
    if (auto rp = entry.find("requires-python"); rp != entry.end() && !rp->is_null()) {
        if (!rp->is_string()) {
            return false;
        }
        f.requires_python = empty_to_null(rp->get<std::string>());  // PyPI sends "" for "none"
    }
    return read_json_yanked(entry, f) && read_json_metadata(entry, f.metadata);
}

// Appends one entry of "files" (unless it names no distribution file); an error when it is malformed.
std::optional<std::string> read_json_file(const JsonValue& entry, std::string_view page_url, std::vector<IndexFile>& out) {
    if (!entry.is_object()) {
        return "a \"files\" entry is not an object";
    }
    auto name = entry.find("filename");
    auto url = entry.find("url");
    if (name == entry.end() || !name->is_string() || url == entry.end() || !url->is_string()) {
        return "a \"files\" entry lacks a string \"filename\" or \"url\"";
    }
    auto absolute = resolve_url(page_url, url->get<std::string>());
    if (!absolute) {
        return "file " + name->get<std::string>() + " has an unusable url";
    }
    auto f = file_at(*absolute, name->get<std::string>());
    if (!f) {
        return std::nullopt;
    }
    if (!read_json_details(entry, *f)) {
        return "file " + f->filename + " has a field of the wrong type";
    }
    out.push_back(std::move(*f));
    return std::nullopt;
}

std::optional<JsonValue> parse_json_object(std::string_view text) {
    JsonValue page = JsonValue::parse(text.begin(), text.end(), nullptr, false);
    if (page.is_discarded() || !page.is_object()) {
        return std::nullopt;
    }
    return page;
}

enum class PageFormat { Html, Json, Unsupported };

PageFormat page_format(std::string_view content_type, std::string_view text) {
    std::string type = ascii_lower(trim(content_type.substr(0, content_type.find(';'))));
    if (type.empty()) {
        return trim(text).starts_with('{') ? PageFormat::Json : PageFormat::Html;
    }
    if (type == "application/vnd.pypi.simple.v1+json") {
        return PageFormat::Json;
    }
    if (type == "text/html" || type == "application/vnd.pypi.simple.v1+html") {
        return PageFormat::Html;
    }
    return PageFormat::Unsupported;
}

std::string unsupported(std::string_view content_type) {
    return "unsupported content type \"" + std::string(content_type) + "\"";
}

// ---- root listings ----

// Anchor text is the project's name (flashinfer's listing adds a trailing '/'); else the href's last segment.
void add_project(std::string_view text, std::string_view href, std::vector<std::string>& out) {
    std::string name(trim(text));
    if (name.empty()) {
        std::string path(trim(href.substr(0, href.find_first_of("?#"))));
        while (path.ends_with('/')) {
            path.pop_back();
        }
        name = percent_decode(path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1));
    }
    while (name.ends_with('/')) {
        name.pop_back();
    }
    if (!pep::is_valid_name(name)) {
        return;  // ".git/" in flashinfer's listing, navigation links
    }
    std::string normalized = pep::normalize_name(name);
    if (std::find(out.begin(), out.end(), normalized) == out.end()) {
        out.push_back(std::move(normalized));
    }
}

RootListing parse_html_root(std::string_view text) {
    auto doc = parse_html(text);
    if (!doc) {
        return {{}, "the HTML parser gave up on this page"};
    }
    HtmlPage page = read_html(**doc);
    if (auto bad = check_api_version(page.repository_version.value_or(""))) {
        return {{}, *bad};
    }
    RootListing listing;
    for (const auto& a : page.anchors) {
        add_project(a.text, a.href, listing.projects);
    }
    return listing;
}

RootListing parse_json_root(std::string_view text) {
    auto page = parse_json_object(text);
    if (!page) {
        return {{}, "not a JSON object"};
    }
    auto projects = page->find("projects");
    if (projects == page->end() || !projects->is_array()) {
        return {{}, "no \"projects\" array"};
    }
    if (auto bad = check_json_meta(*page)) {
        return {{}, *bad};
    }
    RootListing listing;
    for (const auto& p : *projects) {
        if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) {
            return {{}, "a \"projects\" entry lacks a string \"name\""};
        }
        add_project(p["name"].get<std::string>(), "", listing.projects);
    }
    return listing;
}

}  // namespace

ParseResult parse_html_page(std::string_view text, std::string_view page_url) {
    if (auto bad = check_base(page_url)) {
        return failure(*bad);
    }
    auto doc = parse_html(text);
    if (!doc) {
        return failure("the HTML parser gave up on this page");
    }
    HtmlPage page = read_html(**doc);
    if (auto bad = check_api_version(page.repository_version.value_or(""))) {
        return failure(*bad);
    }
    std::string base(page_url);
    if (page.base_href) {
        base = resolve_url(page_url, *page.base_href).value_or(base);
    }
    ParseResult result;
    for (const auto& a : page.anchors) {
        if (auto f = html_file(a, base)) {
            result.files.push_back(std::move(*f));
        }
    }
    return result;
}

ParseResult parse_json_page(std::string_view text, std::string_view page_url) {
    if (auto bad = check_base(page_url)) {
        return failure(*bad);
    }
    try {
        auto page = parse_json_object(text);
        if (!page) {
            return failure("not a JSON object");
        }
        if (auto bad = check_json_meta(*page)) {
            return failure(*bad);
        }
        auto files = page->find("files");
        if (files == page->end() || !files->is_array()) {
            return failure("no \"files\" array");
        }
        ParseResult result;
        for (const auto& entry : *files) {
            if (auto bad = read_json_file(entry, page_url, result.files)) {
                return failure(*bad);
            }
        }
        return result;
    } catch (const JsonValue::exception& e) {  // invalid UTF-8 in a string, say
        return failure(std::string("malformed JSON page: ") + e.what());
    }
}

ParseResult parse_page(std::string_view text, std::string_view content_type, std::string_view page_url) {
    switch (page_format(content_type, text)) {
        case PageFormat::Json:
            return parse_json_page(text, page_url);
        case PageFormat::Html:
            return parse_html_page(text, page_url);
        case PageFormat::Unsupported:
            break;
    }
    return failure(unsupported(content_type));
}

RootListing parse_root_page(std::string_view text, std::string_view content_type) {
    switch (page_format(content_type, text)) {
        case PageFormat::Json:
            try {
                return parse_json_root(text);
            } catch (const JsonValue::exception& e) {
                return {{}, std::string("malformed JSON page: ") + e.what()};
            }
        case PageFormat::Html:
            return parse_html_root(text);
        case PageFormat::Unsupported:
            break;
    }
    return {{}, unsupported(content_type)};
}

}  // namespace stackup::index
