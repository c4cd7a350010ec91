// PEP 440 versions, parsed by hand after the specification's reference regex
// (packaging.version.VERSION_PATTERN), ASCII only as packaging >= 26 is.

#include "pep/version.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace stackup::pep {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_separator(char c) { return c == '-' || c == '_' || c == '.'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::optional<std::uint64_t> to_number(std::string_view digits) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
        return std::nullopt;  // numbers beyond 64 bits are not supported
    }
    return value;
}

// A read position over the stripped text; every eat_* consumes only on success.
class Cursor {
public:
    explicit Cursor(std::string_view text) : text_(text) {}

    bool done() const { return at_ == text_.size(); }
    bool failed() const { return failed_; }
    std::size_t position() const { return at_; }
    void rewind(std::size_t to) { at_ = to; }
    char peek(std::size_t ahead = 0) const { return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0'; }

    bool eat(char c) {
        if (peek() != c) {
            return false;
        }
        ++at_;
        return true;
    }
    bool eat_separator() {
        if (!is_separator(peek())) {
            return false;
        }
        ++at_;
        return true;
    }
    // Case-insensitive ASCII word.
    bool eat_word(std::string_view word) {
        if (text_.size() - at_ < word.size()) {
            return false;
        }
        for (std::size_t i = 0; i < word.size(); ++i) {
            if (lower(text_[at_ + i]) != word[i]) {
                return false;
            }
        }
        at_ += word.size();
        return true;
    }
    std::optional<std::uint64_t> eat_number() {
        std::size_t start = at_;
        while (is_digit(peek())) {
            ++at_;
        }
        if (start == at_) {
            return std::nullopt;
        }
        auto value = to_number(text_.substr(start, at_ - start));
        failed_ = failed_ || !value;
        return value.value_or(0);
    }
    std::string_view eat_alnum_run() {
        std::size_t start = at_;
        while (is_alnum(peek())) {
            ++at_;
        }
        return text_.substr(start, at_ - start);
    }

private:
    std::string_view text_;
    std::size_t at_ = 0;
    bool failed_ = false;
};

// Longer spellings first, so "alpha" is not read as "a" + "lpha"; kPreKinds says what each means.
constexpr std::array<std::string_view, 8> kPreWords{"alpha", "a", "beta", "b", "preview", "pre", "c", "rc"};
constexpr std::array<PreRelease::Kind, 8> kPreKinds{PreRelease::Kind::a, PreRelease::Kind::a, PreRelease::Kind::b,
                                                    PreRelease::Kind::b, PreRelease::Kind::rc, PreRelease::Kind::rc,
                                                    PreRelease::Kind::rc, PreRelease::Kind::rc};

// `[-_.]? label [-_.]? number?`, the shape shared by pre, post and dev segments.
template <typename Labels>
std::optional<std::uint64_t> eat_labelled(Cursor& cur, const Labels& labels, std::size_t* which) {
    std::size_t start = cur.position();
    cur.eat_separator();
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (cur.eat_word(labels[i])) {
            *which = i;
            cur.eat_separator();
            return cur.eat_number().value_or(0);  // an omitted number is 0
        }
    }
    cur.rewind(start);
    return std::nullopt;
}

std::optional<PreRelease> eat_pre(Cursor& cur) {
    std::size_t which = 0;
    auto number = eat_labelled(cur, kPreWords, &which);
    if (!number) {
        return std::nullopt;
    }
    return PreRelease{kPreKinds[which], *number};
}

std::optional<std::uint64_t> eat_post(Cursor& cur) {
    if (cur.peek() == '-' && is_digit(cur.peek(1))) {  // "1.0-1" is an implicit post-release
        cur.eat('-');
        return cur.eat_number();
    }
    constexpr std::array<std::string_view, 3> words{"post", "rev", "r"};
    std::size_t which = 0;
    return eat_labelled(cur, words, &which);
}

std::optional<std::uint64_t> eat_dev(Cursor& cur) {
    constexpr std::array<std::string_view, 1> words{"dev"};
    std::size_t which = 0;
    return eat_labelled(cur, words, &which);
}

// "+" then alphanumeric runs joined by -_. ; false when the label is malformed.
bool eat_local(Cursor& cur, std::vector<LocalSegment>& local) {
    if (!cur.eat('+')) {
        return true;
    }
    do {
        std::string_view run = cur.eat_alnum_run();
        if (run.empty()) {
            return false;
        }
        if (std::all_of(run.begin(), run.end(), is_digit)) {
            auto number = to_number(run);
            if (!number) {
                return false;
            }
            local.emplace_back(*number);
        } else {
            std::string text(run);
            std::transform(text.begin(), text.end(), text.begin(), lower);
            local.emplace_back(std::move(text));
        }
    } while (cur.eat_separator());
    return true;
}

std::vector<std::uint64_t> eat_release(Cursor& cur) {
    std::vector<std::uint64_t> release;
    auto first = cur.eat_number();
    if (!first) {
        return release;
    }
    release.push_back(*first);
    while (cur.peek() == '.' && is_digit(cur.peek(1))) {
        cur.eat('.');
        release.push_back(*cur.eat_number());
    }
    return release;
}

// Release compared with trailing zeros ignored ("1.0" == "1.0.0").
std::strong_ordering compare_release(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t x = i < a.size() ? a[i] : 0;
        std::uint64_t y = i < b.size() ? b[i] : 0;
        if (x != y) {
            return x <=> y;
        }
    }
    return std::strong_ordering::equal;
}

