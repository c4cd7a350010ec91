#pragma once
// One libcurl transfer of base/http.cpp: its handles, its state, its options and how it ended. Internal to base/.

#include <array>
#include <chrono>
#include <memory>
#include <string>

#include <curl/curl.h>

#include "base/http_request.hpp"

namespace stackup::base::detail {

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

// What an HTTP status means for a request: 2xx and 304 ok, 404/410 not found, 408/429/5xx transient.
Verdict classify_status(long status);

// Whether a transport error may pass when the request is tried again.
bool is_transient(CURLcode code);

// libcurl's global init, once per process (SIGPIPE ignored when it was left at its default).
bool global_init();

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

// A response header's value ("" when absent); the last one when sent more than once.
std::string header_of(CURL* easy, const char* name);

// Why a body over its cap was refused, with its Content-Length when one was sent.
std::string too_big_reason(const Transfer& t);

// curl's text for `code`, and its error buffer's detail when it has one.
std::string transport_reason(CURLcode code, const Transfer& t);

// Sets every option of one transfer; returns an error text, empty on success.
std::string configure(Transfer& t, const HttpOptions& options);

}  // namespace stackup::base::detail
