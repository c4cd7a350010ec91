#pragma once
// URLs, read by libcurl's URL API (curl_url) and used only through this header: parsing,
// resolving an index page's hrefs, credentials split off for uv, and the one redactor
// that every log line, message, plan and journal goes through.

#include <optional>
#include <string>
#include <string_view>

struct Curl_URL;  // libcurl's CURLU, kept out of this header

namespace stackup::base {

// An absolute URL. Its parts stay percent-encoded as written, except user and password.
struct Url {
    std::string text;      // the whole URL as libcurl writes it back ("HTTPS://h" -> "https://h/")
    std::string scheme;    // lower case
    std::string user;      // percent-decoded; "" when none
    std::string password;  // percent-decoded; "" when none
    std::string host;      // "" for "file:///path"
    std::string port;      // "" when the URL names none
    std::string path;      // "/" at least
    std::string query;     // without the '?'; "" when none
    std::string fragment;  // without the '#'; "" when none

    // `text` without "#fragment".
    std::string without_fragment() const;
    // The last segment of the path, percent-decoded ("" for ".../dir/").
    std::string basename() const;

    friend bool operator==(const Url&, const Url&) = default;
};

enum class UrlError {
    not_absolute,  // no "scheme://": a relative reference, "pypi.example/simple", "https:host"
    no_host,       // "https:///simple", "https://user@/x" (file: URLs need none)
    malformed,     // libcurl refused it: a bad port or host name, a space, ...
};

// "scheme://authority/path?query#fragment", any scheme; nullopt (and `*why`, when given)
// otherwise. The last '@' of the authority ends the userinfo, as browsers and uv read it.
std::optional<Url> parse_url(std::string_view text, UrlError* why = nullptr);

// `href` resolved against `base` (RFC 3986 section 5.2, dot segments removed), both trimmed
// of ASCII white space; a space or non-ASCII byte in the href is percent-encoded. nullopt
// when `base` is not an absolute http(s)/file URL or the result is not one ("mailto:x").
std::optional<Url> resolve(std::string_view base, std::string_view href);

// Who writes a resolved URL's text. libcurl 7.88 writes each with its own printf (1.6 us a
// URL: most of a big page's parse), so a plain http(s) URL's is put together from the parts
// libcurl parsed, by libcurl's rules; `libcurl` has libcurl write every one (and encode every
// absolute href, which changes nothing in one of printable ASCII): the tests hold the two equal.
enum class UrlText { from_parts, libcurl };

// resolve() for many hrefs against one base (an index page's thousands of files): the base is
// read once, not once per href. `resolver(href)` is `resolve(base, href)`.
class Resolver {
public:
    explicit Resolver(std::string_view base, UrlText text = UrlText::from_parts);
    ~Resolver();
    Resolver(const Resolver&) = delete;
    Resolver& operator=(const Resolver&) = delete;

    // False when `base` is not an absolute http(s)/file URL: then every href gives nullopt.
    explicit operator bool() const { return base_ != nullptr; }
    std::optional<Url> operator()(std::string_view href) const;

private:
    Curl_URL* base_ = nullptr;  // without its fragment
    UrlText text_ = UrlText::from_parts;
};

// "%2B" -> "+"; a '%' not followed by two hex digits is kept as it is.
std::string percent_decode(std::string_view text);

// "https://user:p%40ss@host/x" -> {"https://host/x", "user", "p@ss"}; nullopt for a URL
// without userinfo or one that does not parse.
struct Credentials {
    std::string url;       // without the userinfo
    std::string username;  // percent-decoded
    std::string password;  // percent-decoded; "" when the userinfo has no ':'
};
std::optional<Credentials> credentials_of(std::string_view url);

// "https://user:pass@host/x" -> "https://host/x"; a text that does not parse as a URL
// comes back redacted, so that a credential never survives it.
std::string without_credentials(std::string_view url);

// The userinfo of every URL ("scheme://user:pw@host") inside a free text masked as "***@":
// for every log line, message, saved plan and journal entry.
std::string redact(std::string_view text);

}  // namespace stackup::base
