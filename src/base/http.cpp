#include "base/interrupt.hpp"
#include "base/http.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <curl/curl.h>

#include "base/log.hpp"
#include "base/url.hpp"

namespace stackup::base {
namespace {

using Clock = std::chrono::steady_clock;

struct EasyDeleter {
    void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct MultiDeleter {
    void operator()(CURLM* handle) const { curl_multi_cleanup(handle); }
};
struct SlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using SlistHandle = std::unique_ptr<curl_slist, SlistDeleter>;

enum class Verdict { ok, not_found, transient, fatal };

Verdict classify_status(long status) {
    if ((status >= 200 && status < 300) || status == 304) {
        return Verdict::ok;
    }
    if (status == 404 || status == 410) {
        return Verdict::not_found;
    }
    if (status == 408 || status == 429 || (status >= 500 && status < 600)) {
        return Verdict::transient;
    }
    return Verdict::fatal;
}

bool is_transient(CURLcode code) {
    switch (code) {
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_COULDNT_CONNECT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            return true;
        default:
            return false;
    }
}

bool global_init() {
    // curl_global_init is not thread-safe and must run once per process.
    static std::once_flag once;
    static CURLcode result = CURLE_OK;
    std::call_once(once, [] {
        result = curl_global_init(CURL_GLOBAL_DEFAULT);
        // With CURLOPT_NOSIGNAL curl leaves SIGPIPE to us: a peer that drops the
        // connection must be an error on that transfer, not the death of the process.
        struct sigaction old {};
        if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
            ::signal(SIGPIPE, SIG_IGN);
        }
    });
    return result == CURLE_OK;
}

// Declaration order is teardown order: the easy handle goes before the
// header list and buffers it points into.
struct Transfer {
    const HttpRequest* request = nullptr;
    HttpResponse* response = nullptr;
    SlistHandle headers;
    std::string body;
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    EasyHandle easy;
    int attempts = 0;
    bool done = false;
    bool too_big = false;  // the body passed max_body: append_body stopped the transfer
    std::size_t max_body = 0;
    Clock::time_point not_before{};
};

// Room beyond a body's end, for a parser that reads past it in wide loads: simdjson then
// parses the body in place (index/page_json.cpp) instead of a padded copy of it.
constexpr std::size_t kBodyPadding = 64;

// The body's room is taken once, from Content-Length when the index sends one (a real page
// runs to 5 MB): grown by doubling, each page would cost its copies and leave the heap as
// big as twice the largest page.
std::size_t append_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    if (size * count > t.max_body - t.body.size()) {
        t.too_big = true;  // also a body without Content-Length, or a compressed one that grows
        return 0;
    }
    try {
        if (t.body.empty()) {
            curl_off_t length = -1;
            if (curl_easy_getinfo(t.easy.get(), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
                length > 0 && static_cast<std::size_t>(length) <= t.max_body) {
                t.body.reserve(static_cast<std::size_t>(length) + kBodyPadding);
            }
        }
        t.body.append(data, size * count);
    } catch (...) {
        return 0;  // an exception must not cross libcurl; 0 aborts the transfer
    }
    return size * count;
}

// A response header's value ("" when absent); the last one when sent more than once.
std::string header_of(CURL* easy, const char* name) {
    curl_header* h = nullptr;
    if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK || h == nullptr) {
        return "";
    }
    const std::size_t last = h->amount - 1;
    if (last > 0 && curl_easy_header(easy, name, last, CURLH_HEADER, -1, &h) != CURLHE_OK) {
        return "";
    }
    return h->value != nullptr ? h->value : "";
}

std::string too_big_reason(const Transfer& t) {
    // curl refuses a Content-Length over the cap before it records it as the download's length.
    const std::string length = header_of(t.easy.get(), "Content-Length");
    const std::string size = length.empty() ? "it is" : "its " + length + " bytes are";
    const std::size_t mib = std::size_t(1) << 20;
    const std::string most = t.max_body % mib == 0 ? std::to_string(t.max_body / mib) + " MiB"
                                                   : std::to_string(t.max_body) + " bytes";
    return "answer too large: " + size + " more than the " + most +
           " stackup reads of one response (no simple-API page is near that)";
}

std::string transport_reason(CURLcode code, const Transfer& t) {
    std::string reason = curl_easy_strerror(code);
    if (t.error_buffer[0] != '\0') {
        reason += std::string(": ") + t.error_buffer.data();
    }
    return reason;
}

// Sets every option of one transfer; returns an error text, empty on success.
std::string configure(Transfer& t, const HttpOptions& options) {
    for (const auto& header : t.request->headers) {
        curl_slist* grown = curl_slist_append(t.headers.get(), header.c_str());
        if (grown == nullptr) {
            return "out of memory building request headers";
        }
        (void)t.headers.release();  // the grown list owns the old nodes
        t.headers.reset(grown);
    }
    CURL* h = t.easy.get();
    const bool https = t.request->url.rfind("https://", 0) == 0;
    const CURLcode results[] = {
        curl_easy_setopt(h, CURLOPT_URL, t.request->url.c_str()),
        curl_easy_setopt(h, CURLOPT_PRIVATE, static_cast<void*>(&t)),
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body),
        curl_easy_setopt(h, CURLOPT_WRITEDATA, static_cast<void*>(&t)),
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t.error_buffer.data()),
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, t.headers.get()),
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https"),
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L),
        curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L),
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, options.timeout_seconds * 1000L),
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, options.connect_timeout_seconds * 1000L),
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_bytes_per_second),
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, options.low_speed_seconds),
        // Refused from its Content-Length before a byte of the body is read.
        curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_body_bytes)),
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS)),
        // Waiting for a TLS connection's ALPN lets later requests multiplex on it.
        curl_easy_setopt(h, CURLOPT_PIPEWAIT, https ? 1L : 0L),
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""),
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L),
    };
    for (CURLcode result : results) {
        if (result != CURLE_OK) {
            return curl_easy_strerror(result);
        }
    }
    if (!options.user_agent.empty() &&
        curl_easy_setopt(h, CURLOPT_USERAGENT, options.user_agent.c_str()) != CURLE_OK) {
        return "cannot set the user agent";
    }
    return "";
}

