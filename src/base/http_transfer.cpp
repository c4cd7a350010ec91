// One libcurl transfer: the options it is set up with, its body as it comes, and the texts of how it ended.
#include "base/http_transfer.hpp"

#include <signal.h>

#include <mutex>

namespace stackup::base::detail {
namespace {

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

}  // namespace

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

}  // namespace stackup::base::detail
