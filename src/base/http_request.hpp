#pragma once
// What one HTTP GET of base/http.hpp asks for, with which limits, and what came back.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::base {

enum class HttpOutcome {
    ok,                   // 2xx, or 304 to a conditional request (status says which)
    not_found,            // 404 or 410: "not there", never retried
    transient_exhausted,  // timeouts, resets, refused, 5xx, 429, ... on every try
    fatal,                // any other status or transport error; not retried
};

std::string_view to_string(HttpOutcome outcome);

struct HttpRequest {
    std::string url;                   // may hold user:pass@ for basic auth
    std::vector<std::string> headers;  // "Name: value"
};

struct HttpOptions {
    long timeout_seconds = 30;          // whole transfer, per attempt
    long connect_timeout_seconds = 10;  // curl uses the smaller of the two
    int max_tries = 3;
    int max_in_flight = 32;
    std::chrono::milliseconds backoff{500};       // before try 2; doubles after
    std::chrono::seconds max_retry_after{60};     // caps Retry-After and backoff
    // An attempt slower than this for that long is given up (and retried): a server that
    // trickles a byte a second never reaches the whole-transfer timeout's end in good time.
    long low_speed_bytes_per_second = 1024;
    long low_speed_seconds = 10;
    // A longer body fails the request, not retried: the largest real simple pages are a few
    // MB, so more is a broken or hostile server, and it is not read into memory.
    std::size_t max_body_bytes = std::size_t(32) << 20;
    std::string user_agent;                       // empty: curl sends none
};

struct HttpResponse {
    HttpOutcome outcome = HttpOutcome::fatal;
    long status = 0;            // 0 when no HTTP response came
    std::string final_url;      // after redirects, as curl reports it: may hold credentials
    std::string content_type;   // as sent, e.g. "text/html; charset=utf-8"
    std::string etag;           // the validators and caching rules, as sent ("" when absent)
    std::string last_modified;
    std::string cache_control;
    long age = 0;               // the Age header's seconds (0 when absent)
    std::string body;
    int attempts = 0;
    std::string error;          // empty when ok; never holds credentials

    bool ok() const { return outcome == HttpOutcome::ok; }
};

}  // namespace stackup::base
