// URLs from manifests and index pages: parse, resolve an href, split and strip credentials,
// and the redactor every log line goes through. Input: "<url>\n<href>" (the href optional).
#include "base/url.hpp"
#include "fuzz.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::base;
    auto text = stackup::fuzz::text_of(data, size);
    auto [url_text, href] = stackup::fuzz::first_line_and_rest(text);
    UrlError why{};
    auto url = parse_url(url_text, &why);
    if (url) {
        url->without_fragment();
        url->basename();
    }
    // A plain URL's text put together from its parts is the text libcurl writes.
    stackup::fuzz::check(resolve(url_text, href) == Resolver(url_text, UrlText::libcurl)(href));
    credentials_of(url_text);
    // A URL's credentials do not survive without_credentials. (A text that is no URL comes back
    // redacted as free text, where a quote or a control character ends a URL: no check there.)
    if (url) {
        if (auto stripped = parse_url(without_credentials(url_text))) {
            stackup::fuzz::check(stripped->user.empty() && stripped->password.empty());
        }
    }
    percent_decode(text);
    redact(text);
    return 0;
}
