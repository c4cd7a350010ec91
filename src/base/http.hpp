#pragma once
// Parallel HTTP GETs over one libcurl multi handle: every request in flight at
// once (up to a cap), connections reused, HTTP/2 where offered, each transfer
// retried on transient failures and classified. libcurl is used only in http.cpp
// and url.cpp (URLs and the redactor: base/url.hpp).

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "base/http_request.hpp"

namespace stackup::base {

// Called once per request as soon as it is finished (ok or not), with its index in
// `requests`, while the others are still in flight; it may take the body away.
using HttpDone = std::function<void(std::size_t, HttpResponse&)>;

// Responses in the order of `requests`; never throws for a failed transfer.
std::vector<HttpResponse> fetch_all(const std::vector<HttpRequest>& requests,
                                    const HttpOptions& options = {}, const HttpDone& on_done = {});

// The wait before try `tries_made + 1`: exponential backoff, or the server's
// Retry-After when that is longer, both capped by options.max_retry_after.
std::chrono::milliseconds retry_delay(int tries_made,
                                      std::optional<std::chrono::seconds> retry_after,
                                      const HttpOptions& options);

}  // namespace stackup::base
