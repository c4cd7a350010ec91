// PEP 508 markers: the text is parsed whole into a small tree, then every comparison in it
// is evaluated. Comparison rules are pypa/packaging's (>= 26): python_version,
// python_full_version, implementation_version and platform_release compare as PEP 440
// specifiers when the other side reads as one; all else compares as strings, where < and >
// are always false, <= and >= mean ==, and ~= and === are undefined.

#include "pep/marker.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "pep/name.hpp"
#include "pep/specifier.hpp"

namespace stackup::pep {

namespace {

// What is wrong, and the 0-based offset of the character at fault.
struct MarkerError {
    std::string what;
    std::size_t at;
};

enum class Op { arbitrary, equal, compatible, not_equal, less_equal, greater_equal, less, greater, in, not_in };

struct OpSpelling {
    std::string_view text;
    Op op;
};

// Longer spellings first: "===" before "==", "<=" before "<".
constexpr std::array<OpSpelling, 8> kSymbolOps{{
    {"===", Op::arbitrary},
    {"==", Op::equal},
    {"~=", Op::compatible},
    {"!=", Op::not_equal},
    {"<=", Op::less_equal},
    {">=", Op::greater_equal},
    {"<", Op::less},
    {">", Op::greater},
}};

struct VariableSpelling {
    std::string_view text;
    std::string_view key;  // the environment name it reads
};

// PEP 508's names, PEP 751's set-valued ones, and the legacy spellings packaging accepts.
constexpr std::array<VariableSpelling, 20> kVariables{{
    {"python_version", "python_version"},
    {"python_full_version", "python_full_version"},
    {"os_name", "os_name"},
    {"os.name", "os_name"},
    {"sys_platform", "sys_platform"},
    {"sys.platform", "sys_platform"},
    {"platform_release", "platform_release"},
    {"platform_system", "platform_system"},
    {"platform_version", "platform_version"},
    {"platform.version", "platform_version"},
    {"platform_machine", "platform_machine"},
    {"platform.machine", "platform_machine"},
    {"platform_python_implementation", "platform_python_implementation"},
    {"platform.python_implementation", "platform_python_implementation"},
    {"python_implementation", "platform_python_implementation"},
    {"implementation_name", "implementation_name"},
    {"implementation_version", "implementation_version"},
    {"extra", "extra"},
    {"extras", "extras"},
    {"dependency_groups", "dependency_groups"},
}};

constexpr std::array<std::string_view, 4> kVersionVariables{
    "python_version", "python_full_version", "implementation_version", "platform_release"};

bool is_space(char c) { return c == ' ' || c == '\t'; }  // packaging's WS; a line break is an error
bool is_word_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// One side of a comparison: an environment name, or the contents of a quoted string.
struct Operand {
    bool is_variable = false;
    std::string text;
    std::size_t at = 0;
};

struct Comparison {
    Operand lhs;
    Op op = Op::equal;
    std::string_view op_text;
    Operand rhs;
};

struct Expr {
    enum class Kind { comparison, all_of, any_of };
    Kind kind = Kind::comparison;
    Comparison comparison;        // for Kind::comparison
    std::vector<Expr> operands;   // for all_of (and) and any_of (or)
};

// marker := and ("or" and)* ; and := atom ("and" atom)* ; atom := "(" marker ")" | value op value
class MarkerParser {
public:
    explicit MarkerParser(std::string_view text) : text_(text) {}

    Expr run() {
        Expr tree = read_or();
        skip_space();
        if (at_ != text_.size()) {
            fail("expected 'and', 'or' or the end of the marker");
        }
        return tree;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw MarkerError{what, at_}; }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

    void skip_space() {
        while (is_space(peek())) {
            ++at_;
        }
    }

