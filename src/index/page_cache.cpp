#include "index/page_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "base/json_number.hpp"
#include "base/log.hpp"
#include "base/sha256.hpp"
#include "base/text.hpp"
#include "base/url.hpp"

namespace stackup::index {
namespace {

constexpr const char* kFolder = "pages-v1";

struct Rules {
    long max_age = -1;
    bool no_cache = false;
    bool no_store = false;
};

// Cache-Control, as far as a private cache of pages needs it (RFC 9111 5.2.2).
Rules rules_of(std::string_view header) {
    Rules rules;
    while (!header.empty()) {
        const auto comma = header.find(',');
        std::string directive(base::trim(header.substr(0, comma)));
        header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
        for (char& c : directive) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (directive == "no-cache") {
            rules.no_cache = true;
        } else if (directive == "no-store") {
            rules.no_store = true;
        } else if (directive.starts_with("max-age=")) {
            std::string_view digits = std::string_view(directive).substr(8);
            if (!digits.empty() && digits.front() == '"' && digits.size() > 1 && digits.back() == '"') {
                digits = digits.substr(1, digits.size() - 2);
            }
            long seconds = 0;
            auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
            rules.max_age = error == std::errc() && end == digits.data() + digits.size() ? seconds : 0;
        }
    }
    return rules;
}

void apply(StoredPage& page, const base::HttpResponse& response, std::time_t now) {
    const Rules rules = rules_of(response.cache_control);
    page.max_age = rules.max_age;
    page.no_cache = rules.no_cache;
    page.received = now - std::max(response.age, 0L);
}

}  // namespace

std::filesystem::path default_cache_dir(const base::Environment& env) {
    auto value = [&](const char* name) {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
    };
    if (auto dir = value("STACKUP_CACHE_DIR"); !dir.empty()) {
        return dir;
    }
    if (auto dir = value("XDG_CACHE_HOME"); !dir.empty() && std::filesystem::path(dir).is_absolute()) {
        return std::filesystem::path(dir) / "stackup";
    }
    if (auto home = value("HOME"); !home.empty()) {
        return std::filesystem::path(home) / ".cache" / "stackup";
    }
    return {};
}

PageCache::PageCache(CacheOptions options) : options_(std::move(options)) {
    if (options_.dir.empty()) {
        options_.mode = CacheMode::off;
    }
}

// The URL as asked, credentials and all, hashed: another user's page is another entry,
// and no secret is written down.
std::filesystem::path PageCache::file_of(const std::string& url) const {
    return options_.dir / kFolder / (base::sha256_hex(url) + ".page");
}

std::optional<StoredPage> PageCache::find(const std::string& url) const {
    if (options_.mode == CacheMode::off) {
        return std::nullopt;
    }
    StoredPage page;
    page.file = file_of(url);
    std::ifstream in(page.file, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) {
        return std::nullopt;
    }
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object() || record.value("url", "") != base::redact(url)) {
        base::log::debug("page cache: ignoring " + page.file.string() + " (not a record of this page)");
        return std::nullopt;
    }
    try {
        page.etag = record.value("etag", "");
        page.last_modified = record.value("last_modified", "");
        page.content_type = record.value("content_type", "");
        page.final_url = record.value("final_url", "");
        page.received = base::whole_number_field<std::time_t>(record, "received", 0);
        page.max_age = base::whole_number_field<long>(record, "max_age", -1L);
        page.no_cache = record.value("no_cache", false);
        page.size = base::whole_number_field<std::uintmax_t>(record, "size", 0);
        page.sha256 = record.value("sha256", "");
    } catch (const std::exception&) {  // a field of the wrong type: not a record we wrote
        return std::nullopt;
    }
    std::error_code ec;
    if (std::filesystem::file_size(page.file, ec) != line.size() + 1 + page.size || ec) {
        base::log::debug("page cache: ignoring " + page.file.string() + " (cut short or grown)");
        return std::nullopt;
    }
    return page;
}

bool PageCache::fresh(const StoredPage& page, std::time_t now) const {
    return options_.mode == CacheMode::use && !page.no_cache && page.max_age > 0 &&
           now >= page.received && now - page.received < page.max_age;
}

