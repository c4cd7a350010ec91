#pragma once
// Fetches simple-API project pages, all at once, and parses them.

#include <string>
#include <vector>

#include "base/http.hpp"
#include "index/page.hpp"

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
};

// <root>/<project>/, with a trailing slash added to the root where missing.
std::string project_url(const std::string& root, const std::string& project);

// One request per page, all in flight together; the answer keeps the request order.
std::vector<ProjectPage> fetch_pages(const std::vector<PageRequest>& requests, const base::HttpOptions& options);

}  // namespace stackup::index
