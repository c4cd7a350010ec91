#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "base/http.hpp"
#include "base/process.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

extern char** environ;

using namespace std::chrono_literals;
using stackup::base::fetch_all;
using stackup::base::HttpOptions;
using stackup::base::HttpOutcome;
using stackup::base::HttpRequest;
using stackup::base::retry_delay;
using stackup::testing::TempDir;

namespace {

const char* const kAccept = "Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.1";

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// tests/support/index_server.py as a child process; SIGTERM (then SIGKILL) and reaped on scope exit.
class IndexServerProcess {
public:
    IndexServerProcess(const TempDir& tmp, const std::string& rules_json) {
        const auto port_file = tmp / "server.port";
        const auto control = tmp.write("control.json", rules_json);
        log_path_ = tmp / "server.log";
        const std::string script = stackup::testing::source_dir().string() + "/tests/support/index_server.py";
        std::vector<std::string> args = {"python3", script, (tmp / "index").string(),
                                         "--port-file", port_file.string(),
                                         "--control", control.string()};
        std::vector<char*> argv;
        for (auto& arg : args) {
            argv.push_back(arg.data());
        }
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int rc = posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) {
            pid_ = -1;
            return;
        }
        wait_for_port(port_file);
    }
    ~IndexServerProcess() { stop(); }
    IndexServerProcess(const IndexServerProcess&) = delete;
    IndexServerProcess& operator=(const IndexServerProcess&) = delete;

    bool started() const { return port_ != 0; }
    std::string log() const { return read_text(log_path_); }
    std::string url(const std::string& path, const std::string& userinfo = "") const {
        return "http://" + userinfo + "127.0.0.1:" + std::to_string(port_) + path;
    }
    // The server's own log of request paths (JSON), without the rules' prefixes; "" on failure.
    std::string request_log() const {
        auto control = fetch_all({{url("/_control"), {}}}).at(0);
        const auto log_start = control.body.find("\"log\"");
        if (log_start == std::string::npos) {
            return "";
        }
        const auto log_end = control.body.find("\"answers\"", log_start);  // (path, status) pairs: not requests
        return control.body.substr(log_start, log_end == std::string::npos ? std::string::npos : log_end - log_start);
    }
    // How many times the server saw `path`.
    int hits(const std::string& path) const {
        const std::string log = request_log();
        const std::string needle = "\"" + path + "\"";
        int count = 0;
        for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
            ++count;
        }
        return count;
    }
    void stop() {
        if (pid_ <= 0) {
            return;
        }
        ::kill(pid_, SIGTERM);
        for (int i = 0; i < 100 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
            std::this_thread::sleep_for(20ms);
        }
        if (::kill(pid_, SIGKILL) == 0) {
            ::waitpid(pid_, nullptr, 0);
        }
        pid_ = -1;
    }

private:
    void wait_for_port(const std::filesystem::path& port_file) {
        for (int i = 0; i < 1500; ++i) {
            if (std::filesystem::exists(port_file)) {
                port_ = std::stoi(read_text(port_file));
                return;
            }
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;  // died before listening; reaped
                return;
            }
            std::this_thread::sleep_for(20ms);
        }
    }

    pid_t pid_ = -1;
    int port_ = 0;
    std::filesystem::path log_path_;
};

// A tiny index: simple/<project>/<project>-1.0-py3-none-any.whl for each project.
void make_tree(const TempDir& tmp) {
    for (const char* project : {"demo", "flaky", "broken", "hung", "p0", "p1", "p2", "p3", "p4",
                                "p5", "p6", "p7"}) {
        const std::string name = project;
        tmp.write("index/simple/" + name + "/" + name + "-1.0-py3-none-any.whl", "not a real wheel");
    }
}

// A started server, or the test fails; nullptr when python3 is missing, the test case then skipped
// (exit 125): each case that calls it is tagged conditional.
std::unique_ptr<IndexServerProcess> start_server(const TempDir& tmp,
                                                 const std::string& rules_json = R"({"rules": []})") {
    if (stackup::base::find_program("python3", stackup::base::current_environment()).empty()) {
        stackup::testing::skip("python3 is not on PATH to run tests/support/index_server.py");
        return nullptr;
    }
    make_tree(tmp);
    auto server = std::make_unique<IndexServerProcess>(tmp, rules_json);
    if (!server->started()) {
        FAIL("tests/support/index_server.py did not start:\n" << server->log());
    }
    return server;
}

