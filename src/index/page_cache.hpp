#pragma once
// An HTTP cache of index pages on disk, as a browser keeps one: each page with its
// validators (ETag, Last-Modified) and its Cache-Control. A page still fresh by its max-age
// is used without a request; a stale one is revalidated with a conditional request (a 304
// answer reuses the stored body); a page without a validator or a lifetime is not kept, and
// neither is one sent with `no-store`. No heuristic freshness: a page the index did not give
// a lifetime is asked for again every time.
//
// Never a reason to fail: a cache that cannot be read or written is left alone (debug log).

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/http.hpp"
#include "base/process.hpp"

namespace stackup::index {

enum class CacheMode {
    use,      // fresh pages without a request, stale ones revalidated
    refresh,  // every page revalidated (--refresh), and what comes back stored
    off,      // neither read nor written (--no-cache)
};

struct CacheOptions {
    CacheMode mode = CacheMode::off;
    std::filesystem::path dir;  // pages go under dir/pages-v1/
};

// $STACKUP_CACHE_DIR, else $XDG_CACHE_HOME/stackup, else $HOME/.cache/stackup; "" when none is set.
std::filesystem::path default_cache_dir(const base::Environment& env);

// What is stored beside a page's body.
struct StoredPage {
    std::filesystem::path file;
    std::string etag;
    std::string last_modified;
    std::string content_type;
    std::string final_url;       // where the page came from when not the URL asked; never credentials
    std::time_t received = 0;    // when it was fetched or last revalidated, less the Age it had then
    long max_age = -1;           // -1: none given
    bool no_cache = false;       // always revalidate
    std::uintmax_t size = 0;     // of the body: a shorter or longer file is not this page
    std::string sha256;          // of the body: checked on each read (1.4 GB/s; a plan reads ~20 MB)
};

class PageCache {
public:
    explicit PageCache(CacheOptions options);

    // The stored page for `url` (its record only; the body stays on disk), or nullopt.
    std::optional<StoredPage> find(const std::string& url) const;
    // Fresh: usable without asking (mode `use`, within max-age, not no-cache).
    bool fresh(const StoredPage& page, std::time_t now) const;
    // The request headers that make a request for `page` conditional.
    static std::vector<std::string> validators(const StoredPage& page);
    // The stored body, or nullopt when it cannot be read or is not the bytes that were stored.
    std::optional<std::string> body(const StoredPage& page) const;
    // Removes a stored page that turned out not to read.
    void forget(const StoredPage& page) const;

    // Keeps a 200 response's page (when it may be kept and has a validator or lifetime).
    void store(const std::string& url, const base::HttpResponse& response, std::time_t now) const;
    // A 304 for `page`: its `body` (as read) kept with the new rules and time.
    void revalidated(const std::string& url, StoredPage page, std::string_view body,
                     const base::HttpResponse& response, std::time_t now) const;

private:
    std::filesystem::path file_of(const std::string& url) const;
    void write(const std::string& url, const StoredPage& page, std::string_view body) const;

    CacheOptions options_;
};

}  // namespace stackup::index
