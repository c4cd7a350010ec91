#include "index/url.hpp"

#include <algorithm>

namespace stackup::index {
namespace {

struct UrlParts {
    std::string scheme;  // lower-cased, "" for a relative reference
    bool has_authority = false;
    std::string authority;
    std::string path;
    bool has_query = false;
    std::string query;
    bool has_fragment = false;
    std::string fragment;
};

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_scheme(std::string_view s) {
    if (s.empty() || !is_alpha(s[0])) {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
    });
}


bool is_supported_scheme(std::string_view scheme) {
    return scheme == "http" || scheme == "https" || scheme == "file";
}

std::string_view trim_ascii_space(std::string_view s) {
    constexpr std::string_view space = " \t\n\r\f";
    auto first = s.find_first_not_of(space);
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(space) - first + 1);
}

// Appendix B's regular expression, written out.
UrlParts split(std::string_view s) {
    UrlParts p;
    auto colon = s.find(':');
    if (colon != std::string_view::npos && is_scheme(s.substr(0, colon))) {
        p.scheme = ascii_lower(s.substr(0, colon));
        s.remove_prefix(colon + 1);
    }
    if (s.starts_with("//")) {
        s.remove_prefix(2);
        auto end = std::min(s.find_first_of("/?#"), s.size());
        p.has_authority = true;
        p.authority = s.substr(0, end);
        s.remove_prefix(end);
    }
    auto path_end = std::min(s.find_first_of("?#"), s.size());
    p.path = s.substr(0, path_end);
    s.remove_prefix(path_end);
    if (s.starts_with('?')) {
        auto end = std::min(s.find('#'), s.size());
        p.has_query = true;
        p.query = s.substr(1, end - 1);
        s.remove_prefix(end);
    }
    if (s.starts_with('#')) {
        p.has_fragment = true;
        p.fragment = s.substr(1);
    }
    return p;
}

std::string join(const UrlParts& p) {
    std::string out = p.scheme + ":";
    if (p.has_authority) {
        out += "//" + p.authority;
    }
    out += p.path;
    if (p.has_query) {
        out += "?" + p.query;
    }
    if (p.has_fragment) {
        out += "#" + p.fragment;
    }
    return out;
}

void drop_last_segment(std::string& out) {
    auto slash = out.rfind('/');
    out.erase(slash == std::string::npos ? 0 : slash);
}

// Section 5.2.4; the letters name its steps.
std::string remove_dot_segments(std::string in) {
    std::string out;
    while (!in.empty()) {
        if (in.starts_with("../")) {
            in.erase(0, 3);
        } else if (in.starts_with("./")) {
            in.erase(0, 2);
        } else if (in.starts_with("/./")) {  // B
            in.erase(0, 2);
        } else if (in == "/.") {
            in = "/";
        } else if (in.starts_with("/../")) {  // C
            in.erase(0, 3);
            drop_last_segment(out);
        } else if (in == "/..") {
            in = "/";
            drop_last_segment(out);
        } else if (in == "." || in == "..") {  // D
            in.clear();
        } else {  // E
            auto end = std::min(in.find('/', 1), in.size());
            out += in.substr(0, end);
            in.erase(0, end);
        }
    }
    return out;
}

std::string merge(const UrlParts& base, const std::string& ref_path) {
    if (base.has_authority && base.path.empty()) {
        return "/" + ref_path;
    }
    auto slash = base.path.rfind('/');
    return slash == std::string::npos ? ref_path : base.path.substr(0, slash + 1) + ref_path;
}

UrlParts resolve_parts(const UrlParts& b, const UrlParts& r) {
    if (!r.scheme.empty()) {
        UrlParts t = r;
        t.path = remove_dot_segments(r.path);
        return t;
    }
    UrlParts t = r;
    t.scheme = b.scheme;
    if (r.has_authority) {
        t.path = remove_dot_segments(r.path);
        return t;
    }
    t.has_authority = b.has_authority;
    t.authority = b.authority;
    if (r.path.empty()) {
        t.path = b.path;
        if (!r.has_query) {
            t.has_query = b.has_query;
            t.query = b.query;
        }
    } else if (r.path.starts_with('/')) {
        t.path = remove_dot_segments(r.path);
    } else {
        t.path = remove_dot_segments(merge(b, r.path));
    }
    return t;
}

int hex_value(char c) {
    if (is_digit(c)) {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Where the userinfo ("user:pass@") of an absolute URL starts and ends; nullopt when it has none.
std::optional<std::pair<size_t, size_t>> userinfo_span(std::string_view url) {
    auto start = url.find("://");
    if (start == std::string_view::npos || !is_scheme(url.substr(0, start))) {
        return std::nullopt;
    }
    start += 3;
    auto end = std::min(url.find_first_of("/?#", start), url.size());
    auto at = url.substr(start, end - start).rfind('@');
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    return std::pair{start, start + at + 1};
}

}  // namespace

std::optional<std::string> resolve_url(std::string_view base, std::string_view href) {
    UrlParts b = split(trim_ascii_space(base));
    if (!is_supported_scheme(b.scheme)) {
        return std::nullopt;
    }
    b.has_fragment = false;
    UrlParts t = resolve_parts(b, split(trim_ascii_space(href)));
    if (!is_supported_scheme(t.scheme)) {
        return std::nullopt;
    }
    return join(t);
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string_view without_fragment(std::string_view url) { return url.substr(0, url.find('#')); }

std::string_view url_fragment(std::string_view url) {
    auto hash = url.find('#');
    return hash == std::string_view::npos ? std::string_view{} : url.substr(hash + 1);
}

std::string path_basename(std::string_view url) {
    UrlParts p = split(url);
    auto slash = p.path.rfind('/');
    return percent_decode(slash == std::string::npos ? p.path : p.path.substr(slash + 1));
}

std::string strip_credentials(std::string_view url) {
    auto span = userinfo_span(url);
    if (!span) {
        return std::string(url);
    }
    return std::string(url.substr(0, span->first)) + std::string(url.substr(span->second));
}

std::optional<Credentials> credentials_of(std::string_view url) {
    auto span = userinfo_span(url);
    if (!span) {
        return std::nullopt;
    }
    std::string_view userinfo = url.substr(span->first, span->second - 1 - span->first);
    auto colon = userinfo.find(':');
    return Credentials{strip_credentials(url), percent_decode(userinfo.substr(0, colon)),
                       colon == std::string_view::npos ? "" : percent_decode(userinfo.substr(colon + 1))};
}

std::string redacted(std::string_view url) {
    auto span = userinfo_span(url);
    if (!span) {
        return std::string(url);
    }
    return std::string(url.substr(0, span->first)) + "***@" + std::string(url.substr(span->second));
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return out;
}

}  // namespace stackup::index
