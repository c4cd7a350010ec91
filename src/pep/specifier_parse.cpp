// PEP 440 specifiers, text in and out: parsing "==2.10.*" or ">=2.11.0.dev0,<3" and the
// normalized spelling. What each operator admits is in specifier.cpp.

#include "pep/specifier.hpp"

#include <algorithm>
#include <array>

namespace stackup::pep {

namespace {

using Op = Specifier::Op;

struct OpSpelling {
    std::string_view text;
    Op op;
};

// Longer spellings first: "===" before "==", "<=" before "<".
constexpr std::array<OpSpelling, 8> kOps{{
    {"===", Op::arbitrary},
    {"~=", Op::compatible},
    {"==", Op::equal},
    {"!=", Op::not_equal},
    {"<=", Op::less_equal},
    {">=", Op::greater_equal},
    {"<", Op::less},
    {">", Op::greater},
}};

std::string_view op_text(Op op) {
    for (const auto& spelling : kOps) {
        if (spelling.op == op) {
            return spelling.text;
        }
    }
    return "";
}

std::nullopt_t fail(std::string* error, std::string_view text, std::string_view why) {
    if (error) {
        *error = "invalid specifier '" + std::string(text) + "': " + std::string(why);
    }
    return std::nullopt;
}

// Why `v` cannot follow the operator ("" when it can).
std::string_view version_problem(Op op, bool wildcard, const Version& v) {
    bool local = !v.local_segments().empty();
    if (wildcard && (v.pre() || v.post() || v.dev() || local)) {
        return "'.*' may only follow release numbers (as in ==2.10.*)";
    }
    if (local && op != Op::equal && op != Op::not_equal) {
        return "a local version label (+...) is only allowed with == and !=";
    }
    if (op == Op::compatible && v.release().size() < 2) {
        return "~= needs a version with at least two release numbers (~=2.10)";
    }
    return "";
}

}  // namespace

std::optional<Specifier> Specifier::parse(std::string_view text, std::string* error) {
    std::string_view t = strip_whitespace(text);
    auto spelling = std::find_if(kOps.begin(), kOps.end(), [&](const OpSpelling& s) { return t.starts_with(s.text); });
    if (spelling == kOps.end()) {
        return fail(error, t, "expected an operator (==, !=, <=, >=, <, >, ~=, ===) before the version");
    }
    std::string_view rest = strip_whitespace(t.substr(spelling->text.size()));
    if (rest.empty()) {
        return fail(error, t, "missing version after '" + std::string(spelling->text) + "'");
    }
    if (has_whitespace(rest)) {
        return fail(error, t, "white space inside the version");
    }
    Specifier s;
    s.op_ = spelling->op;
    s.version_ = std::string(rest);
    if (s.op_ == Op::arbitrary) {
        if (rest.find_first_of(";)") != std::string_view::npos) {
            return fail(error, t, "';' and ')' cannot appear in a === version");
        }
        s.target_ = Version::parse(rest);  // may stay nullopt: === compares strings
        return s;
    }
    s.wildcard_ = rest.ends_with(".*");
    if (s.wildcard_ && s.op_ != Op::equal && s.op_ != Op::not_equal) {
        return fail(error, t, "a '.*' suffix is only allowed with == and !=");
    }
    std::string_view body = s.wildcard_ ? rest.substr(0, rest.size() - 2) : rest;
    s.target_ = Version::parse(body);
    if (!s.target_ || strip_whitespace(body).size() != body.size()) {
        return fail(error, t, "'" + std::string(body) + "' is not a valid PEP 440 version");
    }
    if (auto why = version_problem(s.op_, s.wildcard_, *s.target_); !why.empty()) {
        return fail(error, t, why);
    }
    return s;
}

std::string Specifier::str() const {
    if (op_ == Op::arbitrary) {
        return "===" + version_;
    }
    return std::string(op_text(op_)) + target_->str() + (wildcard_ ? ".*" : "");
}

std::optional<SpecifierSet> SpecifierSet::parse(std::string_view text, std::string* error) {
    SpecifierSet set;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = std::min(text.find(',', start), text.size());
        std::string_view item = strip_whitespace(text.substr(start, comma - start));
        start = comma + 1;
        if (item.empty()) {
            continue;  // packaging skips empty items (">=1.0,,<2")
        }
        auto spec = Specifier::parse(item, error);
        if (!spec) {
            return std::nullopt;
        }
        set.specifiers_.push_back(std::move(*spec));
    }
    return set;
}

std::string SpecifierSet::str() const {
    std::string out;
    for (const auto& spec : specifiers_) {
        out += (out.empty() ? "" : ",") + spec.str();
    }
    return out;
}

}  // namespace stackup::pep
