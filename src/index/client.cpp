#include "index/client.hpp"

#include <ctime>
#include <utility>

#include "base/log.hpp"
#include "base/url.hpp"

namespace stackup::index {
namespace {

// PEP 691: JSON preferred, HTML accepted.
constexpr const char* kAccept = "Accept: application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1";

// A page not yet asked for.
ProjectPage unread(const PageRequest& request) {
    ProjectPage page;
    page.request = request;
    return page;
}

// Fills `page` from a page's text; false when the text is not a page.
bool read_into(ProjectPage& page, const std::string& text, std::string_view content_type, const std::string& base_url) {
    auto parsed = parse_page(text, content_type, base_url, text.capacity());
    page.files = std::move(parsed.files);
    page.file_count = page.files.size();
    if (parsed.error) {
        page.outcome = base::HttpOutcome::fatal;
        page.error = base::redact(base_url) + ": " + *parsed.error;
        return false;
    }
    page.outcome = base::HttpOutcome::ok;
    return true;
}

// The URL a page's hrefs resolve against: where it came from after redirects, else the URL asked.
const std::string& base_of(const std::string& final_url, const std::string& url) {
    return final_url.empty() ? url : final_url;
}

}  // namespace

std::string project_url(const std::string& root, const std::string& project) {
    std::string url = root;
    if (url.empty() || url.back() != '/') {
        url += '/';
    }
    return url + project + "/";
}

std::vector<ProjectPage> fetch_pages(const std::vector<PageRequest>& requests, const base::HttpOptions& options,
                                     const PageCache& cache, const PageDone& on_page) {
    auto done = [&](ProjectPage& page) {
        if (on_page && page.outcome == base::HttpOutcome::ok) {
            on_page(page);
        }
    };
    std::vector<ProjectPage> pages;
    std::vector<std::string> urls;
    std::vector<std::optional<StoredPage>> stored;
    std::vector<base::HttpRequest> http;
    std::vector<std::size_t> asked;  // http[k] is for pages[asked[k]]
    const std::time_t now = std::time(nullptr);
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const std::string& url = urls.emplace_back(project_url(requests[i].root, requests[i].project));
        pages.push_back(unread(requests[i]));
        stored.push_back(cache.find(url));
        if (stored[i] && cache.fresh(*stored[i], now)) {
            if (auto text = cache.body(*stored[i])) {
                pages[i].status = 200;
                pages[i].from_cache =
                    read_into(pages[i], *text, stored[i]->content_type, base_of(stored[i]->final_url, url));
                if (pages[i].from_cache) {
                    done(pages[i]);
                    continue;
                }
            }
            // A stored page that no longer reads: dropped, and asked for afresh (a 304 would
            // only hand the same bytes back).
            pages[i] = unread(requests[i]);
            cache.forget(*stored[i]);
            stored[i].reset();
        }
        std::vector<std::string> headers{kAccept};
        if (stored[i]) {
            for (auto& h : PageCache::validators(*stored[i])) {
                headers.push_back(std::move(h));
            }
        }
        http.push_back({url, std::move(headers)});
        asked.push_back(i);
    }
    std::vector<std::size_t> again;  // a 304 for a stored copy that no longer reads
    auto take = [&](std::size_t i, base::HttpResponse& response) {
        const std::string& url = urls[i];
        ProjectPage& page = pages[i];
        page.outcome = response.outcome;
        page.status = response.status;
        page.error = response.error;
        if (response.ok() && response.status == 304) {
            auto text = stored[i] ? cache.body(*stored[i]) : std::nullopt;
            if (text && (page.from_cache =
                             read_into(page, *text, stored[i]->content_type, base_of(stored[i]->final_url, url)))) {
                cache.revalidated(url, *stored[i], *text, response, std::time(nullptr));
                done(page);
            } else {
                if (stored[i]) {
                    cache.forget(*stored[i]);
                }
                again.push_back(i);
            }
        } else if (response.ok()) {
            if (read_into(page, response.body, response.content_type, base_of(response.final_url, url))) {
                cache.store(url, response, std::time(nullptr));
                // Read and kept: the text goes before the page's files are picked from, not
                // when every page has come. (Not `body = std::string()`: libstdc++ moves an
                // empty string in by copying its nothing into the buffer it keeps.)
                std::string().swap(response.body);
                done(page);
            }
        }
        std::string().swap(response.body);
        stored[i].reset();
    };
    base::fetch_all(http, options, [&](std::size_t k, base::HttpResponse& r) { take(asked[k], r); });
    if (!again.empty()) {
        std::vector<base::HttpRequest> whole;
        for (std::size_t i : again) {
            base::log::debug("page cache: the copy of " + base::redact(urls[i]) + " no longer reads; asking for all of it");
            pages[i] = unread(requests[i]);
            whole.push_back({urls[i], {kAccept}});
        }
        const auto retry = std::exchange(again, {});
        base::fetch_all(whole, options, [&](std::size_t k, base::HttpResponse& r) { take(retry[k], r); });
        for (std::size_t i : again) {  // a 304 to an unconditional request: the index is wrong
            pages[i].outcome = base::HttpOutcome::fatal;
            pages[i].error = base::redact(urls[i]) + ": HTTP 304 to a request that had no validators";
        }
    }
    return pages;
}

}  // namespace stackup::index