// Where the pre segment sorts: dev-only releases first, then a/b/rc, then finals and posts.
std::strong_ordering compare_pre(const Version& a, const Version& b) {
    auto rank = [](const Version& v) {
        if (v.pre()) {
            return 1;
        }
        return !v.post() && v.dev() ? 0 : 2;
    };
    if (auto c = rank(a) <=> rank(b); c != 0) {
        return c;
    }
    return a.pre() && b.pre() ? *a.pre() <=> *b.pre() : std::strong_ordering::equal;
}

// Numeric segments sort above alphanumeric ones; a shorter label that is a prefix sorts first.
std::strong_ordering compare_local(const std::vector<LocalSegment>& a, const std::vector<LocalSegment>& b) {
    std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (a[i].index() != b[i].index()) {
            return a[i].index() == 0 ? std::strong_ordering::greater : std::strong_ordering::less;
        }
        if (auto c = a[i] <=> b[i]; c != 0) {
            return c;
        }
    }
    return a.size() <=> b.size();
}

std::string release_text(std::uint64_t epoch, const std::vector<std::uint64_t>& release) {
    std::string out = epoch != 0 ? std::to_string(epoch) + "!" : "";
    for (std::size_t i = 0; i < release.size(); ++i) {
        out += (i == 0 ? "" : ".") + std::to_string(release[i]);
    }
    return out;
}

std::string suffix_text(const Version& v) {
    std::string out;
    if (const auto& pre = v.pre()) {
        constexpr std::array<std::string_view, 3> names{"a", "b", "rc"};
        out += std::string(names[static_cast<std::size_t>(pre->kind)]) + std::to_string(pre->number);
    }
    if (v.post()) {
        out += ".post" + std::to_string(*v.post());
    }
    if (v.dev()) {
        out += ".dev" + std::to_string(*v.dev());
    }
    return out;
}

}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
    Cursor cur(strip_whitespace(text));
    if (lower(cur.peek()) == 'v') {
        cur.eat(cur.peek());
    }
    Version v;
    std::size_t start = cur.position();
    if (auto epoch = cur.eat_number(); epoch && cur.eat('!')) {
        v.epoch_ = *epoch;
    } else {
        cur.rewind(start);
    }
    v.release_ = eat_release(cur);
    if (v.release_.empty()) {
        return std::nullopt;
    }
    v.pre_ = eat_pre(cur);
    v.post_ = eat_post(cur);
    v.dev_ = eat_dev(cur);
    if (!eat_local(cur, v.local_) || !cur.done() || cur.failed()) {
        return std::nullopt;
    }
    return v;
}

Version Version::from_parts(std::uint64_t epoch, std::vector<std::uint64_t> release, std::optional<PreRelease> pre,
                            std::optional<std::uint64_t> post, std::optional<std::uint64_t> dev,
                            std::vector<LocalSegment> local) {
    Version v;
    v.epoch_ = epoch;
    v.release_ = release.empty() ? std::vector<std::uint64_t>{0} : std::move(release);
    v.pre_ = pre;
    v.post_ = post;
    v.dev_ = dev;
    v.local_ = std::move(local);
    return v;
}

std::string Version::local() const {
    std::string out;
    for (std::size_t i = 0; i < local_.size(); ++i) {
        out += i == 0 ? "" : ".";
        if (const auto* number = std::get_if<std::uint64_t>(&local_[i])) {
            out += std::to_string(*number);
        } else {
            out += std::get<std::string>(local_[i]);
        }
    }
    return out;
}

bool Version::is_prerelease() const { return pre_.has_value() || dev_.has_value(); }

std::string Version::str() const {
    std::string out = public_str();
    return local_.empty() ? out : out + "+" + local();
}

std::string Version::public_str() const { return release_text(epoch_, release_) + suffix_text(*this); }

std::string Version::base_version() const { return release_text(epoch_, release_); }

Version Version::without_local() const {
    Version v = *this;
    v.local_.clear();
    return v;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
    if (auto c = a.epoch_ <=> b.epoch_; c != 0) {
        return c;
    }
    if (auto c = compare_release(a.release_, b.release_); c != 0) {
        return c;
    }
    if (auto c = compare_pre(a, b); c != 0) {
        return c;
    }
    if (auto c = a.post_.has_value() <=> b.post_.has_value(); c != 0) {
        return c;  // no post sorts below any post
    }
    if (auto c = a.post_.value_or(0) <=> b.post_.value_or(0); c != 0) {
        return c;
    }
    if (auto c = b.dev_.has_value() <=> a.dev_.has_value(); c != 0) {
        return c;  // a dev release sorts below the same version without one
    }
    if (auto c = a.dev_.value_or(0) <=> b.dev_.value_or(0); c != 0) {
        return c;
    }
    return compare_local(a.local_, b.local_);
}

std::string canonicalize_version(std::string_view text, bool strip_trailing_zero) {
    auto v = Version::parse(text);
    if (!v) {
        return std::string(text);
    }
    if (!strip_trailing_zero) {
        return v->str();
    }
    std::vector<std::uint64_t> release = v->release();
    while (release.size() > 1 && release.back() == 0) {
        release.pop_back();
    }
    Version trimmed = Version::from_parts(v->epoch(), release, v->pre(), v->post(), v->dev(), v->local_segments());
    return trimmed.str();
}

}  // namespace stackup::pep
