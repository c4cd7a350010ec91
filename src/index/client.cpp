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

namespace {

// One call of fetch_pages: each request's page, its stored copy, and what goes to the network.
class PageFetch {
public:
    PageFetch(const std::vector<PageRequest>& requests, const PageCache& cache, const PageDone& on_page)
        : requests_(requests), cache_(cache), on_page_(on_page) {}

    std::vector<ProjectPage> run(const base::HttpOptions& options) {
        const std::time_t now = std::time(nullptr);
        for (std::size_t i = 0; i < requests_.size(); ++i) {
            prepare(i, now);
        }
        base::fetch_all(http_, options, [&](std::size_t k, base::HttpResponse& r) { take(asked_[k], r); });
        if (!again_.empty()) {
            ask_again_whole(options);
        }
        return std::move(pages_);
    }

private:
    void done(ProjectPage& page) {
        if (on_page_ && page.outcome == base::HttpOutcome::ok) {
            on_page_(page);
        }
    }

    // Page i from a fresh stored copy when it still reads, else asked for (with the copy's
    // validators, when there is one).
    void prepare(std::size_t i, std::time_t now) {
        const std::string& url = urls_.emplace_back(project_url(requests_[i].root, requests_[i].project));
        pages_.push_back(unread(requests_[i]));
        stored_.push_back(cache_.find(url));
        if (stored_[i] && cache_.fresh(*stored_[i], now)) {
            if (auto text = cache_.body(*stored_[i])) {
                pages_[i].status = 200;
                pages_[i].from_cache =
                    read_into(pages_[i], *text, stored_[i]->content_type, base_of(stored_[i]->final_url, url));
                if (pages_[i].from_cache) {
                    done(pages_[i]);
                    return;
                }
            }
            // A stored page that no longer reads: dropped, and asked for afresh (a 304 would
            // only hand the same bytes back).
            pages_[i] = unread(requests_[i]);
            cache_.forget(*stored_[i]);
            stored_[i].reset();
        }
        std::vector<std::string> headers{kAccept};
        if (stored_[i]) {
            for (auto& h : PageCache::validators(*stored_[i])) {
                headers.push_back(std::move(h));
            }
        }
        http_.push_back({url, std::move(headers)});
        asked_.push_back(i);
    }

    void take(std::size_t i, base::HttpResponse& response) {
        const std::string& url = urls_[i];
        ProjectPage& page = pages_[i];
        page.outcome = response.outcome;
        page.status = response.status;
        page.error = response.error;
        if (response.ok() && response.status == 304) {
            auto text = stored_[i] ? cache_.body(*stored_[i]) : std::nullopt;
            if (text && (page.from_cache =
                             read_into(page, *text, stored_[i]->content_type, base_of(stored_[i]->final_url, url)))) {
                cache_.revalidated(url, *stored_[i], *text, response, std::time(nullptr));
                done(page);
            } else {
                if (stored_[i]) {
                    cache_.forget(*stored_[i]);
                }
                again_.push_back(i);
            }
        } else if (response.ok()) {
            if (read_into(page, response.body, response.content_type, base_of(response.final_url, url))) {
                cache_.store(url, response, std::time(nullptr));
                // Read and kept: the text goes before the page's files are picked from, not
                // when every page has come. (Not `body = std::string()`: libstdc++ moves an
                // empty string in by copying its nothing into the buffer it keeps.)
                std::string().swap(response.body);
                done(page);
            }
        }
        std::string().swap(response.body);
        stored_[i].reset();
    }

    // The pages whose 304 named a stored copy that no longer reads, asked for without validators.
    void ask_again_whole(const base::HttpOptions& options) {
        std::vector<base::HttpRequest> whole;
        for (std::size_t i : again_) {
            base::log::debug("page cache: the copy of " + base::redact(urls_[i]) + " no longer reads; asking for all of it");
            pages_[i] = unread(requests_[i]);
            whole.push_back({urls_[i], {kAccept}});
        }
        const auto retry = std::exchange(again_, {});
        base::fetch_all(whole, options, [&](std::size_t k, base::HttpResponse& r) { take(retry[k], r); });
        for (std::size_t i : again_) {  // a 304 to an unconditional request: the index is wrong
            pages_[i].outcome = base::HttpOutcome::fatal;
            pages_[i].error = base::redact(urls_[i]) + ": HTTP 304 to a request that had no validators";
        }
    }

    const std::vector<PageRequest>& requests_;
    const PageCache& cache_;
    const PageDone& on_page_;
    std::vector<ProjectPage> pages_;
    std::vector<std::string> urls_;
    std::vector<std::optional<StoredPage>> stored_;
    std::vector<base::HttpRequest> http_;
    std::vector<std::size_t> asked_;  // http_[k] is for pages_[asked_[k]]
    std::vector<std::size_t> again_;  // a 304 for a stored copy that no longer reads
};

}  // namespace

std::vector<ProjectPage> fetch_pages(const std::vector<PageRequest>& requests, const base::HttpOptions& options,
                                     const PageCache& cache, const PageDone& on_page) {
    return PageFetch(requests, cache, on_page).run(options);
}

}  // namespace stackup::index
