// The JSON (PEP 691) page parser: hand-written pages for each shape it must handle, then
// malformed ones.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "index/page.hpp"

using stackup::index::parse_json_page;
using stackup::index::parse_root_page;
using stackup::index::ParseResult;
using stackup::index::RootListing;

namespace {

// A PEP 691 project page with the given "files" entries.
ParseResult json_page(const std::string& files, const std::string& meta = R"({"api-version": "1.1"})") {
    return parse_json_page(R"({"meta": )" + meta + R"(, "name": "p", "files": [)" + files + "]}", "https://idx.example/simple/p/");
}

}  // namespace

TEST_SUITE("index") {
    TEST_CASE("hand-written JSON: URLs, names, hashes") {
        auto r = json_page(R"({"filename": "p-1.0.tar.gz", "url": "../../files/p-1.0.tar.gz", "hashes": {}},
            {"filename": "p-1.1-py3-none-any.whl", "url": "https://cdn.example/dl?id=3", "hashes": {"SHA256": "aa", "md5": "bb"}},
            {"filename": "", "url": "/whl/p-1.2%2Bcu130-py3-none-any.whl#sha256=cc"},
            {"filename": "p-1.3.tar.gz", "url": "p-1.3.tar.gz#sha256=frag", "hashes": {"sha256": "listed"}},
            {"filename": "index.html", "url": "https://idx.example/elsewhere/"})");
        REQUIRE_FALSE(r.error);
        REQUIRE(r.files.size() == 4);  // the last entry names no distribution file
        CHECK(r.files[0].url == "https://idx.example/files/p-1.0.tar.gz");
        CHECK(r.files[0].hashes.empty());
        CHECK(r.files[1].filename == "p-1.1-py3-none-any.whl");  // the JSON filename wins over "dl"
        CHECK(r.files[1].hashes == std::map<std::string, std::string>{{"md5", "bb"}, {"sha256", "aa"}});
        CHECK(r.files[2].filename == "p-1.2+cu130-py3-none-any.whl");  // empty filename: the URL's, decoded
        CHECK(r.files[2].url == "https://idx.example/whl/p-1.2%2Bcu130-py3-none-any.whl");
        CHECK(r.files[2].hashes.at("sha256") == "cc");
        CHECK(r.files[3].hashes.at("sha256") == "listed");  // "hashes" beats the URL fragment
    }

    TEST_CASE("hand-written JSON: yanked, requires-python, core-metadata variants") {
        auto r = json_page(R"({"filename": "a-1.tar.gz", "url": "a-1.tar.gz", "yanked": false, "requires-python": null},
            {"filename": "b-1.tar.gz", "url": "b-1.tar.gz", "yanked": "bad build", "requires-python": ">=3.9,<3.13"},
            {"filename": "c-1-py3-none-any.whl", "url": "c.whl", "core-metadata": {"sha256": "m1"}, "dist-info-metadata": true},
            {"filename": "d-1-py3-none-any.whl", "url": "d.whl", "dist-info-metadata": {"sha256": "m2"}},
            {"filename": "e-1-py3-none-any.whl", "url": "e.whl", "core-metadata": false},
            {"filename": "f-1-py3-none-any.whl", "url": "f.whl", "core-metadata": {}},
            {"filename": "g-1-py3-none-any.whl", "url": "g.whl", "data-dist-info-metadata": true, "yanked": null})");
        REQUIRE_FALSE(r.error);
        REQUIRE(r.files.size() == 7);
        CHECK_FALSE(r.files[0].yanked);
        CHECK_FALSE(r.files[0].requires_python);
        CHECK(r.files[1].yanked);
        CHECK(r.files[1].yanked_reason == "bad build");
        CHECK(r.files[1].requires_python == ">=3.9,<3.13");
        CHECK(r.files[2].metadata == "sha256=m1");  // "core-metadata" (PEP 714) wins
        CHECK(r.files[3].metadata == "sha256=m2");
        CHECK_FALSE(r.files[4].metadata);
        CHECK(r.files[5].metadata == "true");       // available, no hash given
        CHECK_FALSE(r.files[6].metadata);           // the HTML attribute name means nothing in JSON
        CHECK_FALSE(r.files[6].yanked);
    }

    TEST_CASE("escaped strings read as their text; a page with room to spare is read in place") {
        // Every string field escaped, spaces around the tokens: the same file as plain text.
        const std::string escaped = R"({"meta": {"api-version": "1.1"}, "name": "p", "files": [ {
            "filename" : "p-1.0-py3-none-any.wh\u006c" ,
            "url" : "https:\/\/cdn.example\/p-1.0-py3-none-any.whl" ,
            "hashes" : {"sha256" : "\u0061b"} ,
            "requires-python" : "\u003e=3.9" ,
            "yanked" : "bad \"build\""
        } ]})";
        const std::string plain = R"({"meta": {"api-version": "1.1"}, "name": "p", "files": [{
            "filename": "p-1.0-py3-none-any.whl", "url": "https://cdn.example/p-1.0-py3-none-any.whl",
            "hashes": {"sha256": "ab"}, "requires-python": ">=3.9", "yanked": "bad \"build\""}]})";
        auto a = parse_json_page(escaped, "https://idx.example/simple/p/");
        auto b = parse_json_page(plain, "https://idx.example/simple/p/");
        REQUIRE_FALSE(a.error);
        REQUIRE(a.files.size() == 1);
        CHECK(a.files == b.files);
        CHECK(a.files[0].filename == "p-1.0-py3-none-any.whl");
        CHECK(a.files[0].url == "https://cdn.example/p-1.0-py3-none-any.whl");
        CHECK(a.files[0].sha256() == "ab");
        CHECK(a.files[0].requires_python == std::optional<std::string>(">=3.9"));
        CHECK(a.files[0].yanked_reason == "bad \"build\"");

        // In place: the text in a buffer with 64 bytes to spare, as an HTTP body has.
        std::string body = plain;
        body.reserve(body.size() + 64);
        auto c = parse_json_page(body, "https://idx.example/simple/p/", body.capacity());
        REQUIRE_FALSE(c.error);
        CHECK(c.files == b.files);
        // Too little room: a copy is parsed, with the same answer.
        auto d = parse_json_page(body, "https://idx.example/simple/p/", body.size() + 10);
        CHECK(d.files == b.files);
    }

    TEST_CASE("malformed JSON gives an error, never an exception") {
        const std::string url = "https://idx.example/simple/p/";
        const std::vector<std::string> pages = {
            "", "not json", "[]", "{}", "null", R"({"files": {}})", R"({"files": [1]})",
            R"({"files": [{"filename": 3, "url": "a.tar.gz"}]})", R"({"files": [{"filename": "a-1.tar.gz"}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz", "hashes": []}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz", "hashes": {"sha256": 5}}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz", "yanked": 1}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz", "requires-python": [">=3"]}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz", "core-metadata": "yes"}]})",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "mailto:x@y"}]})",
            R"({"meta": {"api-version": "2.0"}, "files": []})",
            "{\"files\": [{\"filename\": \"a-\xff.tar.gz\", \"url\": \"a.tar.gz\"}]}",
            R"({"files": [{"filename": "a-1.tar.gz", "url": "a.tar.gz")", std::string(100000, '[') + std::string(100000, ']'),
        };
        for (const auto& text : pages) {
            INFO("page: ", text.substr(0, 80));
            ParseResult r;
            CHECK_NOTHROW(r = parse_json_page(text, url));
            CHECK(r.error);
            CHECK(r.files.empty());
            RootListing root;
            CHECK_NOTHROW(root = parse_root_page(text, "application/vnd.pypi.simple.v1+json"));
            CHECK(root.error);
        }
        CHECK(parse_json_page(R"({"files": []})", "relative/").error);
        CHECK_FALSE(parse_json_page(R"({"files": [], "meta": {"api-version": "1.4"}})", url).error);
    }
}
