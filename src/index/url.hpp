#pragma once
// Just enough of RFC 3986 for index pages: resolving hrefs against the page URL,
// percent-decoding file names, and keeping credentials out of anything printed.

#include <optional>
#include <string>
#include <string_view>

namespace stackup::index {

// `href` resolved against `base` (RFC 3986 section 5.2, dot segments removed).
// nullopt when `base` is not an absolute http(s)/file URL or the result is not one
// (a "mailto:" or "javascript:" href).
std::optional<std::string> resolve_url(std::string_view base, std::string_view href);

// "%2B" -> "+"; a '%' not followed by two hex digits is kept as it is.
std::string percent_decode(std::string_view text);

// The URL without "#fragment", and the fragment alone ("" when there is none).
std::string_view without_fragment(std::string_view url);
std::string_view url_fragment(std::string_view url);

// The last segment of the URL's path, percent-decoded ("" for ".../dir/").
std::string path_basename(std::string_view url);

// "https://user:pass@host/x" -> "https://host/x"; other URLs unchanged.
std::string strip_credentials(std::string_view url);
// "https://user:p%40ss@host/x" -> {"https://host/x", "user", "p@ss"} (percent-decoded);
// nullopt for a URL without userinfo.
struct Credentials {
    std::string url;        // without the userinfo
    std::string username;
    std::string password;   // "" when the userinfo has no ':'
};
std::optional<Credentials> credentials_of(std::string_view url);
// "https://user:pass@host/x" -> "https://***@host/x", for every log line and file.
std::string redacted(std::string_view url);
// ASCII-only lower case, for schemes, hash names and content types.
std::string ascii_lower(std::string_view s);

}  // namespace stackup::index
