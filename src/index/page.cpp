#include "index/page.hpp"

#include <algorithm>
#include <array>

#include "index/page_parts.hpp"
#include "pep/name.hpp"

namespace stackup::index {
namespace detail {
namespace {

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
std::string choose_filename(std::string_view stated, const base::Url& url) {
    if (plausible_filename(trim(stated))) {
        return std::string(trim(stated));
    }
    std::string from_url = url.basename();
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

}  // namespace

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return out;
}

std::optional<IndexFile> file_at(const base::Url& absolute, std::string_view stated_name) {
    IndexFile f;
    f.url = absolute.without_fragment();
    f.filename = choose_filename(stated_name, absolute);
    if (f.filename.empty()) {
        return std::nullopt;
    }
    add_fragment_hash(absolute.fragment, f.hashes);
    return f;
}

// A major version this client does not know must not be guessed at.
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

std::optional<std::string> check_base(std::string_view page_url) {
    if (!base::Resolver(page_url)) {
        return "page URL is not an absolute http(s) or file URL: " + base::redact(page_url);
    }
    return std::nullopt;
}

ParseResult failure(std::string message) { return {{}, std::move(message)}; }

// Anchor text is the project's name (flashinfer's listing adds a trailing '/'); else the href's last segment.
void add_project(std::string_view text, std::string_view href, std::vector<std::string>& out) {
    std::string name(trim(text));
    if (name.empty()) {
        std::string path(trim(href.substr(0, href.find_first_of("?#"))));
        while (path.ends_with('/')) {
            path.pop_back();
        }
        name = base::percent_decode(path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1));
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

}  // namespace detail

namespace {

enum class PageFormat { Html, Json, Unsupported };

PageFormat page_format(std::string_view content_type, std::string_view text) {
    std::string type = detail::ascii_lower(detail::trim(content_type.substr(0, content_type.find(';'))));
    if (type.empty()) {
        return detail::trim(text).starts_with('{') ? PageFormat::Json : PageFormat::Html;
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

}  // namespace

ParseResult parse_page(std::string_view text, std::string_view content_type, std::string_view page_url,
                       std::size_t allocated) {
    switch (page_format(content_type, text)) {
        case PageFormat::Json:
            return parse_json_page(text, page_url, allocated);
        case PageFormat::Html:
            return parse_html_page(text, page_url);
        case PageFormat::Unsupported:
            break;
    }
    return detail::failure(unsupported(content_type));
}

RootListing parse_root_page(std::string_view text, std::string_view content_type) {
    switch (page_format(content_type, text)) {
        case PageFormat::Json:
            return detail::parse_json_root(text);
        case PageFormat::Html:
            return detail::parse_html_root(text);
        case PageFormat::Unsupported:
            break;
    }
    return {{}, unsupported(content_type)};
}

}  // namespace stackup::index
