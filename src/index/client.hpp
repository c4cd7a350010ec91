#pragma once
// Fetches simple-API project pages, all at once, and parses them.

#include <functional>
#include <string>
#include <vector>

#include "base/http.hpp"
#include "index/page.hpp"
#include "index/page_cache.hpp"

namespace stackup::index {

struct PageRequest {
    std::string index;     // the manifest's name for it
    std::string root;      // the index root URL (may hold credentials)
    std::string project;   // PEP 503-normalized
};

struct ProjectPage {
    PageRequest request;
    base::HttpOutcome outcome = base::HttpOutcome::fatal;
    long status = 0;
    std::vector<IndexFile> files;
    std::string error;     // credentials masked; "" when the page was read
    bool from_cache = false;  // read from the page cache (fresh, or revalidated by a 304)
    std::size_t file_count = 0;  // files the page listed: `files` may be let go once picked
};

// Called with each page as soon as it is read, before the next one is: it may keep what it
// needs of `files` and let them go.
using PageDone = std::function<void(ProjectPage&)>;

// <root>/<project>/, with a trailing slash added to the root where missing.
std::string project_url(const std::string& root, const std::string& project);

// One request per page, all in flight together, each page parsed as soon as it has come
// (its text then let go) while the others are still on their way; pages the cache holds
// fresh are not asked for, stale ones are asked for conditionally. The answer keeps the
// request order.
std::vector<ProjectPage> fetch_pages(const std::vector<PageRequest>& requests, const base::HttpOptions& options,
                                     const PageCache& cache = PageCache({}), const PageDone& on_page = {});

}  // namespace stackup::index
