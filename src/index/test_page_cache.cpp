// The index page cache on its own: where it lives, what it keeps and for how long, and that
// a damaged entry is never taken for a page.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/http.hpp"
#include "index/page_cache.hpp"
#include "temp_dir.hpp"

using stackup::base::HttpOutcome;
using stackup::base::HttpResponse;
using stackup::index::CacheMode;
using stackup::index::CacheOptions;
using stackup::index::default_cache_dir;
using stackup::index::PageCache;
using stackup::testing::TempDir;

namespace {

const std::string kUrl = "https://idx.example/simple/torch/";
constexpr std::time_t kNow = 1'800'000'000;

HttpResponse page_response(std::string body, std::string cache_control, std::string etag = "\"v1\"") {
    HttpResponse r;
    r.outcome = HttpOutcome::ok;
    r.status = 200;
    r.final_url = kUrl;
    r.content_type = "application/vnd.pypi.simple.v1+json";
    r.etag = std::move(etag);
    r.cache_control = std::move(cache_control);
    r.body = std::move(body);
    return r;
}

HttpResponse not_modified(std::string cache_control, std::string etag = "\"v1\"") {
    HttpResponse r;
    r.outcome = HttpOutcome::ok;
    r.status = 304;
    r.etag = std::move(etag);
    r.cache_control = std::move(cache_control);
    return r;
}

PageCache cache_in(const TempDir& tmp, CacheMode mode = CacheMode::use) {
    return PageCache(CacheOptions{mode, tmp / "cache"});
}

std::size_t entries(const TempDir& tmp) {
    const auto dir = tmp / "cache" / "pages-v1";
    if (!std::filesystem::exists(dir)) {
        return 0;
    }
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        n += entry.path().extension() == ".page" ? 1 : 0;
    }
    return n;
}

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_SUITE("index") {
    TEST_CASE("the cache directory: STACKUP_CACHE_DIR, else an absolute XDG_CACHE_HOME, else HOME") {
        CHECK(default_cache_dir({{"STACKUP_CACHE_DIR", "/c"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}) == "/c");
        CHECK(default_cache_dir({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}) == "/x/stackup");
        // The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored.
        CHECK(default_cache_dir({{"XDG_CACHE_HOME", "rel"}, {"HOME", "/h"}}) == "/h/.cache/stackup");
        CHECK(default_cache_dir({{"XDG_CACHE_HOME", ""}, {"HOME", "/h"}}) == "/h/.cache/stackup");
        CHECK(default_cache_dir({}).empty());
        // No directory is no cache, whatever the mode.
        PageCache none(CacheOptions{CacheMode::use, {}});
        none.store(kUrl, page_response("{}", "max-age=600"), kNow);
        CHECK_FALSE(none.find(kUrl));
    }

    TEST_CASE("a stored page comes back whole, with its validators, fresh for its max-age only") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        cache.store(kUrl, page_response(R"({"files": []})", "max-age=600"), kNow);
        auto page = cache.find(kUrl);
        REQUIRE(page);
        CHECK(page->etag == "\"v1\"");
        CHECK(page->max_age == 600);
        CHECK(page->content_type == "application/vnd.pypi.simple.v1+json");
        CHECK(cache.body(*page) == std::optional<std::string>(R"({"files": []})"));
        CHECK(cache.fresh(*page, kNow));
        CHECK(cache.fresh(*page, kNow + 599));
        CHECK_FALSE(cache.fresh(*page, kNow + 600));
        CHECK_FALSE(cache.fresh(*page, kNow - 10));  // a clock set back: not trusted
        CHECK(PageCache::validators(*page) == std::vector<std::string>{"If-None-Match: \"v1\""});
        // Another URL is another entry.
        CHECK_FALSE(cache.find("https://idx.example/simple/numpy/"));
        // --refresh: found, never fresh.
        auto refreshing = cache_in(tmp, CacheMode::refresh);
        REQUIRE(refreshing.find(kUrl));
        CHECK_FALSE(refreshing.fresh(*refreshing.find(kUrl), kNow));
        // --no-cache: not even found.
        CHECK_FALSE(cache_in(tmp, CacheMode::off).find(kUrl));
    }

    TEST_CASE("Cache-Control: no-cache, case, quoted and broken max-age, and Age") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        auto freshness = [&](const std::string& cache_control, long age = 0) {
            auto response = page_response("{}", cache_control);
            response.age = age;
            cache.store(kUrl, response, kNow);
            auto page = cache.find(kUrl);
            REQUIRE(page);
            return cache.fresh(*page, kNow);
        };
        CHECK(freshness("public, MAX-AGE=60"));
        CHECK(freshness("max-age=\"60\""));
        CHECK_FALSE(freshness("max-age=60, no-cache"));
        CHECK_FALSE(freshness("max-age=sixty"));
        CHECK_FALSE(freshness("max-age=0"));
        CHECK_FALSE(freshness(""));
        CHECK(freshness("max-age=60", 59));
        CHECK_FALSE(freshness("max-age=60", 60));  // it was already 60 s old when it came
    }

    TEST_CASE("what is not kept: no-store, nothing to revalidate with, not a 200, a redirect with credentials") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        cache.store(kUrl, page_response("{}", "max-age=600, no-store"), kNow);
        cache.store(kUrl, page_response("{}", "no-cache", ""), kNow);
        auto failed = page_response("{}", "max-age=600");
        failed.outcome = HttpOutcome::not_found;
        failed.status = 404;
        cache.store(kUrl, failed, kNow);
        auto redirected = page_response("{}", "max-age=600");
        redirected.final_url = "https://user:s3cret@mirror.example/simple/torch/";
        cache.store(kUrl, redirected, kNow);
        CHECK(entries(tmp) == 0);
        cache_in(tmp, CacheMode::off).store(kUrl, page_response("{}", "max-age=600"), kNow);
        CHECK(entries(tmp) == 0);
        // A Last-Modified alone, or a lifetime alone, is enough.
        auto dated = page_response("{}", "no-cache", "");
        dated.last_modified = "Wed, 02 Dec 2026 10:00:00 GMT";
        cache.store(kUrl, dated, kNow);
        REQUIRE(cache.find(kUrl));
        CHECK(PageCache::validators(*cache.find(kUrl)) ==
              std::vector<std::string>{"If-Modified-Since: Wed, 02 Dec 2026 10:00:00 GMT"});
        cache.store("https://idx.example/simple/numpy/", page_response("{}", "max-age=600", ""), kNow);
        CHECK(entries(tmp) == 2);
        CHECK((std::filesystem::status(tmp / "cache").permissions() & std::filesystem::perms::all) ==
              std::filesystem::perms::owner_all);
    }

    TEST_CASE("credentials in the URL asked: their own entry, and never written down") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        const std::string secret_url = "https://alice:tok3n-xyz@idx.example/simple/torch/";
        cache.store(secret_url, page_response("{}", "max-age=600"), kNow);
        REQUIRE(cache.find(secret_url));
        CHECK_FALSE(cache.find("https://bob:other@idx.example/simple/torch/"));
        CHECK_FALSE(cache.find(kUrl));
        for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp / "cache")) {
            CHECK(entry.path().string().find("tok3n") == std::string::npos);
            if (entry.is_regular_file()) {
                CHECK(read_all(entry.path()).find("tok3n") == std::string::npos);
            }
        }
    }

    TEST_CASE("a damaged entry is not a page: cut short, grown, or its bytes changed") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        const std::string body = R"({"files": [{"filename": "torch-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"}]})";
        cache.store(kUrl, page_response(body, "max-age=600"), kNow);
        const auto file = cache.find(kUrl)->file;
        const std::string whole = read_all(file);

        std::filesystem::resize_file(file, whole.size() - 5);
        CHECK_FALSE(cache.find(kUrl));
        std::ofstream(file, std::ios::binary) << whole << "trailing";
        CHECK_FALSE(cache.find(kUrl));

        std::string flipped = whole;
        flipped[flipped.size() - 10] = 'X';  // same size, other bytes
        std::ofstream(file, std::ios::binary) << flipped;
        auto page = cache.find(kUrl);
        REQUIRE(page);
        CHECK_FALSE(cache.body(*page));
        cache.forget(*page);
        CHECK_FALSE(std::filesystem::exists(file));

        std::ofstream(file, std::ios::binary) << "not a record\n" << body;
        CHECK_FALSE(cache.find(kUrl));
    }

    TEST_CASE("a 304 keeps the body: rewritten only when the rules give it a new lifetime") {
        TempDir tmp;
        auto cache = cache_in(tmp);
        const std::string body = R"({"files": []})";
        cache.store(kUrl, page_response(body, "no-cache"), kNow);
        auto page = cache.find(kUrl);
        REQUIRE(page);
        const auto written = std::filesystem::last_write_time(page->file);
        struct stat before {};
        REQUIRE(::stat(page->file.c_str(), &before) == 0);

        // Same validator, still no-cache: the entry is left as it is (no rewrite per plan).
        cache.revalidated(kUrl, *page, body, not_modified("no-cache"), kNow + 100);
        struct stat after {};
        REQUIRE(::stat(page->file.c_str(), &after) == 0);
        CHECK(after.st_ino == before.st_ino);
        CHECK(std::filesystem::last_write_time(page->file) == written);

        // A lifetime now: rewritten, fresh from the 304's time, same body.
        cache.revalidated(kUrl, *page, body, not_modified("max-age=60"), kNow + 100);
        auto renewed = cache.find(kUrl);
        REQUIRE(renewed);
        CHECK(renewed->max_age == 60);
        CHECK(cache.fresh(*renewed, kNow + 150));
        CHECK_FALSE(cache.fresh(*renewed, kNow + 160));
        CHECK(cache.body(*renewed) == std::optional<std::string>(body));

        // A new ETag is kept for the next request.
        cache.revalidated(kUrl, *renewed, body, not_modified("no-cache", "\"v2\""), kNow + 200);
        REQUIRE(cache.find(kUrl));
        CHECK(cache.find(kUrl)->etag == "\"v2\"");
        CHECK(cache.body(*cache.find(kUrl)) == std::optional<std::string>(body));
    }
}