    // A keyword ends where a word does ("andy" is not "and").
    bool eat_keyword(std::string_view word) {
        skip_space();
        std::size_t end = at_ + word.size();
        if (!text_.substr(at_).starts_with(word) || (end < text_.size() && is_word_char(text_[end]))) {
            return false;
        }
        at_ = end;
        return true;
    }

    // A single operand comes back as itself, not wrapped.
    static Expr combine(Expr::Kind kind, std::vector<Expr> operands) {
        if (operands.size() == 1) {
            return std::move(operands.front());
        }
        Expr e;
        e.kind = kind;
        e.operands = std::move(operands);
        return e;
    }

    Expr read_or() {
        std::vector<Expr> alternatives{read_and()};
        while (eat_keyword("or")) {
            alternatives.push_back(read_and());
        }
        return combine(Expr::Kind::any_of, std::move(alternatives));
    }

    Expr read_and() {
        std::vector<Expr> terms{read_atom()};
        while (eat_keyword("and")) {
            terms.push_back(read_atom());
        }
        return combine(Expr::Kind::all_of, std::move(terms));
    }

    Expr read_atom() {
        skip_space();
        if (peek() == '(') {
            ++at_;
            Expr inner = read_or();
            skip_space();
            if (peek() != ')') {
                fail("expected ')' to close the '('");
            }
            ++at_;
            return inner;
        }
        Expr e;
        e.comparison.lhs = read_operand();
        read_operator(e.comparison);
        e.comparison.rhs = read_operand();
        return e;
    }

    Operand read_operand() {
        skip_space();
        Operand operand;
        operand.at = at_;
        char quote = peek();
        if (quote == '\'' || quote == '"') {
            std::size_t close = text_.find(quote, at_ + 1);
            if (close == std::string_view::npos) {
                fail("unterminated string");
            }
            std::string_view body = text_.substr(at_ + 1, close - at_ - 1);
            // packaging reads the literal with ast.literal_eval: a raw line break is an error there too.
            if (std::size_t bad = body.find_first_of("\\\r\n"); bad != std::string_view::npos) {
                at_ += 1 + bad;
                fail(body[bad] == '\\' ? "a backslash in a quoted string (PEP 508 strings have no escapes)"
                                       : "a line break in a quoted string");
            }
            operand.text = std::string(body);
            at_ = close + 1;
            return operand;
        }
        while (is_word_char(peek()) || peek() == '.') {
            ++at_;
        }
        std::string_view name = text_.substr(operand.at, at_ - operand.at);
        auto known = std::find_if(kVariables.begin(), kVariables.end(),
                                  [&](const VariableSpelling& v) { return v.text == name; });
        if (known == kVariables.end()) {
            at_ = operand.at;
            bool word = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
            fail(word ? "unknown marker variable '" + std::string(name) + "'"
                      : "expected a marker variable or a quoted string");
        }
        operand.is_variable = true;
        operand.text = std::string(known->key);
        return operand;
    }