HttpOptions quick_options() {
    HttpOptions options;
    options.backoff = 20ms;  // keeps the retry tests fast; the schedule itself is tested apart
    return options;
}

}  // namespace

TEST_SUITE("base") {
    TEST_CASE("a 200 page comes with its body, content type and final URL" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp);
        if (!server) {
            return;
        }
        auto responses = fetch_all({{server->url("/simple/demo/"), {kAccept}},
                                    {server->url("/simple/demo"), {kAccept}},
                                    {server->url("/simple/demo/demo-1.0-py3-none-any.whl"), {}}});
        REQUIRE(responses.size() == 3);
        const auto& page = responses[0];
        CHECK(page.outcome == HttpOutcome::ok);
        CHECK(page.status == 200);
        CHECK(page.attempts == 1);
        CHECK(page.error.empty());
        CHECK(page.content_type.rfind("text/html", 0) == 0);
        CHECK(page.body.find("demo-1.0-py3-none-any.whl#sha256=") != std::string::npos);
        CHECK(page.final_url == server->url("/simple/demo/"));
        // The server redirects a project URL without its slash.
        CHECK(responses[1].ok());
        CHECK(responses[1].final_url == server->url("/simple/demo/"));
        CHECK(responses[2].body == "not a real wheel");
        CHECK(responses[2].content_type == "application/octet-stream");
    }

    TEST_CASE("a page's validators and Cache-Control come back; a conditional request gets 304" *
              doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp);
        if (!server) {
            return;
        }
        tmp.write("index/simple/.cache-control", "max-age=600");
        auto first = fetch_all({{server->url("/simple/demo/"), {kAccept}}}).at(0);
        REQUIRE(first.ok());
        CHECK(first.status == 200);
        CHECK(first.etag.size() == 34);  // a quoted digest
        CHECK(first.cache_control == "max-age=600");
        auto again = fetch_all({{server->url("/simple/demo/"), {kAccept, "If-None-Match: " + first.etag}},
                                {server->url("/simple/demo/"), {kAccept, "If-None-Match: \"other\""}}});
        CHECK(again[0].outcome == HttpOutcome::ok);
        CHECK(again[0].status == 304);
        CHECK(again[0].body.empty());
        CHECK(again[0].etag == first.etag);
        CHECK(again[1].status == 200);
        CHECK(again[1].body == first.body);
    }

    TEST_CASE("each response is handed over as it finishes, before fetch_all returns" *
              doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/p0/", "delay_ms": 600}]})");
        if (!server) {
            return;
        }
        std::vector<HttpRequest> requests = {{server->url("/simple/p0/"), {kAccept}},
                                             {server->url("/simple/p1/"), {kAccept}},
                                             {server->url("/simple/nope/"), {kAccept}}};
        std::vector<std::size_t> order;
        std::vector<std::string> bodies(requests.size());
        auto responses = fetch_all(requests, quick_options(), [&](std::size_t i, stackup::base::HttpResponse& r) {
            order.push_back(i);
            bodies[i] = std::move(r.body);  // taken away: the caller keeps what it needs
        });
        REQUIRE(order.size() == 3);
        CHECK(order.back() == 0);  // the slow page last, the others handed over while it was in flight
        CHECK(bodies[0].find("p0-1.0-py3-none-any.whl") != std::string::npos);
        CHECK(bodies[1].find("p1-1.0-py3-none-any.whl") != std::string::npos);
        CHECK(responses[0].ok());
        CHECK(responses[0].body.empty());
        CHECK(responses[2].outcome == HttpOutcome::not_found);
    }

    TEST_CASE("404 is not_found and is not retried" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp);
        if (!server) {
            return;
        }
        auto r = fetch_all({{server->url("/simple/nope/"), {kAccept}}}, quick_options()).at(0);
        CHECK(r.outcome == HttpOutcome::not_found);
        CHECK(r.status == 404);
        CHECK(r.attempts == 1);
        CHECK(r.error.find("HTTP 404") != std::string::npos);
        CHECK(server->hits("/simple/nope/") == 1);
    }

    TEST_CASE("two 503s then 200 is ok after 3 attempts" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(
            tmp, R"({"rules": [{"prefix": "/simple/flaky/", "status": 503, "times": 2}]})");
        if (!server) {
            return;
        }
        auto r = fetch_all({{server->url("/simple/flaky/"), {kAccept}}}, quick_options()).at(0);
        CHECK(r.outcome == HttpOutcome::ok);
        CHECK(r.status == 200);
        CHECK(r.attempts == 3);
        CHECK(r.body.find("flaky-1.0-py3-none-any.whl") != std::string::npos);
        CHECK(server->hits("/simple/flaky/") == 3);
    }

    TEST_CASE("a page that always answers 500 exhausts the tries and names the status" *
              doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/broken/", "status": 500}]})");
        if (!server) {
            return;
        }
        auto r = fetch_all({{server->url("/simple/broken/"), {kAccept}}}, quick_options()).at(0);
        CHECK(r.outcome == HttpOutcome::transient_exhausted);
        CHECK(r.status == 500);
        CHECK(r.attempts == 3);
        CHECK(r.error.find("HTTP 500") != std::string::npos);
        CHECK(server->hits("/simple/broken/") == 3);
    }

    TEST_CASE("a hung page times out on every try and is transient_exhausted" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/hung/", "hang": true}]})");
        if (!server) {
            return;
        }
        auto options = quick_options();
        options.timeout_seconds = 2;
        options.max_tries = 2;
        auto responses = fetch_all({{server->url("/simple/hung/"), {kAccept}},
                                    {server->url("/simple/demo/"), {kAccept}}}, options);
        CHECK(responses[0].outcome == HttpOutcome::transient_exhausted);
        CHECK(responses[0].attempts == 2);
        CHECK(responses[0].error.find("Timeout") != std::string::npos);
        // The hung transfer holds up nothing else.
        CHECK(responses[1].ok());
        CHECK(responses[1].attempts == 1);
    }

    TEST_CASE("a page that trickles a byte a second is given up by the low-speed limit, then retried" *
              doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/hung/", "trickle_bps": 1}]})");
        if (!server) {
            return;
        }
        auto options = quick_options();
        options.timeout_seconds = 60;  // the whole-transfer timeout would come far later
        options.low_speed_seconds = 1;
        options.max_tries = 2;
        auto r = fetch_all({{server->url("/simple/hung/"), {kAccept}}}, options).at(0);
        CHECK(r.outcome == HttpOutcome::transient_exhausted);
        CHECK(r.attempts == 2);
        CHECK(r.error.find("too slow") != std::string::npos);
        CHECK(server->hits("/simple/hung/") == 2);
    }

    TEST_CASE("a body over max_body_bytes fails at once, with or without Content-Length, and is not retried" *
              doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/p0/", "pad_bytes": 100000},
                                                      {"prefix": "/simple/p1/", "pad_bytes": 100000, "no_length": true}]})");
        if (!server) {
            return;
        }
        auto options = quick_options();
        options.max_body_bytes = 50000;
        auto responses = fetch_all({{server->url("/simple/p0/"), {kAccept}},
                                    {server->url("/simple/p1/"), {kAccept}},
                                    {server->url("/simple/p2/"), {kAccept}}}, options);
        for (int i : {0, 1}) {
            CAPTURE(i);
            CHECK(responses[i].outcome == HttpOutcome::fatal);
            CHECK(responses[i].attempts == 1);
            CHECK(responses[i].body.empty());
            CHECK(responses[i].error.find("answer too large") != std::string::npos);
            CHECK(responses[i].error.find("50000 bytes") != std::string::npos);
        }
        CHECK(responses[0].error.find("its 10") != std::string::npos);  // its Content-Length, named
        CHECK(server->hits("/simple/p0/") == 1);
        CHECK(server->hits("/simple/p1/") == 1);
        CHECK(responses[2].ok());  // a page under the cap is read as ever
    }

    TEST_CASE("a connection reset mid-body is transient: retried, and named" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/flaky/", "reset_at": 40, "times": 1},
                                                      {"prefix": "/simple/broken/", "reset_at": 40}]})");
        if (!server) {
            return;
        }
        auto responses = fetch_all({{server->url("/simple/flaky/"), {kAccept}},
                                    {server->url("/simple/broken/"), {kAccept}}}, quick_options());
        CHECK(responses[0].ok());
        CHECK(responses[0].attempts == 2);
        CHECK(responses[0].body.find("flaky-1.0-py3-none-any.whl") != std::string::npos);
        CHECK(responses[1].outcome == HttpOutcome::transient_exhausted);
        CHECK(responses[1].attempts == 3);
        CHECK(responses[1].error.find("gave up after 3 tries") != std::string::npos);
    }

    TEST_CASE("8 delayed pages all complete, answered in request order" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/p", "delay_ms": 400}]})");
        if (!server) {
            return;
        }
        std::vector<HttpRequest> requests;
        for (int i = 0; i < 8; ++i) {
            requests.push_back({server->url("/simple/p" + std::to_string(i) + "/"), {kAccept}});
        }
        auto responses = fetch_all(requests);
        REQUIRE(responses.size() == 8);
        for (int i = 0; i < 8; ++i) {
            CAPTURE(i);
            CHECK(responses[i].ok());
            const std::string file = "p" + std::to_string(i) + "-1.0-py3-none-any.whl";
            CHECK(responses[i].body.find(file) != std::string::npos);
        }
    }

    TEST_CASE("all requests are in flight at once" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/p", "hang": true}]})");
        if (!server) {
            return;
        }
        std::vector<HttpRequest> requests;
        for (int i = 0; i < 8; ++i) {
            requests.push_back({server->url("/simple/p" + std::to_string(i) + "/"), {}});
        }
        // One after another, only p0 would reach the server while it hangs; all 8 must.
        std::atomic<int> seen_at_once = 0;
        std::thread watcher([&] {
            for (int poll = 0; poll < 400 && seen_at_once < 8; ++poll) {
                const std::string log = server->request_log();
                int seen = 0;
                for (const auto& request : requests) {
                    const std::string path = request.url.substr(request.url.find("/simple/"));
                    seen += log.find("\"" + path + "\"") != std::string::npos ? 1 : 0;
                }
                seen_at_once = seen;
                std::this_thread::sleep_for(50ms);
            }
            server->stop();  // drops the hung connections, so fetch_all returns
        });
        auto options = quick_options();
        options.max_tries = 1;
        auto responses = fetch_all(requests, options);
        watcher.join();
        CHECK(seen_at_once.load() == 8);
        for (const auto& response : responses) {
            CHECK(response.outcome == HttpOutcome::transient_exhausted);
        }
    }

    TEST_CASE("a cap of one in flight still fetches everything" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp);
        if (!server) {
            return;
        }
        auto options = quick_options();
        options.max_in_flight = 1;
        auto responses = fetch_all({{server->url("/simple/p0/"), {}},
                                    {server->url("/simple/nope/"), {}},
                                    {server->url("/simple/p1/"), {}}}, options);
        CHECK(responses[0].ok());
        CHECK(responses[1].outcome == HttpOutcome::not_found);
        CHECK(responses[2].ok());
    }

    TEST_CASE("credentials in the URL never appear in an error text" * doctest::test_suite("conditional")) {
        TempDir tmp;
        auto server = start_server(tmp, R"({"rules": [{"prefix": "/simple/broken/", "status": 500}]})");
        if (!server) {
            return;
        }
        const std::string secret = "alice:s3cret@";
        auto responses = fetch_all({{server->url("/simple/demo/", secret), {}},
                                    {server->url("/simple/nope/", secret), {}},
                                    {server->url("/simple/broken/", secret), {}},
                                    {"http://" + secret + "127.0.0.1:1/simple/", {}},
                                    {"ftp://" + secret + "127.0.0.1/simple/", {}}},
                                   quick_options());
        CHECK(responses[0].ok());
        CHECK(responses[1].outcome == HttpOutcome::not_found);
        CHECK(responses[2].outcome == HttpOutcome::transient_exhausted);
        CHECK(responses[3].outcome == HttpOutcome::transient_exhausted);  // connection refused
        CHECK(responses[4].outcome == HttpOutcome::fatal);                 // not http(s)
        for (std::size_t i = 1; i < responses.size(); ++i) {
            CAPTURE(responses[i].error);
            CHECK(responses[i].error.find("***@127.0.0.1") != std::string::npos);
            CHECK(responses[i].error.find("s3cret") == std::string::npos);
            CHECK(responses[i].error.find("alice") == std::string::npos);
        }
    }

    TEST_CASE("no requests, no responses") {
        CHECK(fetch_all({}).empty());
    }

    TEST_CASE("retry_delay doubles, yields to a longer Retry-After, and is capped") {
        HttpOptions options;
        options.backoff = 500ms;
        options.max_retry_after = 60s;
        CHECK(retry_delay(1, std::nullopt, options) == 500ms);
        CHECK(retry_delay(2, std::nullopt, options) == 1000ms);
        CHECK(retry_delay(3, std::nullopt, options) == 2000ms);
        CHECK(retry_delay(1, 5s, options) == 5000ms);
        CHECK(retry_delay(3, 1s, options) == 2000ms);
        CHECK(retry_delay(1, 3600s, options) == 60s);
        CHECK(retry_delay(40, std::nullopt, options) == 60s);
    }
}