// Drives all transfers through one multi handle, scheduling retries by time.
class Fetcher {
public:
    Fetcher(const std::vector<HttpRequest>& requests, std::vector<HttpResponse>& responses,
            const HttpOptions& options, const HttpDone& on_done)
        : options_(options),
          on_done_(on_done),
          max_tries_(std::max(options.max_tries, 1)),
          max_in_flight_(std::max(options.max_in_flight, 1)),
          first_response_(responses.data()) {
        for (std::size_t i = 0; i < requests.size(); ++i) {
            auto t = std::make_unique<Transfer>();
            t->request = &requests[i];
            t->response = &responses[i];
            t->max_body = options.max_body_bytes;
            waiting_.push_back(t.get());
            transfers_.push_back(std::move(t));
        }
    }

    void run() {
        if (global_init()) {
            multi_ = MultiHandle(curl_multi_init());
        }
        if (!multi_) {
            fail_unfinished("cannot initialise libcurl");
            return;
        }
        curl_multi_setopt(multi_.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
        while (finished_ < transfers_.size()) {
            if (const int signal = interrupts::received()) {  // seen within one poll (at most a second)
                fail_unfinished(std::string("interrupted by ") + interrupts::name(signal));
                return;
            }
            start_due(Clock::now());
            int still_running = 0;
            CURLMcode code = curl_multi_perform(multi_.get(), &still_running);
            if (code == CURLM_OK) {
                collect_finished();
            }
            if (code == CURLM_OK && finished_ < transfers_.size()) {
                code = curl_multi_poll(multi_.get(), nullptr, 0, poll_timeout_ms(), nullptr);
            }
            if (code != CURLM_OK) {
                fail_unfinished(std::string("libcurl: ") + curl_multi_strerror(code));
                return;
            }
        }
    }

private:
    void start_due(Clock::time_point now) {
        std::vector<Transfer*> later;
        for (Transfer* t : waiting_) {
            if (running_ < max_in_flight_ && t->not_before <= now) {
                start(*t);
            } else {
                later.push_back(t);
            }
        }
        waiting_ = std::move(later);
    }

    void start(Transfer& t) {
        if (!t.easy) {
            t.easy = EasyHandle(curl_easy_init());
            std::string problem = t.easy ? configure(t, options_) : "cannot create a curl handle";
            if (!problem.empty()) {
                record(t, HttpOutcome::fatal, problem);
                return;
            }
        }
        t.body.clear();
        t.too_big = false;
        t.error_buffer[0] = '\0';
        ++t.attempts;
        if (curl_multi_add_handle(multi_.get(), t.easy.get()) != CURLM_OK) {
            record(t, HttpOutcome::fatal, "cannot add the transfer to libcurl");
            return;
        }
        ++running_;
    }

    void collect_finished() {
        int left = 0;
        while (CURLMsg* message = curl_multi_info_read(multi_.get(), &left)) {
            if (message->msg != CURLMSG_DONE) {
                continue;
            }
            CURL* easy = message->easy_handle;
            const CURLcode result = message->data.result;  // read before removal frees it
            void* owner = nullptr;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
            curl_multi_remove_handle(multi_.get(), easy);
            --running_;
            finish(*static_cast<Transfer*>(owner), result);
        }
    }

    void finish(Transfer& t, CURLcode result) {
        if (result == CURLE_FILESIZE_EXCEEDED || (result == CURLE_WRITE_ERROR && t.too_big)) {
            std::string().swap(t.body);
            record(t, HttpOutcome::fatal, too_big_reason(t));
            return;
        }
        if (result != CURLE_OK) {
            const std::string reason = transport_reason(result, t);
            if (is_transient(result)) {
                retry_or_give_up(t, reason, std::nullopt);
            } else {
                record(t, HttpOutcome::fatal, reason);
            }
            return;
        }
        long status = 0;
        curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
        const std::string reason = "HTTP " + std::to_string(status);
        switch (classify_status(status)) {
            case Verdict::ok: record(t, HttpOutcome::ok, ""); return;
            case Verdict::not_found: record(t, HttpOutcome::not_found, reason); return;
            case Verdict::fatal: record(t, HttpOutcome::fatal, reason); return;
            case Verdict::transient: break;
        }
        curl_off_t retry_after = 0;
        curl_easy_getinfo(t.easy.get(), CURLINFO_RETRY_AFTER, &retry_after);
        retry_or_give_up(t, reason, retry_after > 0 ? std::optional(std::chrono::seconds(retry_after))
                                                    : std::nullopt);
    }

    void retry_or_give_up(Transfer& t, const std::string& reason,
                          std::optional<std::chrono::seconds> retry_after) {
        if (t.attempts >= max_tries_) {
            record(t, HttpOutcome::transient_exhausted,
                   reason + " (gave up after " + std::to_string(t.attempts) + " tries)");
            return;
        }
        const auto delay = retry_delay(t.attempts, retry_after, options_);
        log::debug(redact(t.request->url) + ": " + redact(reason) + "; try " +
                   std::to_string(t.attempts + 1) + " of " + std::to_string(max_tries_) + " in " +
                   std::to_string(delay.count()) + " ms");
        t.not_before = Clock::now() + delay;
        waiting_.push_back(&t);
    }

    void record(Transfer& t, HttpOutcome outcome, const std::string& reason) {
        HttpResponse& r = *t.response;
        r.outcome = outcome;
        r.attempts = t.attempts;
        r.final_url = t.request->url;
        if (t.easy) {
            curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &r.status);
            const char* text = nullptr;
            if (curl_easy_getinfo(t.easy.get(), CURLINFO_EFFECTIVE_URL, &text) == CURLE_OK && text) {
                r.final_url = text;
            }
            text = nullptr;
            if (curl_easy_getinfo(t.easy.get(), CURLINFO_CONTENT_TYPE, &text) == CURLE_OK && text) {
                r.content_type = text;
            }
            if (outcome == HttpOutcome::ok) {
                r.etag = header_of(t.easy.get(), "ETag");
                r.last_modified = header_of(t.easy.get(), "Last-Modified");
                r.cache_control = header_of(t.easy.get(), "Cache-Control");
                r.age = std::atol(header_of(t.easy.get(), "Age").c_str());
            }
        }
        r.body = std::move(t.body);
        r.error = reason.empty() ? "" : redact(t.request->url) + ": " + redact(reason);
        t.done = true;
        t.easy.reset();  // frees the handle's buffers; the multi keeps the connection
        ++finished_;
        if (on_done_) {
            on_done_(static_cast<std::size_t>(t.response - first_response_), r);
        }
    }

