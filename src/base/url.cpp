#include "base/url.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include <curl/curl.h>

#include "base/text.hpp"

namespace stackup::base {
namespace {

struct CurlUrlDeleter {
    void operator()(CURLU* handle) const { curl_url_cleanup(handle); }
};
using CurlUrl = std::unique_ptr<CURLU, CurlUrlDeleter>;

struct CurlFree {
    void operator()(char* text) const { curl_free(text); }
};
using CurlString = std::unique_ptr<char, CurlFree>;

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 3986 section 3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ':'.
// (curl 7.88 also takes a leading digit for a scheme: "1:2" would be one.)
std::size_t scheme_length(std::string_view s) {
    if (s.empty() || !is_alpha(s[0])) {
        return 0;
    }
    std::size_t i = 1;
    while (i < s.size() && (is_alpha(s[i]) || std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '+' ||
                            s[i] == '-' || s[i] == '.')) {
        ++i;
    }
    return i < s.size() && s[i] == ':' ? i : 0;
}

bool is_file_scheme(std::string_view scheme) {
    constexpr std::string_view file = "file";
    return scheme.size() == file.size() &&
           std::equal(scheme.begin(), scheme.end(), file.begin(), [](char a, char b) { return (a | 0x20) == b; });
}

bool is_fetchable(std::string_view scheme) { return scheme == "http" || scheme == "https" || scheme == "file"; }

// A part of the URL in `handle` as libcurl holds it; nullopt when it has none (an empty one is "").
std::optional<std::string> held(CURLU* handle, CURLUPart which, unsigned flags = 0) {
    char* raw = nullptr;
    CURLUcode rc = curl_url_get(handle, which, &raw, flags);
    CurlString owned(raw);
    return rc == CURLUE_OK && raw ? std::optional<std::string>(raw) : std::nullopt;
}

// A part of the URL in `handle`; "" when it has none.
std::string part(CURLU* handle, CURLUPart which, unsigned flags = 0) { return held(handle, which, flags).value_or(""); }

// curl_url_get's CURLUPART_URL for a plain http(s) URL, from its parts (UrlText::from_parts):
// only where libcurl's rules are simple (no userinfo, nor options, which http has none of; a
// host that is no "[IPv6]" and has no '%', which libcurl would encode); "" otherwise, for
// libcurl to write. Its rules: a port only as written, "/" before a path that lacks one, "?"
// only before a query that is not empty, "#" before any fragment held, even an empty one.
std::string plain_text(CURLU* handle, const Url& u) {
    if ((u.scheme != "http" && u.scheme != "https") || u.host.empty() || u.host.front() == '[' ||
        u.host.find('%') != std::string::npos || held(handle, CURLUPART_USER) || held(handle, CURLUPART_PASSWORD)) {
        return "";
    }
    auto fragment = held(handle, CURLUPART_FRAGMENT);
    std::string text;
    text.reserve(u.scheme.size() + 4 + u.host.size() + u.port.size() + u.path.size() + u.query.size() +
                 (fragment ? fragment->size() + 1 : 0));
    text.append(u.scheme).append("://").append(u.host);
    if (!u.port.empty()) {
        text.append(":").append(u.port);
    }
    if (u.path.empty() || u.path.front() != '/') {
        text += '/';
    }
    text += u.path;
    if (!u.query.empty()) {
        text.append("?").append(u.query);
    }
    if (fragment) {
        text.append("#").append(*fragment);
    }
    return text;
}

Url read(CURLU* handle, UrlText writer = UrlText::libcurl) {
    Url u;
    // The path first: libcurl 7.88 holds none for "file:///?q" and writes that URL
    // "file://(nil)"; asked for the path, it holds "/" from then on.
    u.path = part(handle, CURLUPART_PATH);
    if (writer == UrlText::libcurl) {
        u.text = part(handle, CURLUPART_URL);  // before the host: it writes a '%' there as "%25", for good
    }
    u.scheme = part(handle, CURLUPART_SCHEME);
    u.user = part(handle, CURLUPART_USER, CURLU_URLDECODE);
    u.password = part(handle, CURLUPART_PASSWORD, CURLU_URLDECODE);
    u.host = part(handle, CURLUPART_HOST);
    u.port = part(handle, CURLUPART_PORT);
    u.query = part(handle, CURLUPART_QUERY);
    u.fragment = part(handle, CURLUPART_FRAGMENT);
    if (writer == UrlText::from_parts && (u.text = plain_text(handle, u)).empty()) {
        u.text = part(handle, CURLUPART_URL);
        u.host = part(handle, CURLUPART_HOST);  // as libcurl left it, "%" written "%25"
    }
    return u;
}

// Every '@' of the authority but the last as "%40": "u:p@ss@host" is user "u", password "p@ss".
std::string encode_inner_at_signs(std::string_view text, std::size_t begin) {
    std::string_view authority = text.substr(begin, text.find_first_of("/?#", begin) - begin);
    std::size_t last = authority.rfind('@');
    std::string out(text.substr(0, begin));
    for (std::size_t i = 0; i < authority.size(); ++i) {
        out += authority[i] == '@' && i < last ? std::string("%40") : std::string(1, authority[i]);
    }
    return out + std::string(text.substr(begin + authority.size()));
}

// Hands an absolute URL to libcurl, which on its own would also take "https:/h" or
// "https:///simple" (reading "simple" as the host): the "//" and the host are checked first.
CurlUrl parse_handle(std::string_view text, unsigned flags, UrlError* why) {
    auto fail = [&](UrlError e) {
        if (why) {
            *why = e;
        }
        return CurlUrl();
    };
    std::size_t colon = scheme_length(text);
    if (colon == 0 || text.substr(colon, 3) != "://") {
        return fail(UrlError::not_absolute);
    }
    if (text.find('\0') != std::string_view::npos) {
        return fail(UrlError::malformed);  // libcurl reads a C string: it would take the part before the NUL
    }
    std::size_t begin = colon + 3;
    std::string_view authority = text.substr(begin, text.find_first_of("/?#", begin) - begin);
    if (!is_file_scheme(text.substr(0, colon)) && (authority.empty() || authority.back() == '@')) {
        return fail(UrlError::no_host);
    }
    CurlUrl handle(curl_url());
    if (!handle) {
        return fail(UrlError::malformed);
    }
    std::string fixed = encode_inner_at_signs(text, begin);
    CURLUcode rc = curl_url_set(handle.get(), CURLUPART_URL, fixed.c_str(), flags | CURLU_NON_SUPPORT_SCHEME);
    if (rc == CURLUE_NO_HOST) {
        return fail(UrlError::no_host);
    }
    if (rc != CURLUE_OK) {
        return fail(UrlError::malformed);
    }
    return handle;
}

// RFC 3986 section 4.2: a relative path whose first segment holds a ':' is written "./a:b",
// else "a" would be read as a scheme.
std::string relative_reference(std::string_view href) {
    std::size_t first_segment = std::min(href.find_first_of("/?#"), href.size());
    if (href.substr(0, first_segment).find(':') != std::string_view::npos) {
        return "./" + std::string(href);
    }
    return std::string(href);
}

// Where a URL's authority ends in a free text.
bool ends_authority(char c) {
    return c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' || c == '>' ||
           std::isspace(static_cast<unsigned char>(c));
}

// Masks the userinfo of the authority starting at `begin`; returns the index past it.
std::size_t mask_userinfo(std::string& text, std::size_t begin) {
    std::size_t end = begin;
    while (end < text.size() && !ends_authority(text[end])) {
        ++end;
    }
    const std::size_t at = std::string_view(text).substr(begin, end - begin).rfind('@');
    if (at == std::string_view::npos || at == 0) {
        return end;
    }
    text.replace(begin, at, "***");
    return end - at + 3;
}

}  // namespace

std::string Url::without_fragment() const { return text.substr(0, text.find('#')); }

std::string Url::basename() const {
    auto slash = path.rfind('/');
    return percent_decode(slash == std::string::npos ? std::string_view(path) : std::string_view(path).substr(slash + 1));
}

std::optional<Url> parse_url(std::string_view text, UrlError* why) {
    CurlUrl handle = parse_handle(text, 0, why);
    if (!handle) {
        return std::nullopt;
    }
    return read(handle.get());
}

std::optional<Url> resolve(std::string_view base, std::string_view href) { return Resolver(base)(href); }

Resolver::Resolver(std::string_view base, UrlText text) : text_(text) {
    CurlUrl handle = parse_handle(trim(base), 0, nullptr);
    if (handle && is_fetchable(part(handle.get(), CURLUPART_SCHEME))) {
        curl_url_set(handle.get(), CURLUPART_FRAGMENT, nullptr, 0);
        base_ = handle.release();
    }
}

Resolver::~Resolver() { curl_url_cleanup(base_); }

std::optional<Url> Resolver::operator()(std::string_view href) const {
    if (!base_) {
        return std::nullopt;
    }
    href = trim(href);
    if (href.find('\0') != std::string_view::npos) {
        return std::nullopt;  // libcurl would resolve only the part before the NUL
    }
    if (scheme_length(href) != 0) {  // absolute: "http:g" (no "//") is refused, as curl refuses it
        // libcurl 7.88's URLENCODE rewrites only spaces and bytes past 0x7e, and costs a third
        // of the parse: left off for an href that has neither (as every real page's are).
        const bool plain = text_ == UrlText::from_parts && std::all_of(href.begin(), href.end(), [](char c) {
            return c > ' ' && c < '\x7f';
        });
        auto absolute = parse_handle(href, plain ? 0 : CURLU_URLENCODE, nullptr);
        if (!absolute || !is_fetchable(part(absolute.get(), CURLUPART_SCHEME))) {
            return std::nullopt;
        }
        return read(absolute.get(), text_);
    }
    CurlUrl handle(curl_url_dup(base_));
    if (!handle) {
        return std::nullopt;
    }
    CURLUcode rc = CURLUE_OK;
    // curl 7.88 resolves "" and "#s" against the base's directory; RFC 3986 keeps the base's path and query.
    if (href.starts_with('#')) {
        rc = curl_url_set(handle.get(), CURLUPART_FRAGMENT, std::string(href.substr(1)).c_str(), 0);
    } else if (!href.empty()) {
        rc = curl_url_set(handle.get(), CURLUPART_URL, relative_reference(href).c_str(), CURLU_URLENCODE);
    }
    if (rc != CURLUE_OK) {
        return std::nullopt;
    }
    return read(handle.get(), text_);
}

std::string percent_decode(std::string_view text) {
    if (text.empty()) {
        return "";
    }
    int length = 0;
    // The easy handle has been optional here since curl 7.82.
    CurlString decoded(curl_easy_unescape(nullptr, text.data(), static_cast<int>(text.size()), &length));
    return decoded ? std::string(decoded.get(), static_cast<std::size_t>(length)) : std::string(text);
}

std::optional<Credentials> credentials_of(std::string_view url) {
    CurlUrl handle = parse_handle(url, 0, nullptr);
    if (!handle || (!held(handle.get(), CURLUPART_USER) && !held(handle.get(), CURLUPART_PASSWORD))) {
        return std::nullopt;
    }
    Credentials c;
    c.username = part(handle.get(), CURLUPART_USER, CURLU_URLDECODE);
    c.password = part(handle.get(), CURLUPART_PASSWORD, CURLU_URLDECODE);
    curl_url_set(handle.get(), CURLUPART_USER, nullptr, 0);
    curl_url_set(handle.get(), CURLUPART_PASSWORD, nullptr, 0);
    c.url = part(handle.get(), CURLUPART_URL);
    return c;
}

std::string without_credentials(std::string_view url) {
    if (auto c = credentials_of(url)) {
        return c->url;
    }
    return redact(url);
}

std::string redact(std::string_view text) {
    std::string out(text);
    std::size_t pos = 0;
    while ((pos = out.find("://", pos)) != std::string::npos) {
        pos = mask_userinfo(out, pos + 3);
    }
    return out;
}

}  // namespace stackup::base
