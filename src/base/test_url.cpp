// URL resolution against RFC 3986 section 5.4's own examples, the shapes index pages use,
// credentials, and the one redactor.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "base/url.hpp"
#include "temp_dir.hpp"

namespace base = stackup::base;
using namespace std::string_literals;

namespace {

std::optional<std::string> resolved(std::string_view page, std::string_view href) {
    auto url = base::resolve(page, href);
    return url ? std::optional<std::string>(url->text) : std::nullopt;
}

}  // namespace

TEST_SUITE("base") {
    TEST_CASE("resolve: RFC 3986 5.4.1 normal and 5.4.2 abnormal examples") {
        const std::string page = "http://a/b/c/d;p?q";
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"g", "http://a/b/c/g"}, {"./g", "http://a/b/c/g"}, {"g/", "http://a/b/c/g/"},
            {"/g", "http://a/g"}, {"//g", "http://g/"},  // RFC: "http://g", the same URL (section 6.2.3)
            {"?y", "http://a/b/c/d;p?y"},
            {"g?y", "http://a/b/c/g?y"}, {"#s", "http://a/b/c/d;p?q#s"}, {"g#s", "http://a/b/c/g#s"},
            {"g?y#s", "http://a/b/c/g?y#s"}, {";x", "http://a/b/c/;x"}, {"g;x", "http://a/b/c/g;x"},
            {"", "http://a/b/c/d;p?q"}, {".", "http://a/b/c/"}, {"./", "http://a/b/c/"},
            {"..", "http://a/b/"}, {"../", "http://a/b/"}, {"../g", "http://a/b/g"},
            {"../..", "http://a/"}, {"../../", "http://a/"}, {"../../g", "http://a/g"},
            {"../../../g", "http://a/g"}, {"../../../../g", "http://a/g"}, {"/./g", "http://a/g"},
            {"/../g", "http://a/g"}, {"g.", "http://a/b/c/g."}, {".g", "http://a/b/c/.g"},
            {"g..", "http://a/b/c/g.."}, {"..g", "http://a/b/c/..g"}, {"./../g", "http://a/b/g"},
            {"./g/.", "http://a/b/c/g/"}, {"g/./h", "http://a/b/c/g/h"}, {"g/../h", "http://a/b/c/h"},
            {"g;x=1/./y", "http://a/b/c/g;x=1/y"}, {"g;x=1/../y", "http://a/b/c/y"},
            {"g?y/./x", "http://a/b/c/g?y/./x"}, {"g#s/../x", "http://a/b/c/g#s/../x"},
        };
        for (const auto& [href, expected] : cases) {
            INFO("href: '", href, "'");
            CHECK(resolved(page, href) == expected);
        }
        // 5.4.2's "http:g": a strict parser keeps it, an old one reads "g"; libcurl refuses a
        // scheme without "//", so it names no file.
        CHECK_FALSE(resolved(page, "http:g"));
    }

    TEST_CASE("Resolver: one base read once, every href as resolve() answers it alone, in any order") {
        const std::string page = "http://a/b/c/d;p?q#frag";
        const std::vector<std::string> hrefs = {
            "#s", "g", "../../g", "", "?y", "https://h.example/x.whl#sha256=ab", "//g", "g?y#s", "http:g",
            "mailto:x@y", "a\0b"s, "#t", "./g/.", " g ", "../g#sha256=cd",
        };
        const base::Resolver resolve(page);
        REQUIRE(static_cast<bool>(resolve));
        for (int round = 0; round < 2; ++round) {  // a second round: nothing an href did stays in the base
            for (const auto& href : hrefs) {
                INFO("href: '", href, "'");
                auto alone = base::resolve(page, href);
                auto shared = resolve(href);
                CHECK(shared == alone);
            }
        }
        CHECK(resolve("#s")->text == "http://a/b/c/d;p?q#s");  // the base's own fragment is not kept
        CHECK(resolve("g")->text == "http://a/b/c/g");
        const base::Resolver unusable("mailto:x@example.com");
        CHECK_FALSE(static_cast<bool>(unusable));
        CHECK_FALSE(unusable("https://h.example/x.whl"));
        CHECK_FALSE(static_cast<bool>(base::Resolver("/simple/torch/")));
    }

    TEST_CASE("Resolver: a plain URL's text put together from its parts is libcurl's, for every fixture href") {
        // Every href and "url" of the stored real pages, and the shapes where libcurl's own
        // rules matter: a port, an empty query or fragment, userinfo, IPv6, a '%' in the host,
        // an upper-case scheme, file:, a path that needs encoding.
        std::vector<std::string> hrefs = {
            "https://h.example:8443/p/x.whl#sha256=ab", "https://h.example:443/x.whl", "https://h.example/x.whl?",
            "https://h.example/x.whl#", "https://h.example/x.whl?#", "https://h.example/x?a=b+c&d#e",
            "https://u:p@h.example/x.whl", "https://u@h.example/x.whl", "https://:p@h.example/x",
            "http://[::1]:8080/simple/x.whl", "http://[fe80::1%25eth0]/x.whl", "https://h%41.example/x",
            "HTTPS://H.EXAMPLE/X.whl", "https://h.example", "file:///srv/wheels/x.whl", "file:///srv/x.whl#sha256=ab",
            "https://h.example/a b/x y.whl", "https://h.example/\xc3\xa9.whl", "https://h.example/a/./b/../x.whl",
            "x.whl#sha256=ab", "../../packages/x.whl", "/whl/cu128/torch-2.7.0%2Bcu128.whl", "?q", "#", "#s", "",
            "//other.example/x.whl", "a b.whl", "https://h.example/%zz/x.whl", "https://h.example//x.whl",
        };
        const std::regex href_re(R"re((?:href="|"url": ?")([^"]*)")re");
        int pages = 0;
        for (const auto& entry : std::filesystem::directory_iterator(stackup::testing::fixtures_dir() / "indexes")) {
            std::ifstream in(entry.path(), std::ios::binary);
            const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
            for (std::sregex_iterator it(text.begin(), text.end(), href_re), end; it != end; ++it) {
                hrefs.push_back((*it)[1].str());
            }
            ++pages;
        }
        CHECK(pages >= 25);
        CHECK(hrefs.size() > 400);
        for (const std::string base : {"https://idx.example/simple/torch/", "http://127.0.0.1:8080/simple/x/",
                                       "https://u:p@mirror.example/+simple/devpi", "http://[::1]:9000/whl/",
                                       "file:///srv/index/simple/x/", "https://idx.example/simple/x/?page=2#top"}) {
            const base::Resolver ours(base);
            const base::Resolver libcurls(base, base::UrlText::libcurl);
            for (const auto& href : hrefs) {
                INFO("base: ", base, " href: '", href, "'");
                auto a = ours(href);
                auto b = libcurls(href);
                INFO("ours: ", a ? a->text : "(none)", " libcurl's: ", b ? b->text : "(none)");
                CHECK(a == b);  // every part
            }
        }
    }

    TEST_CASE("resolve: index-page shapes") {
        const std::string page = "https://download.pytorch.org/whl/torch/";
        CHECK(resolved(page, "/whl/cu128/torch-2.7.0%2Bcu128-cp312-cp312-win_amd64.whl#sha256=ab") ==
              "https://download.pytorch.org/whl/cu128/torch-2.7.0%2Bcu128-cp312-cp312-win_amd64.whl#sha256=ab");
        CHECK(resolved("https://mirror.example/simple/torch/", "../../packages/9f/cd/t.whl") ==
              "https://mirror.example/packages/9f/cd/t.whl");
        CHECK(resolved("https://m.devpi.net/fschulze/dev/+simple/devpi", "../../../root/pypi/+f/159/d.tar.gz") ==
              "https://m.devpi.net/root/pypi/+f/159/d.tar.gz");
        CHECK(resolved(page, "https://github.com/x/y.whl") == "https://github.com/x/y.whl");
        CHECK(resolved(page, "  sub/f.whl\n") == "https://download.pytorch.org/whl/torch/sub/f.whl");
        CHECK(resolved("HTTPS://Host/a/b", "c") == "https://Host/a/c");  // scheme is case-insensitive
        CHECK(resolved("file:///srv/index/torch/index.html", "../files/t.whl") == "file:///srv/index/files/t.whl");
        CHECK(resolved("https://u:p@idx.example/simple/x/", "f.whl") == "https://u:p@idx.example/simple/x/f.whl");
        CHECK(resolved("https://host", "f.whl") == "https://host/f.whl");
        // a page URL that carries a fragment does not leak it into relative files
        CHECK(resolved("https://h/simple/x/#top", "f.whl") == "https://h/simple/x/f.whl");
        CHECK(resolved(page, "a b.whl") == "https://download.pytorch.org/whl/torch/a%20b.whl");
        CHECK(resolved(page, "https://h/a b%2B.whl") == "https://h/a%20b%2B.whl");
    }

    TEST_CASE("resolve: no result for unusable bases or non-http(s)/file targets") {
        CHECK_FALSE(resolved("", "f.whl"));
        CHECK_FALSE(resolved("/simple/x/", "f.whl"));
        CHECK_FALSE(resolved("ftp://h/x/", "f.whl"));
        CHECK_FALSE(resolved("https:///x/", "f.whl"));
        CHECK_FALSE(resolved("https://h/x/", "mailto:someone@example.org"));
        CHECK_FALSE(resolved("https://h/x/", "javascript:alert(1)"));
        CHECK_FALSE(resolved("https://h/x/", "ftp://h/f.whl"));
        CHECK(resolved("https://h/x/", "1:2") == "https://h/x/1:2");  // "1" is not a scheme
    }

    TEST_CASE("parse_url: the parts, and why a text is no URL") {
        auto u = base::parse_url("HTTPS://alice:pa%3As@Idx.example:8443/simple/a%2Bb/?x=1#sha256=ab");
        REQUIRE(u);
        CHECK(u->scheme == "https");
        CHECK(u->user == "alice");
        CHECK(u->password == "pa:s");
        CHECK(u->host == "Idx.example");
        CHECK(u->port == "8443");
        CHECK(u->path == "/simple/a%2Bb/");
        CHECK(u->query == "x=1");
        CHECK(u->fragment == "sha256=ab");
        CHECK(u->without_fragment() == "https://alice:pa%3As@Idx.example:8443/simple/a%2Bb/?x=1");
        auto file = base::parse_url("file:///srv/wheels");
        REQUIRE(file);
        CHECK(file->host == "");
        CHECK(file->path == "/srv/wheels");
        // libcurl 7.88 holds no path for "file:///?q" and would write the URL "file://(nil)";
        // found by fuzz_url. (Its file: URLs are written without their query.)
        CHECK(base::parse_url("file:///?q")->text == "file:///");
        CHECK(base::resolve("file:///?q", "")->text == "file:///");
        CHECK(base::parse_url("s3://bucket/x")->scheme == "s3");  // any scheme; callers choose
        auto at = base::parse_url("https://u:p@ss@host/x");  // the last '@' ends the userinfo
        REQUIRE(at);
        CHECK(at->host == "host");
        CHECK(at->password == "p@ss");

        auto why = [](std::string_view text) {
            base::UrlError e = base::UrlError::malformed;
            CHECK_FALSE(base::parse_url(text, &e));
            return e;
        };
        CHECK(why("pypi.example/simple") == base::UrlError::not_absolute);
        CHECK(why("https:h/x") == base::UrlError::not_absolute);
        CHECK(why("https:/h/x") == base::UrlError::not_absolute);
        CHECK(why("/simple/") == base::UrlError::not_absolute);
        CHECK(why("") == base::UrlError::not_absolute);
        CHECK(why("https:///simple") == base::UrlError::no_host);
        CHECK(why("https://user@/x") == base::UrlError::no_host);
        CHECK(why("https://host:99999/") == base::UrlError::malformed);
        CHECK(why("https://h/x y") == base::UrlError::malformed);
        // A NUL is no part of a URL: libcurl, reading a C string, parsed "http://1Hh/" out of this
        // and took the text after the NUL for none of it (found by fuzz_url).
        using namespace std::string_view_literals;
        CHECK(why("http://1Hh\0\0@host/x"sv) == base::UrlError::malformed);
        CHECK_FALSE(base::resolve("https://host/simple/", "a\0b.whl"sv));
    }

    TEST_CASE("percent_decode") {
        CHECK(base::percent_decode("torch-2.7.0%2Bcu128-cp312.whl") == "torch-2.7.0+cu128-cp312.whl");
        CHECK(base::percent_decode("a%2b%20b") == "a+ b");
        CHECK(base::percent_decode("100%") == "100%");
        CHECK(base::percent_decode("%zz%2") == "%zz%2");
        CHECK(base::percent_decode("raw+plus") == "raw+plus");
        CHECK(base::percent_decode("") == "");
    }

    TEST_CASE("fragments and basenames") {
        auto f = base::parse_url("https://h/f.whl#sha256=ab");
        REQUIRE(f);
        CHECK(f->without_fragment() == "https://h/f.whl");
        CHECK(f->fragment == "sha256=ab");
        CHECK(base::parse_url("https://h/f.whl")->fragment == "");
        CHECK(base::parse_url("https://h/whl/cu128/torch-2.7.0%2Bcu128-cp39-cp39-win_amd64.whl?x=1#h")->basename() ==
              "torch-2.7.0+cu128-cp39-cp39-win_amd64.whl");
        CHECK(base::parse_url("https://h/simple/torch/")->basename() == "");
        CHECK(base::parse_url("https://h")->basename() == "");
    }

    TEST_CASE("credentials in an index URL: split and percent-decoded; none without userinfo") {
        auto c = base::credentials_of("https://alice:pa%3Ass%40w0rd@host.example/simple/");
        REQUIRE(c);
        CHECK(c->url == "https://host.example/simple/");
        CHECK(c->username == "alice");
        CHECK(c->password == "pa:ss@w0rd");
        auto token = base::credentials_of("https://__token__@host/x");
        REQUIRE(token);
        CHECK(token->username == "__token__");
        CHECK(token->password.empty());
        CHECK(token->url == "https://host/x");
        auto raw_at = base::credentials_of("https://u:p@ss@host:8443/x");
        REQUIRE(raw_at);
        CHECK(raw_at->password == "p@ss");
        CHECK(raw_at->url == "https://host:8443/x");
        CHECK_FALSE(base::credentials_of("https://host/simple/"));
        CHECK_FALSE(base::credentials_of("https://host/path@with-at/"));
        CHECK_FALSE(base::credentials_of("not a url"));
    }

    TEST_CASE("without_credentials strips the userinfo, nothing else; never lets one through") {
        CHECK(base::without_credentials("https://user:s3cret@idx.example/simple/") == "https://idx.example/simple/");
        CHECK(base::without_credentials("http://bob:s%3Acret@127.0.0.1:9/pytorch/") == "http://127.0.0.1:9/pytorch/");
        CHECK(base::without_credentials("https://idx.example/simple/") == "https://idx.example/simple/");
        CHECK(base::without_credentials("https://u:p@h/x y") == "https://***@h/x y");  // no URL: redacted
    }

    TEST_CASE("redact masks the userinfo of every URL in a text, and nothing else") {
        CHECK(base::redact("https://user:pass@host/simple/") == "https://***@host/simple/");
        CHECK(base::redact("https://__token__@host/simple/") == "https://***@host/simple/");
        CHECK(base::redact("https://u:p@ss@host:8443/x") == "https://***@host:8443/x");
        CHECK(base::redact("https://a:b@c@host/p") == "https://***@host/p");
        CHECK(base::redact("http://u:p@127.0.0.1:8080") == "http://***@127.0.0.1:8080");
        CHECK(base::redact("https://token@idx.example:8443/x?a=b@c") == "https://***@idx.example:8443/x?a=b@c");
        CHECK(base::redact("https://host/simple/") == "https://host/simple/");
        CHECK(base::redact("https://host/a@b/?mail=x@y#f@g") == "https://host/a@b/?mail=x@y#f@g");
        CHECK(base::redact("no creds: https://h/x?a=b@c") == "no creds: https://h/x?a=b@c");
        CHECK(base::redact("not a url") == "not a url");
        CHECK(base::redact("mail me: someone@example.org") == "mail me: someone@example.org");
        CHECK(base::redact("") == "");
        CHECK(base::redact("get https://a:b@one/x failed, then http://c:d@two/y too") ==
              "get https://***@one/x failed, then http://***@two/y too");
        CHECK(base::redact("see http://token@h/x and https://u:p@h2/") == "see http://***@h/x and https://***@h2/");
        CHECK(base::redact("index='https://alice:s3cret@idx.example/simple'") == "index='https://***@idx.example/simple'");
    }
}