    void fail_unfinished(const std::string& reason) {
        for (auto& t : transfers_) {
            if (!t->done) {
                record(*t, HttpOutcome::fatal, reason);
            }
        }
    }

    int poll_timeout_ms() const {
        auto wait = std::chrono::milliseconds(1000);
        if (running_ < max_in_flight_) {
            const auto now = Clock::now();
            for (const Transfer* t : waiting_) {
                const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(t->not_before - now);
                wait = std::min(wait, std::max(until, std::chrono::milliseconds(0)));
            }
        }
        return static_cast<int>(wait.count());
    }

    const HttpOptions& options_;
    const HttpDone& on_done_;
    const int max_tries_;
    const int max_in_flight_;
    HttpResponse* const first_response_;  // responses[i] is first_response_ + i
    MultiHandle multi_;  // before the transfers: easy handles go first
    std::vector<std::unique_ptr<Transfer>> transfers_;
    std::vector<Transfer*> waiting_;  // not yet started, or waiting out a backoff
    int running_ = 0;
    std::size_t finished_ = 0;
};

}  // namespace

std::string_view to_string(HttpOutcome outcome) {
    switch (outcome) {
        case HttpOutcome::ok: return "ok";
        case HttpOutcome::not_found: return "not found";
        case HttpOutcome::transient_exhausted: return "transient failure, retries exhausted";
        case HttpOutcome::fatal: return "fatal";
    }
    return "unknown";
}

std::vector<HttpResponse> fetch_all(const std::vector<HttpRequest>& requests,
                                    const HttpOptions& options, const HttpDone& on_done) {
    std::vector<HttpResponse> responses(requests.size());
    if (!requests.empty()) {
        Fetcher(requests, responses, options, on_done).run();
    }
    return responses;
}

std::chrono::milliseconds retry_delay(int tries_made, std::optional<std::chrono::seconds> retry_after,
                                      const HttpOptions& options) {
    const std::chrono::milliseconds cap = options.max_retry_after;
    std::chrono::milliseconds delay = options.backoff;
    for (int i = 1; i < tries_made && delay < cap; ++i) {
        delay *= 2;
    }
    if (retry_after && *retry_after > delay) {
        delay = *retry_after;
    }
    return std::min(delay, cap);
}

}  // namespace stackup::base
