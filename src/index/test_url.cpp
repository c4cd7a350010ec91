// URL resolution against RFC 3986 section 5.4's own examples, plus the shapes index pages use.

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "index/url.hpp"

using stackup::index::credentials_of;
using stackup::index::path_basename;
using stackup::index::percent_decode;
using stackup::index::redacted;
using stackup::index::resolve_url;
using stackup::index::strip_credentials;
using stackup::index::url_fragment;
using stackup::index::without_fragment;

TEST_SUITE("index") {
    TEST_CASE("resolve_url: RFC 3986 5.4.1 normal and 5.4.2 abnormal examples") {
        const std::string base = "http://a/b/c/d;p?q";
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"g", "http://a/b/c/g"}, {"./g", "http://a/b/c/g"}, {"g/", "http://a/b/c/g/"},
            {"/g", "http://a/g"}, {"//g", "http://g"}, {"?y", "http://a/b/c/d;p?y"},
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
            {"http:g", "http:g"},
        };
        for (const auto& [href, expected] : cases) {
            INFO("href: '", href, "'");
            CHECK(resolve_url(base, href) == expected);
        }
    }

    TEST_CASE("resolve_url: index-page shapes") {
        const std::string page = "https://download.pytorch.org/whl/torch/";
        CHECK(resolve_url(page, "/whl/cu128/torch-2.7.0%2Bcu128-cp312-cp312-win_amd64.whl#sha256=ab") ==
              "https://download.pytorch.org/whl/cu128/torch-2.7.0%2Bcu128-cp312-cp312-win_amd64.whl#sha256=ab");
        CHECK(resolve_url("https://mirror.example/simple/torch/", "../../packages/9f/cd/t.whl") ==
              "https://mirror.example/packages/9f/cd/t.whl");
        CHECK(resolve_url("https://m.devpi.net/fschulze/dev/+simple/devpi", "../../../root/pypi/+f/159/d.tar.gz") ==
              "https://m.devpi.net/root/pypi/+f/159/d.tar.gz");
        CHECK(resolve_url(page, "https://github.com/x/y.whl") == "https://github.com/x/y.whl");
        CHECK(resolve_url(page, "  sub/f.whl\n") == "https://download.pytorch.org/whl/torch/sub/f.whl");
        CHECK(resolve_url("HTTPS://Host/a/b", "c") == "https://Host/a/c");  // scheme is case-insensitive
        CHECK(resolve_url("file:///srv/index/torch/index.html", "../files/t.whl") == "file:///srv/index/files/t.whl");
        CHECK(resolve_url("https://u:p@idx.example/simple/x/", "f.whl") == "https://u:p@idx.example/simple/x/f.whl");
        CHECK(resolve_url("https://host", "f.whl") == "https://host/f.whl");
        // a page URL that carries a fragment does not leak it into relative files
        CHECK(resolve_url("https://h/simple/x/#top", "f.whl") == "https://h/simple/x/f.whl");
    }

    TEST_CASE("resolve_url: no result for unusable bases or non-http(s)/file targets") {
        CHECK_FALSE(resolve_url("", "f.whl"));
        CHECK_FALSE(resolve_url("/simple/x/", "f.whl"));
        CHECK_FALSE(resolve_url("ftp://h/x/", "f.whl"));
        CHECK_FALSE(resolve_url("https://h/x/", "mailto:someone@example.org"));
        CHECK_FALSE(resolve_url("https://h/x/", "javascript:alert(1)"));
        CHECK(resolve_url("https://h/x/", "1:2") == "https://h/x/1:2");  // "1" is not a scheme
    }

    TEST_CASE("percent_decode") {
        CHECK(percent_decode("torch-2.7.0%2Bcu128-cp312.whl") == "torch-2.7.0+cu128-cp312.whl");
        CHECK(percent_decode("a%2b%20b") == "a+ b");
        CHECK(percent_decode("100%") == "100%");
        CHECK(percent_decode("%zz%2") == "%zz%2");
        CHECK(percent_decode("raw+plus") == "raw+plus");
        CHECK(percent_decode("") == "");
    }

    TEST_CASE("fragments and basenames") {
        CHECK(without_fragment("https://h/f.whl#sha256=ab") == "https://h/f.whl");
        CHECK(url_fragment("https://h/f.whl#sha256=ab") == "sha256=ab");
        CHECK(url_fragment("https://h/f.whl") == "");
        CHECK(path_basename("https://h/whl/cu128/torch-2.7.0%2Bcu128-cp39-cp39-win_amd64.whl?x=1#h") ==
              "torch-2.7.0+cu128-cp39-cp39-win_amd64.whl");
        CHECK(path_basename("https://h/simple/torch/") == "");
        CHECK(path_basename("https://h") == "");
    }

    TEST_CASE("credentials are stripped or masked, nothing else changes") {
        CHECK(strip_credentials("https://user:s3cret@idx.example/simple/") == "https://idx.example/simple/");
        CHECK(redacted("https://user:s3cret@idx.example/simple/") == "https://***@idx.example/simple/");
        CHECK(redacted("https://token@idx.example:8443/x?a=b@c") == "https://***@idx.example:8443/x?a=b@c");
        CHECK(redacted("https://idx.example/x@y") == "https://idx.example/x@y");  // '@' in the path is no userinfo
        CHECK(strip_credentials("https://idx.example/simple/") == "https://idx.example/simple/");
        CHECK(redacted("not a url") == "not a url");
        CHECK(redacted("https://a:b@c@host/p") == "https://***@host/p");
    }

    TEST_CASE("credentials in an index URL: split and percent-decoded; none without userinfo") {
        auto c = credentials_of("https://alice:pa%3Ass%40w0rd@host.example/simple/");
        REQUIRE(c);
        CHECK(c->url == "https://host.example/simple/");
        CHECK(c->username == "alice");
        CHECK(c->password == "pa:ss@w0rd");
        auto token = credentials_of("https://__token__@host/x");
        REQUIRE(token);
        CHECK(token->username == "__token__");
        CHECK(token->password.empty());
        CHECK_FALSE(credentials_of("https://host/simple/"));
        CHECK_FALSE(credentials_of("https://host/path@with-at/"));
    }
}
