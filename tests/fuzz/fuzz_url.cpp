// URLs from manifests and index pages: parse, resolve an href, split and strip credentials,
// and the redactor every log line goes through. Input: "<url>\n<href>" (the href optional).
#include "base/url.hpp"
#include "fuzz.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::base;
    auto text = stackup::fuzz::text_of(data, size);
    auto newline = text.find('\n');
    auto url_text = text.substr(0, newline);
    auto href = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    UrlError why{};
    auto url = parse_url(url_text, &why);
    if (url) {
        url->without_fragment();
        url->basename();
    }
    resolve(url_text, href);
    credentials_of(url_text);
    // Whatever credentials the text had, none survive without_credentials (a text that does not
    // parse comes back redacted: its userinfo "***").
    if (auto stripped = parse_url(without_credentials(url_text))) {
        stackup::fuzz::check(stripped->password.empty() && (stripped->user.empty() || stripped->user == "***"));
    }
    percent_decode(text);
    redact(text);
    return 0;
}
