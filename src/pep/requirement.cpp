// PEP 508 requirement strings: name, extras, a specifier or "@ url", and a
// marker that is checked with marker.hpp's grammar and kept as written
// (evaluating it is the installer's job).

#include "pep/requirement.hpp"

#include <algorithm>

#include "pep/marker.hpp"
#include "pep/name.hpp"

namespace stackup::pep {

namespace {

// A parse failure: what is wrong, and the 0-based offset of the character at fault.
struct SyntaxError {
    std::string what;
    std::size_t at;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_char(char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; }
// Reads one requirement left to right; `at_` is the offset into the trimmed text.
class RequirementParser {
public:
    explicit RequirementParser(std::string_view text) : text_(text) {}

    Requirement run() {
        Requirement req;
        req.name = read_name();
        skip_space();
        if (peek() == '[') {
            req.extras = read_extras();
            skip_space();
        }
        if (peek() == '@') {
            ++at_;
            req.url = read_url();
        } else {
            req.specifier = read_specifier();
        }
        skip_space();
        if (at_ < text_.size()) {
            if (peek() != ';') {
                fail(req.url.empty() ? "expected a version specifier, ';' or the end"
                                     : "expected ';' (after white space) or the end after the URL");
            }
            req.marker = read_marker();
        }
        return req;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw SyntaxError{what, at_}; }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    void skip_space() {
        while (is_space(peek())) {
            ++at_;
        }
    }

    // `noun` is "project name" or "extra name"; `article` goes before it.
    std::string read_identifier(std::string_view article, std::string_view noun) {
        std::size_t start = at_;
        while (is_name_char(peek())) {
            ++at_;
        }
        std::string_view name = text_.substr(start, at_ - start);
        if (name.empty() || !is_valid_name(name)) {
            at_ = start;
            fail(name.empty() ? "expected " + std::string(article) + " " + std::string(noun)
                              : "invalid " + std::string(noun) + " '" + std::string(name) +
                                    "' (letters, digits, -_. ; starting and ending with a letter or digit)");
        }
        return std::string(name);
    }

    std::string read_name() { return read_identifier("a", "project name"); }

    std::vector<std::string> read_extras() {
        ++at_;  // '['
        std::vector<std::string> extras;
        skip_space();
        if (peek() == ']') {
            ++at_;
            return extras;
        }
        while (true) {
            skip_space();
            extras.push_back(read_identifier("an", "extra name"));
            skip_space();
            if (peek() == ']') {
                ++at_;
                return extras;
            }
            if (peek() != ',') {
                fail("expected ',' or ']' in the extras");
            }
            ++at_;
        }
    }

    std::string read_url() {
        skip_space();
        std::size_t start = at_;
        while (at_ < text_.size() && !is_space(peek())) {
            ++at_;
        }
        std::string_view url = text_.substr(start, at_ - start);
        std::size_t colon = url.find(':');
        bool scheme = colon != std::string_view::npos && colon > 0 &&
                      url.substr(0, colon).find_first_of("/?#") == std::string_view::npos;
        bool remote = scheme && url.substr(colon).starts_with("://") && url.size() > colon + 3;
        if (!scheme || (url.substr(0, colon) != "file" && !remote)) {
            at_ = start;
            fail(url.empty() ? "expected a URL after '@'" : "invalid URL '" + std::string(url) + "'");
        }
        return std::string(url);
    }

    SpecifierSet read_specifier() {
        bool parenthesized = peek() == '(';
        std::size_t start = parenthesized ? at_ + 1 : at_;
        std::size_t end = std::min(text_.find(parenthesized ? ')' : ';', start), text_.size());
        if (parenthesized && end == text_.size()) {
            fail("expected ')' to close the '('");
        }
        check_items(start, end);
        std::string error;
        auto set = SpecifierSet::parse(text_.substr(start, end - start), &error);
        if (!set) {
            at_ = start;
            fail(error);
        }
        at_ = parenthesized ? end + 1 : end;
        return *set;
    }

    // SpecifierSet::parse skips empty items; in a requirement they are mistakes.
    void check_items(std::size_t start, std::size_t end) {
        std::string_view body = text_.substr(start, end - start);
        if (body.find_first_not_of(" \t") == std::string_view::npos) {
            return;
        }
        for (std::size_t from = 0; from <= body.size();) {
            std::size_t comma = std::min(body.find(',', from), body.size());
            std::string_view item = body.substr(from, comma - from);
            if (item.find_first_not_of(" \t") == std::string_view::npos) {
                at_ = start + from;
                fail("expected a version specifier between the commas");
            }
            from = comma + 1;
        }
    }

    // The marker runs to the end; its offsets are shifted to columns of the requirement.
    std::string read_marker() {
        ++at_;  // ';'
        while (peek() == ' ' || peek() == '\t') {  // the marker's own white space: a line break is its error
            ++at_;
        }
        if (at_ == text_.size()) {
            fail("expected a marker after ';'");
        }
        std::size_t start = at_;
        std::string_view marker = text_.substr(start);
        if (auto e = marker_syntax_error(marker)) {
            at_ = start + e->at;
            fail(e->what);
        }
        at_ = text_.size();
        return std::string(marker);
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

}  // namespace

std::string Requirement::normalized_name() const { return normalize_name(name); }

std::string Requirement::str() const {
    std::string out = name;
    if (!extras.empty()) {
        out += "[";
        for (std::size_t i = 0; i < extras.size(); ++i) {
            out += (i == 0 ? "" : ",") + extras[i];
        }
        out += "]";
    }
    if (!url.empty()) {
        out += " @ " + url;
        return marker.empty() ? out : out + " ; " + marker;  // the space keeps ';' out of the URL
    }
    out += specifier.str();
    return marker.empty() ? out : out + "; " + marker;
}

std::optional<Requirement> parse_requirement(std::string_view text, std::string* error) {
    std::string_view trimmed = strip_whitespace(text);
    try {  // SyntaxError never leaves this function
        if (trimmed.empty()) {
            throw SyntaxError{"empty requirement", 0};
        }
        return RequirementParser(trimmed).run();
    } catch (const SyntaxError& e) {
        if (error) {
            *error = "invalid requirement '" + std::string(trimmed) + "': " + e.what + " at column " +
                     std::to_string(e.at + 1);
        }
        return std::nullopt;
    }
}

}  // namespace stackup::pep