std::vector<std::string> PageCache::validators(const StoredPage& page) {
    std::vector<std::string> headers;
    if (!page.etag.empty()) {
        headers.push_back("If-None-Match: " + page.etag);
    }
    if (!page.last_modified.empty()) {
        headers.push_back("If-Modified-Since: " + page.last_modified);
    }
    return headers;
}

std::optional<std::string> PageCache::body(const StoredPage& page) const {
    std::ifstream in(page.file, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) {
        return std::nullopt;
    }
    std::string text(page.size, '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(text.size())) || base::sha256_hex(text) != page.sha256) {
        base::log::debug("page cache: " + page.file.string() + " is not the page that was stored");
        return std::nullopt;
    }
    return text;
}

void PageCache::forget(const StoredPage& page) const {
    std::error_code ec;
    std::filesystem::remove(page.file, ec);
    base::log::debug("page cache: dropped " + page.file.string() + " (it does not read as a page)");
}

void PageCache::store(const std::string& url, const base::HttpResponse& response, std::time_t now) const {
    if (options_.mode == CacheMode::off || !response.ok() || response.status != 200) {
        return;
    }
    const Rules rules = rules_of(response.cache_control);
    if (rules.no_store || (response.etag.empty() && response.last_modified.empty() && rules.max_age <= 0)) {
        return;  // nothing to revalidate with, and no lifetime: keeping it would buy nothing
    }
    StoredPage page;
    page.etag = response.etag;
    page.last_modified = response.last_modified;
    page.content_type = response.content_type;
    if (!response.final_url.empty() && response.final_url != url) {
        if (base::redact(response.final_url) != response.final_url) {
            return;  // redirected to a URL with credentials: not written down
        }
        page.final_url = response.final_url;
    }
    apply(page, response, now);
    page.sha256 = base::sha256_hex(response.body);
    write(url, page, response.body);
}

void PageCache::revalidated(const std::string& url, StoredPage page, std::string_view body,
                            const base::HttpResponse& response, std::time_t now) const {
    if (options_.mode == CacheMode::off) {
        return;
    }
    const StoredPage before = page;
    if (!response.etag.empty()) {
        page.etag = response.etag;
    }
    if (!response.last_modified.empty()) {
        page.last_modified = response.last_modified;
    }
    if (!response.cache_control.empty()) {
        apply(page, response, now);
    } else {
        page.received = now - std::max(response.age, 0L);
    }
    // The same validators and no lifetime to restart: the entry stays as it is (no rewrite
    // of a 15,000-file page on every plan).
    if (page.etag == before.etag && page.last_modified == before.last_modified &&
        page.max_age == before.max_age && page.no_cache == before.no_cache &&
        (page.no_cache || page.max_age <= 0)) {
        return;
    }
    write(url, page, body);
}

// A temp file beside the entry, renamed over it: a reader sees the old page or the new one.
// Not fsync'd: a cache lost in a crash is only fetched again.
void PageCache::write(const std::string& url, const StoredPage& page, std::string_view body) const {
    const auto file = file_of(url);
    const nlohmann::json record = {
        {"url", base::redact(url)},          {"etag", page.etag},
        {"last_modified", page.last_modified}, {"content_type", page.content_type},
        {"final_url", page.final_url},       {"received", page.received},
        {"max_age", page.max_age},           {"no_cache", page.no_cache},
        {"size", body.size()},               {"sha256", page.sha256},
    };
    std::string tmp = file.string() + ".tmp-XXXXXX";
    try {
        std::filesystem::create_directories(file.parent_path());
        ::chmod(options_.dir.c_str(), 0700);  // pages of private indexes: this user's only
        base::UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
        if (!fd) {
            throw std::runtime_error("cannot create " + tmp);
        }
        const std::string head = record.dump() + "\n";
        base::write_all(fd.get(), head.data(), head.size(), tmp);
        base::write_all(fd.get(), body.data(), body.size(), tmp);
        fd.reset();
        if (::rename(tmp.c_str(), file.c_str()) != 0) {
            throw std::runtime_error("cannot rename " + tmp);
        }
    } catch (const std::exception& e) {
        ::unlink(tmp.c_str());
        base::log::debug("page cache: not kept: " + std::string(e.what()));
    }
}

}  // namespace stackup::index
