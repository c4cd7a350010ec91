#include "index/client.hpp"

#include "base/url.hpp"

namespace stackup::index {
namespace {

// PEP 691: JSON preferred, HTML accepted.
constexpr const char* kAccept = "Accept: application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1";

}  // namespace

std::string project_url(const std::string& root, const std::string& project) {
    std::string url = root;
    if (url.empty() || url.back() != '/') {
        url += '/';
    }
    return url + project + "/";
}

std::vector<ProjectPage> fetch_pages(const std::vector<PageRequest>& requests, const base::HttpOptions& options) {
    std::vector<base::HttpRequest> http;
    for (const auto& r : requests) {
        http.push_back({project_url(r.root, r.project), {kAccept}});
    }
    auto responses = base::fetch_all(http, options);
    std::vector<ProjectPage> pages;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& response = responses[i];
        ProjectPage page{requests[i], response.outcome, response.status, {}, response.error};
        if (response.ok()) {
            std::string base_url = response.final_url.empty() ? http[i].url : response.final_url;
            auto parsed = parse_page(response.body, response.content_type, base_url);
            page.files = std::move(parsed.files);
            if (parsed.error) {
                page.outcome = base::HttpOutcome::fatal;
                page.error = base::redact(base_url) + ": " + *parsed.error;
            }
        }
        pages.push_back(std::move(page));
    }
    return pages;
}

}  // namespace stackup::index