    void read_operator(Comparison& c) {
        skip_space();
        for (const auto& spelling : kSymbolOps) {
            if (text_.substr(at_).starts_with(spelling.text)) {
                at_ += spelling.text.size();
                c.op = spelling.op;
                c.op_text = spelling.text;
                return;
            }
        }
        if (eat_keyword("in")) {
            c.op = Op::in;
            c.op_text = "in";
            return;
        }
        if (eat_keyword("not")) {
            std::size_t after_not = at_;
            skip_space();
            if (at_ == after_not || !eat_keyword("in")) {
                fail("expected 'in' after 'not'");
            }
            c.op = Op::not_in;
            c.op_text = "not in";
            return;
        }
        fail("expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

bool is_version_variable(std::string_view key) {
    return std::find(kVersionVariables.begin(), kVersionVariables.end(), key) != kVersionVariables.end();
}

std::string value_of(const Operand& operand, const MarkerEnvironment& env) {
    if (!operand.is_variable) {
        return operand.text;
    }
    auto it = env.find(operand.text);
    if (it == env.end()) {
        if (operand.text == "extra") {
            return "";  // packaging evaluates metadata with extra "" unless told otherwise
        }
        throw MarkerError{"the environment has no value for '" + operand.text + "'", operand.at};
    }
    // An untagged CPython build reports "3.12.1+", which is not PEP 440; packaging repairs it the same way.
    if (operand.text == "python_full_version" && it->second.ends_with('+')) {
        return it->second + "local";
    }
    return it->second;
}

// The variable that decides how to compare: the left one, else the right one (as packaging).
std::string_view deciding_variable(const Comparison& c) {
    if (c.lhs.is_variable) {
        return c.lhs.text;
    }
    return c.rhs.is_variable ? std::string_view(c.rhs.text) : std::string_view();
}

bool compare(const Comparison& c, const MarkerEnvironment& env) {
    std::string lhs = value_of(c.lhs, env);
    std::string rhs = value_of(c.rhs, env);
    std::string_view key = deciding_variable(c);
    bool extra = (c.lhs.is_variable && c.lhs.text == "extra") || (c.rhs.is_variable && c.rhs.text == "extra");
    if (extra) {
        lhs = normalize_name(lhs);  // PEP 685: extras compare normalized on both sides
        rhs = normalize_name(rhs);
    }
    bool membership = c.op == Op::in || c.op == Op::not_in;
    if (is_version_variable(key) && !membership) {
        if (auto spec = Specifier::parse(std::string(c.op_text) + rhs)) {
            return spec->contains(lhs, Prereleases::allow);
        }
    }
    switch (c.op) {
        case Op::equal:
        case Op::less_equal:
        case Op::greater_equal:
            return lhs == rhs;
        case Op::not_equal:
            return lhs != rhs;
        case Op::less:
        case Op::greater:
            return false;  // strings have no order in markers
        case Op::in:
            return rhs.find(lhs) != std::string::npos;
        case Op::not_in:
            return rhs.find(lhs) == std::string::npos;
        case Op::compatible:
        case Op::arbitrary:
            break;
    }
    throw MarkerError{"'" + std::string(c.op_text) + "' is undefined on '" + lhs + "' and '" + rhs + "' (" +
                          (is_version_variable(key)
                               ? "not a valid version specifier"
                               : "only python_version, python_full_version, implementation_version and "
                                 "platform_release compare as versions") +
                          ")",
                      c.lhs.at};
}

bool evaluate(const Expr& e, const MarkerEnvironment& env) {
    if (e.kind == Expr::Kind::comparison) {
        return compare(e.comparison, env);
    }
    // Every operand is evaluated, no short cut, so an error anywhere is reported as packaging does.
    bool all = true;
    bool any = false;
    for (const auto& operand : e.operands) {
        bool value = evaluate(operand, env);
        all = all && value;
        any = any || value;
    }
    return e.kind == Expr::Kind::all_of ? all : any;
}

std::nullopt_t refuse(std::string* error, std::string_view stage, std::string_view marker, const MarkerError& e) {
    if (error) {
        *error = std::string(stage) + " '" + std::string(marker) + "': " + e.what + " at column " +
                 std::to_string(e.at + 1);
    }
    return std::nullopt;
}

}  // namespace

std::optional<MarkerSyntaxError> marker_syntax_error(std::string_view marker) {
    try {
        MarkerParser(marker).run();
    } catch (const MarkerError& e) {
        return MarkerSyntaxError{e.what, e.at};
    }
    return std::nullopt;
}

std::optional<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& env, std::string* error) {
    std::optional<Expr> tree;
    try {
        tree = MarkerParser(marker).run();
    } catch (const MarkerError& e) {
        return refuse(error, "invalid marker", marker, e);
    }
    try {
        return evaluate(*tree, env);
    } catch (const MarkerError& e) {
        return refuse(error, "cannot evaluate marker", marker, e);
    }
}

}  // namespace stackup::pep
