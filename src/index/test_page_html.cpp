// The HTML (PEP 503) page parser: hand-written pages for each shape it must handle, then garbage.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "index/page.hpp"

using stackup::index::parse_html_page;
using stackup::index::parse_root_page;
using stackup::index::ParseResult;

namespace {

// One hand-written anchor inside a minimal PEP 503 page.
ParseResult one_anchor(const std::string& anchor, const std::string& page_url = "https://idx.example/simple/pkg/") {
    return parse_html_page("<!DOCTYPE html><html><body>" + anchor + "<br/></body></html>", page_url);
}

}  // namespace

TEST_SUITE("index") {
    TEST_CASE("hand-written HTML: relative, root-relative, protocol-relative and absolute hrefs") {
        auto r = parse_html_page(R"(<a href="pkg-1.0.tar.gz">pkg-1.0.tar.gz</a>
            <a href="./sub/pkg-1.1.tar.gz">pkg-1.1.tar.gz</a>
            <a href="../../packages/ab/pkg-1.2.tar.gz">pkg-1.2.tar.gz</a>
            <a href="/files/pkg-1.3.tar.gz">pkg-1.3.tar.gz</a>
            <a href="//cdn.example/pkg-1.4.tar.gz">pkg-1.4.tar.gz</a>
            <a href="http://other.example/x/pkg-1.5.tar.gz">pkg-1.5.tar.gz</a>)",
                                 "https://idx.example/simple/pkg/");
        REQUIRE_FALSE(r.error);
        REQUIRE(r.files.size() == 6);
        CHECK(r.files[0].url == "https://idx.example/simple/pkg/pkg-1.0.tar.gz");
        CHECK(r.files[1].url == "https://idx.example/simple/pkg/sub/pkg-1.1.tar.gz");
        CHECK(r.files[2].url == "https://idx.example/packages/ab/pkg-1.2.tar.gz");
        CHECK(r.files[3].url == "https://idx.example/files/pkg-1.3.tar.gz");
        CHECK(r.files[4].url == "https://cdn.example/pkg-1.4.tar.gz");
        CHECK(r.files[5].url == "http://other.example/x/pkg-1.5.tar.gz");
    }

    TEST_CASE("hand-written HTML: <base href> moves relative hrefs; credentials in the page URL are kept") {
        auto based = one_anchor(R"(<base href="https://files.example/store/"><a href="p-1.0.tar.gz">p-1.0.tar.gz</a>)");
        REQUIRE(based.files.size() == 1);
        CHECK(based.files[0].url == "https://files.example/store/p-1.0.tar.gz");
        auto creds = one_anchor(R"(<a href="p-1.0.tar.gz">p-1.0.tar.gz</a>)", "https://u:tok@idx.example/simple/p/");
        REQUIRE(creds.files.size() == 1);
        CHECK(creds.files[0].url == "https://u:tok@idx.example/simple/p/p-1.0.tar.gz");  // needed to download
    }

    TEST_CASE("hand-written HTML: file names from %2B URLs, and which of text and URL wins") {
        auto encoded = one_anchor(R"(<a href="/whl/torch-2.5.0%2Bcu124-cp311-cp311-linux_x86_64.whl">Download</a>)");
        REQUIRE(encoded.files.size() == 1);
        CHECK(encoded.files[0].filename == "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl");  // text is no file name
        CHECK(encoded.files[0].url == "https://idx.example/whl/torch-2.5.0%2Bcu124-cp311-cp311-linux_x86_64.whl");
        auto redirector = one_anchor(R"(<a href="/download?id=7">  pkg-1.0-py3-none-any.whl
            </a>)");
        REQUIRE(redirector.files.size() == 1);
        CHECK(redirector.files[0].filename == "pkg-1.0-py3-none-any.whl");  // trimmed text wins
        CHECK(redirector.files[0].url == "https://idx.example/download?id=7");
        auto nested = one_anchor(R"(<a href="x/y.whl"><span>pkg-2.0-</span>py3-none-any.whl</a>)");
        REQUIRE(nested.files.size() == 1);
        CHECK(nested.files[0].filename == "pkg-2.0-py3-none-any.whl");
    }

    TEST_CASE("hand-written HTML: anchors that name no distribution file are skipped") {
        auto r = parse_html_page(R"(<a href="../">Parent</a><a name="top">top</a>
            <a href="mailto:ops@example.org">mail pkg-1.0.tar.gz</a><a href="javascript:void 0">x.whl</a>
            <a href="https://idx.example/project/pkg">project page</a><a href="">empty</a>
            <a href="pkg-1.0.tar.gz">pkg-1.0.tar.gz</a>)",
                                 "https://idx.example/simple/pkg/");
        REQUIRE_FALSE(r.error);
        REQUIRE(r.files.size() == 1);
        CHECK(r.files[0].filename == "pkg-1.0.tar.gz");
    }

    TEST_CASE("hand-written HTML: #sha256= and other fragments") {
        auto r = parse_html_page(R"(<a href="a-1.0.tar.gz#sha256=ABCdef01">a-1.0.tar.gz</a>
            <a href="b-1.0.tar.gz#SHA512=ff">b-1.0.tar.gz</a>
            <a href="c-1.0.tar.gz#egg=c">c-1.0.tar.gz</a>
            <a href="d-1.0.tar.gz#sha256=">d-1.0.tar.gz</a>
            <a href="e-1.0.tar.gz#md5=aa">e-1.0.tar.gz</a>)",
                                 "https://idx.example/simple/x/");
        REQUIRE(r.files.size() == 5);
        CHECK(r.files[0].hashes == std::map<std::string, std::string>{{"sha256", "ABCdef01"}});
        CHECK(r.files[0].url == "https://idx.example/simple/x/a-1.0.tar.gz");  // fragment gone
        CHECK(r.files[1].hashes == std::map<std::string, std::string>{{"sha512", "ff"}});
        CHECK(r.files[2].hashes.empty());
        CHECK(r.files[3].hashes.empty());
        CHECK(r.files[4].hashes == std::map<std::string, std::string>{{"md5", "aa"}});
    }

    TEST_CASE("hand-written HTML: data-requires-python is HTML-unescaped") {
        auto r = parse_html_page(R"(<a href="a-1.tar.gz" data-requires-python="&gt;=3.8,&lt;4">a-1.tar.gz</a>
            <a href="b-1.tar.gz" data-requires-python="&gt;=3.10">b-1.tar.gz</a>
            <a href="c-1.tar.gz" data-requires-python="">c-1.tar.gz</a>
            <a href="d-1.tar.gz" data-requires-python=">=3.9, !=3.9.1">d-1.tar.gz</a>)",
                                 "https://idx.example/simple/x/");
        REQUIRE(r.files.size() == 4);
        CHECK(r.files[0].requires_python == ">=3.8,<4");
        CHECK(r.files[1].requires_python == ">=3.10");
        CHECK_FALSE(r.files[2].requires_python);
        CHECK(r.files[3].requires_python == ">=3.9, !=3.9.1");
    }

    TEST_CASE("hand-written HTML: data-yanked with and without a reason") {
        auto r = parse_html_page(R"(<a href="a-1.tar.gz" data-yanked="">a-1.tar.gz</a>
            <a href="b-1.tar.gz" data-yanked>b-1.tar.gz</a>
            <a href="c-1.tar.gz" data-yanked="broken &amp; unsafe">c-1.tar.gz</a>
            <a href="d-1.tar.gz">d-1.tar.gz</a>)",
                                 "https://idx.example/simple/x/");
        REQUIRE(r.files.size() == 4);
        CHECK(r.files[0].yanked);
        CHECK(r.files[0].yanked_reason == "");
        CHECK(r.files[1].yanked);
        CHECK(r.files[2].yanked);
        CHECK(r.files[2].yanked_reason == "broken & unsafe");
        CHECK_FALSE(r.files[3].yanked);
    }

    TEST_CASE("hand-written HTML: PEP 658 / 714 metadata attributes") {
        auto r = parse_html_page(R"(<a href="a-1-py3-none-any.whl" data-dist-info-metadata="true">a-1-py3-none-any.whl</a>
            <a href="b-1-py3-none-any.whl" data-core-metadata="sha256=bb">b-1-py3-none-any.whl</a>
            <a href="c-1-py3-none-any.whl" data-dist-info-metadata="sha256=old" data-core-metadata="sha256=new">c-1-py3-none-any.whl</a>
            <a href="d-1-py3-none-any.whl" data-core-metadata>d-1-py3-none-any.whl</a>
            <a href="e-1-py3-none-any.whl">e-1-py3-none-any.whl</a>)",
                                 "https://idx.example/simple/x/");
        REQUIRE(r.files.size() == 5);
        CHECK(r.files[0].metadata == "true");
        CHECK(r.files[1].metadata == "sha256=bb");
        CHECK(r.files[2].metadata == "sha256=new");  // the PEP 714 name wins
        CHECK(r.files[3].metadata == "true");
        CHECK_FALSE(r.files[4].metadata);
    }

    TEST_CASE("hand-written HTML: repository version, bad page URLs") {
        const std::string v2 = R"(<html><head><meta name="pypi:repository-version" content="2.0"></head><body><a href="a-1.tar.gz">a-1.tar.gz</a></body></html>)";
        auto r = parse_html_page(v2, "https://idx.example/simple/a/");
        REQUIRE(r.error);
        CHECK(r.error->find("2.0") != std::string::npos);
        CHECK(r.files.empty());
        CHECK(parse_root_page(v2, "text/html").error);
        auto v11 = parse_html_page(R"(<meta name="pypi:repository-version" content="1.1"><a href="a-1.tar.gz">a-1.tar.gz</a>)",
                                   "https://idx.example/simple/a/");
        CHECK_FALSE(v11.error);
        CHECK(v11.files.size() == 1);
        auto relative = parse_html_page("<a href='a-1.tar.gz'>a-1.tar.gz</a>", "/simple/a/");
        CHECK(relative.error);
        auto secret = parse_html_page("", "ftp://user:hunter2@idx.example/simple/a/");
        REQUIRE(secret.error);
        CHECK(secret.error->find("hunter2") == std::string::npos);
        CHECK(secret.error->find("***@idx.example") != std::string::npos);
    }

    TEST_CASE("garbage HTML never crashes and yields no files") {
        const std::string page = "https://idx.example/simple/x/";
        std::string bytes;
        for (int i = 0; i < 4096; ++i) {
            bytes += static_cast<char>((i * 7919) % 256);
        }
        const std::vector<std::string> inputs = {
            "", std::string("\0\0<a\0 href", 9), bytes, "<a href=\"unterminated", "<<<>>></a></a><a>",
            std::string(200000, '<'), "\xff\xfe<a href=\"\xc3\x28.whl\">\xc3\x28.whl</a>",
        };
        for (const auto& text : inputs) {
            auto r = parse_html_page(text, page);
            CHECK_FALSE(r.error);
        }
        std::string deep;
        for (int i = 0; i < 20000; ++i) {
            deep += "<div><span>";
        }
        deep += "<a href='deep-1.0.tar.gz'>deep-1.0.tar.gz</a>";
        auto r = parse_html_page(deep, page);
        CHECK_FALSE(r.error);
        CHECK(r.files.size() == 1);  // gumbo keeps the anchor; our walk is iterative
        auto garbage_root = parse_root_page(bytes, "text/html");
        CHECK_FALSE(garbage_root.error);
    }
}
