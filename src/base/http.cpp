#include "base/interrupt.hpp"
#include "base/http.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <curl/curl.h>

#include "base/http_transfer.hpp"
#include "base/log.hpp"
#include "base/url.hpp"

namespace stackup::base {
namespace {

using detail::Clock;
using detail::EasyHandle;
using detail::MultiHandle;
using detail::Transfer;
using detail::Verdict;
using detail::classify_status;
using detail::configure;
using detail::global_init;
using detail::header_of;
using detail::is_transient;
using detail::too_big_reason;
using detail::transport_reason;

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
