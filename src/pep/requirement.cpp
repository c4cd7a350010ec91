// PEP 508 requirement strings: name, extras, a specifier or "@ url", and a
// marker that is validated here and kept as written (evaluating it is the
// installer's job).

#include "pep/requirement.hpp"

#include <algorithm>
#include <array>

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
bool is_ident_char(char c) { return is_alnum(c) || c == '_' || c == '.'; }

// PEP 508 variables, PEP 751's `extras`/`dependency_groups`, and the legacy
// dotted spellings that packaging still accepts.
constexpr std::array<std::string_view, 20> kMarkerVariables{
    "python_version",  "python_full_version", "os_name",          "sys_platform",
    "platform_release", "platform_system",    "platform_version", "platform_machine",
    "platform_python_implementation",          "implementation_name",
    "implementation_version",                  "extra",
    "extras",           "dependency_groups",  "os.name",          "sys.platform",
    "platform.version", "platform.machine",   "platform.python_implementation",
    "python_implementation",
};

// Reads the marker grammar of PEP 508 and throws SyntaxError where it breaks:
//   or := and ("or" and)* ; and := atom ("and" atom)* ; atom := "(" or ")" | value op value
class MarkerChecker {
public:
    MarkerChecker(std::string_view text, std::size_t base) : text_(text), base_(base) {}

    void run() {
        read_or();
        skip_space();
        if (at_ != text_.size()) {
            fail("expected 'and', 'or' or the end of the marker");
        }
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw SyntaxError{what, base_ + at_}; }

    void skip_space() {
        while (at_ < text_.size() && is_space(text_[at_])) {
            ++at_;
        }
    }

    // A keyword must end at a non-identifier character ("andy" is not "and").
    bool eat_keyword(std::string_view word) {
        skip_space();
        if (!text_.substr(at_).starts_with(word)) {
            return false;
        }
        std::size_t end = at_ + word.size();
        if (end < text_.size() && is_ident_char(text_[end])) {
            return false;
        }
        at_ = end;
        return true;
    }

    void read_or() {
        do {
            read_and();
        } while (eat_keyword("or"));
    }

    void read_and() {
        do {
            read_atom();
        } while (eat_keyword("and"));
    }

    void read_atom() {
        skip_space();
        if (at_ < text_.size() && text_[at_] == '(') {
            ++at_;
            read_or();
            skip_space();
            if (at_ >= text_.size() || text_[at_] != ')') {
                fail("expected ')' to close the '('");
            }
            ++at_;
            return;
        }
        read_value();
        read_operator();
        read_value();
    }

    void read_value() {
        skip_space();
        if (at_ >= text_.size()) {
            fail("expected a marker variable or a quoted string");
        }
        char quote = text_[at_];
        if (quote == '\'' || quote == '"') {
            std::size_t close = text_.find(quote, at_ + 1);
            if (close == std::string_view::npos) {
                fail("unterminated string");
            }
            at_ = close + 1;
            return;
        }
        std::size_t start = at_;
        while (at_ < text_.size() && is_ident_char(text_[at_])) {
            ++at_;
        }
        std::string_view name = text_.substr(start, at_ - start);
        if (std::find(kMarkerVariables.begin(), kMarkerVariables.end(), name) == kMarkerVariables.end()) {
            at_ = start;
            bool word = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
            fail(word ? "unknown marker variable '" + std::string(name) + "'"
                      : "expected a marker variable or a quoted string");
        }
    }

    void read_operator() {
        skip_space();
        for (std::string_view op : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"}) {
            if (text_.substr(at_).starts_with(op)) {
                at_ += op.size();
                return;
            }
        }
        if (eat_keyword("in")) {
            return;
        }
        std::size_t before = at_;
        if (eat_keyword("not")) {
            std::size_t after_not = at_;
            skip_space();
            if (at_ > after_not && eat_keyword("in")) {
                return;
            }
            at_ = before;
        }
        fail("expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
    }

    std::string_view text_;
    std::size_t base_;
    std::size_t at_ = 0;
};

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

    std::string read_marker() {
        ++at_;  // ';'
        skip_space();
        std::size_t start = at_;
        std::size_t end = text_.size();
        while (end > start && is_space(text_[end - 1])) {
            --end;
        }
        if (start == end) {
            fail("expected a marker after ';'");
        }
        std::string_view marker = text_.substr(start, end - start);
        MarkerChecker(marker, start).run();
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
