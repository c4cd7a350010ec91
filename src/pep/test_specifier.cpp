// PEP 440 specifiers against pypa/packaging's own test tables (fixtures/pep440/),
// plus hand-written CUDA-stack cases.
//
// How packaging's arguments map onto this API:
// - Specifier(spec, prereleases=X) / SpecifierSet(spec, prereleases=X): our types carry
//   no such setting, so X is passed to the call instead. That is faithful: in packaging
//   a call's own prereleases argument, when not None, overrides the constructor's.
// - contains(..., installed=True): packaging then admits an installed pre-release
//   whatever the prereleases setting, so it maps onto Prereleases::allow.
// - Specifier.filter(): a one-specifier SpecifierSet filters identically.

#include <doctest/doctest.h>

#include <map>

#include "fixtures.hpp"
#include "pep/specifier.hpp"
#include "temp_dir.hpp"

using stackup::pep::Prereleases;
using stackup::pep::Specifier;
using stackup::pep::SpecifierSet;
using stackup::pep::Version;
using stackup::testing::Row;

namespace {

using Flags = std::map<std::string, std::string>;

std::filesystem::path pep440(std::string_view file) { return stackup::testing::fixtures_dir() / "pep440" / file; }

// "class=Specifier;spec_prereleases=True" -> {class: Specifier, spec_prereleases: True}
Flags parse_flags(const std::string& text) {
    Flags flags;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = std::min(text.find(';', start), text.size());
        std::string item = text.substr(start, end - start);
        std::size_t eq = item.find('=');
        REQUIRE_MESSAGE(eq != std::string::npos, "bad flag: ", item);
        flags[item.substr(0, eq)] = item.substr(eq + 1);
        start = end + 1;
    }
    return flags;
}

// A Python True/False/None flag; None and absent are both "not given".
std::optional<Prereleases> flag(const Flags& flags, const std::string& key) {
    auto it = flags.find(key);
    if (it == flags.end() || it->second == "None") {
        return std::nullopt;
    }
    REQUIRE_MESSAGE((it->second == "True" || it->second == "False"), key, "=", it->second);
    return it->second == "True" ? Prereleases::allow : Prereleases::deny;
}

// The call's argument wins over the constructor's, as in packaging.
Prereleases effective(const Flags& flags, const std::string& call_key) {
    if (flag(flags, "installed") == Prereleases::allow) {
        return Prereleases::allow;
    }
    return flag(flags, call_key).value_or(flag(flags, "spec_prereleases").value_or(Prereleases::unset));
}

std::vector<std::string> split_bar(const std::string& text) {
    std::vector<std::string> out;
    if (text.empty()) {
        return out;
    }
    std::size_t start = 0;
    while (true) {
        std::size_t bar = text.find('|', start);
        out.push_back(text.substr(start, bar == std::string::npos ? bar : bar - start));
        if (bar == std::string::npos) {
            return out;
        }
        start = bar + 1;
    }
}

SpecifierSet set_of(const std::string& text) {
    std::string error;
    auto set = SpecifierSet::parse(text, &error);
    REQUIRE_MESSAGE(set, error);
    return *set;
}

bool contains_case(const Row& row, const Flags& flags) {
    const std::string& spec = row[0];
    const std::string& version = row[1];
    Prereleases pre = effective(flags, "contains_prereleases");
    std::optional<Version> object;
    if (flags.count("version_object") != 0) {  // packaging passed Version(version), not the string
        object = Version::parse(version);
        REQUIRE(object);
    }
    if (flags.at("class") == "Specifier") {
        auto s = Specifier::parse(spec);
        REQUIRE(s);
        return object ? s->contains(*object, pre) : s->contains(version, pre);
    }
    SpecifierSet set = set_of(spec);
    return object ? set.contains(*object, pre) : set.contains(version, pre);
}

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("specifiers_valid.txt: every specifier parses") {
        auto lines = stackup::testing::read_lines(pep440("specifiers_valid.txt"));
        CHECK(lines.size() == 9);
        for (const auto& text : lines) {
            std::string error;
            CHECK_MESSAGE(Specifier::parse(text, &error), text, ": ", error);
        }
    }

    TEST_CASE("test_specifiers_normalized: an operator before every valid version") {
        auto versions = stackup::testing::read_lines(pep440("versions_valid.txt"));
        CHECK(versions.size() == 270);
        for (const auto& text : versions) {
            auto v = Version::parse(text);
            REQUIRE(v);
            std::vector<std::string> ops{"==", "!="};
            if (v->local().empty()) {
                ops.insert(ops.end(), {"~=", "<=", ">=", "<", ">"});
            }
            for (const auto& op : ops) {
                INFO("specifier: ", op, text);
                auto s = Specifier::parse(op + text);
                REQUIRE(s);
                CHECK(s->str() == op + v->str());
                bool inclusive = op == "==" || op == "~=" || op == "<=" || op == ">=";
                CHECK(s->contains(*v, Prereleases::allow) == inclusive);
            }
        }
    }

    TEST_CASE("specifiers_invalid.txt: every specifier is rejected, with a reason") {
        auto lines = stackup::testing::read_lines(pep440("specifiers_invalid.txt"));
        CHECK(lines.size() == 31);
        for (const auto& text : lines) {
            INFO("specifier: ", text);
            std::string error;
            CHECK_FALSE(Specifier::parse(text, &error));
            CHECK(error.starts_with("invalid specifier '"));
            CHECK_FALSE(SpecifierSet::parse(">=0.1," + text));
        }
    }

    TEST_CASE("specifier_cases.tsv: contains() in packaging's 15 sections and the CUDA one") {
        auto sections = stackup::testing::read_tsv_sections(pep440("specifier_cases.tsv"));
        CHECK(sections.size() == 15 + 1);
        std::size_t packaging_rows = 0;
        std::size_t computed_rows = 0;
        for (const auto& section : sections) {
            CHECK_MESSAGE(!section.rows.empty(), section.title);
            bool computed = section.title.find("COMPUTED") != std::string::npos;
            for (const auto& row : section.rows) {
                ++(computed ? computed_rows : packaging_rows);
                REQUIRE(row.size() == 4);
                Flags flags = parse_flags(row[3]);
                INFO(section.title);
                INFO("spec '", row[0], "' version '", row[1], "' flags ", row[3]);
                REQUIRE((row[2] == "true" || row[2] == "false"));
                CHECK(contains_case(row, flags) == (row[2] == "true"));
            }
        }
        CHECK(packaging_rows == 706);
        CHECK(computed_rows == 32);  // the CUDA-stack rows appended to the file
    }

    TEST_CASE("specifier_filter_cases.tsv: filter() keeps order and the pre-release rule") {
        auto rows = stackup::testing::read_tsv(pep440("specifier_filter_cases.tsv"));
        CHECK(rows.size() == 142);
        for (const auto& row : rows) {
            REQUIRE(row.size() == 4);
            Flags flags = parse_flags(row[3]);
            INFO("spec '", row[0], "' input '", row[1], "' flags ", row[3]);
            if (flags.at("class") == "Specifier") {
                REQUIRE(Specifier::parse(row[0]));
            }
            SpecifierSet set = set_of(row[0]);
            CHECK(set.filter(split_bar(row[1]), effective(flags, "filter_prereleases")) == split_bar(row[2]));
        }
    }

    TEST_CASE("specifier_satisfiable.tsv: is_satisfiable()") {
        auto rows = stackup::testing::read_tsv(pep440("specifier_satisfiable.tsv"));
        CHECK(rows.size() == 208);
        for (const auto& row : rows) {
            REQUIRE(row.size() == 3);
            Flags flags = parse_flags(row[2]);
            INFO("set '", row[0], "' flags ", row[2]);
            CHECK(set_of(row[0]).is_satisfiable(effective(flags, "spec_prereleases")) == (row[1] == "true"));
        }
    }

    TEST_CASE("CUDA stack: nightlies, local builds and ==X.*") {
        auto at_least_nightly = set_of(">=2.11.0.dev0");
        CHECK(at_least_nightly.contains("2.11.0.dev20251230+cu130"));
        CHECK(at_least_nightly.contains("2.11.0.dev20251230+cu130", Prereleases::allow));
        CHECK_FALSE(at_least_nightly.contains("2.11.0.dev20251230+cu130", Prereleases::deny));
        CHECK_FALSE(at_least_nightly.contains("2.10.0+cu130"));

        // A public pin matches every local build of it; a local pin only itself.
        CHECK(set_of("==2.10.0").contains("2.10.0+cu128"));
        CHECK(set_of("==2.10.0+cu128").contains("2.10.0+cu128"));
        CHECK_FALSE(set_of("==2.10.0+cu128").contains("2.10.0+cu130"));
        CHECK_FALSE(set_of("==2.10.0+cu128").contains("2.10.0"));
        CHECK_FALSE(set_of("!=2.10.0").contains("2.10.0+cu128"));
        CHECK(set_of("!=2.10.0+cu128").contains("2.10.0+cu130"));

        // The "Audited" trap: an old build satisfies a loose range but not the nightly floor.
        CHECK(set_of(">=2.10").contains("2.10.0+cu128"));
        CHECK_FALSE(set_of(">2.10.0").contains("2.10.0+cu128"));
        CHECK(set_of("==2.11.*").contains("2.11.0.dev20251230+cu130"));
        CHECK_FALSE(set_of("<2.11").contains("2.11.0.dev20251230+cu130"));
        CHECK(set_of("<2.11.0.dev20251231").contains("2.11.0.dev20251230+cu130"));
        CHECK(set_of("~=2.10").contains("2.11.0.dev20251230+cu130"));
        CHECK_FALSE(set_of("~=2.10.0").contains("2.11.0.dev20251230+cu130"));
        CHECK(set_of(">=580.65.06").contains("580.95.05"));

        // A nightly index lists finals and nightlies: unset keeps only finals when any match.
        std::vector<std::string> listing{"2.10.0+cu130", "2.11.0.dev20251230+cu130", "2.11.0.dev20251231+cu130"};
        CHECK(set_of(">=2.10").filter(listing) == std::vector<std::string>{"2.10.0+cu130"});
        CHECK(set_of(">=2.11.0.dev0").filter(listing) ==
              std::vector<std::string>{"2.11.0.dev20251230+cu130", "2.11.0.dev20251231+cu130"});
        CHECK(set_of(">=2.10").filter(listing, Prereleases::allow) == listing);
    }

    TEST_CASE("str() is the normalized spelling") {
        CHECK(Specifier::parse(">= 2.11.0.DEV0")->str() == ">=2.11.0.dev0");
        CHECK(Specifier::parse("==v2.10.*")->str() == "==2.10.*");
        CHECK(Specifier::parse("~=2.0")->str() == "~=2.0");  // trailing zeros matter for ~=
        CHECK(Specifier::parse("===FooBar")->str() == "===FooBar");
        CHECK(Specifier::parse("==1.0+CU130")->str() == "==1.0+cu130");
        CHECK(Specifier::parse(" >=1.0 ")->version_text() == "1.0");
        CHECK(Specifier::parse("==2.10.*")->is_wildcard());
        CHECK(set_of(" >=2.11.0.dev0 , <3 ").str() == ">=2.11.0.dev0,<3");
        CHECK(set_of(">=1.0,,<2").specifiers().size() == 2);
        CHECK(set_of("").empty());
        CHECK(set_of("").str().empty());
        CHECK(set_of(">=1,<2") == set_of(">=1, <2"));
    }

    TEST_CASE("names_prerelease(): the operators packaging's `prereleases` property counts") {
        CHECK(Specifier::parse(">=2.11.0.dev0")->names_prerelease());
        CHECK(Specifier::parse("<2.0a1")->names_prerelease());
        CHECK(Specifier::parse("===1.0rc1")->names_prerelease());
        CHECK_FALSE(Specifier::parse("!=2.0a1")->names_prerelease());
        CHECK_FALSE(Specifier::parse(">=2.11")->names_prerelease());
        CHECK_FALSE(Specifier::parse("==2.11.*")->names_prerelease());
        CHECK_FALSE(Specifier::parse("===foobar")->names_prerelease());
    }

    TEST_CASE("parse errors say why") {
        std::string error;
        CHECK_FALSE(Specifier::parse("2.0", &error));
        CHECK(error == "invalid specifier '2.0': expected an operator (==, !=, <=, >=, <, >, ~=, ===) before the version");
        CHECK_FALSE(Specifier::parse(">=", &error));
        CHECK(error == "invalid specifier '>=': missing version after '>='");
        CHECK_FALSE(Specifier::parse(">=1.0+cu130", &error));
        CHECK(error.find("only allowed with == and !=") != std::string::npos);
        CHECK_FALSE(Specifier::parse("~=1", &error));
        CHECK(error.find("two release numbers") != std::string::npos);
        CHECK_FALSE(Specifier::parse(">=1.0.*", &error));
        CHECK(error.find("'.*'") != std::string::npos);
        CHECK_FALSE(Specifier::parse("==1.0 .*", &error));
        CHECK_FALSE(Specifier::parse(">=1.0 abc", &error));
        CHECK(error.find("white space") != std::string::npos);
        CHECK_FALSE(SpecifierSet::parse(">=1.0,<2.x", &error));
        CHECK(error == "invalid specifier '<2.x': '2.x' is not a valid PEP 440 version");
    }

    TEST_CASE("text that is not a version: only === and the empty set accept it") {
        CHECK_FALSE(set_of(">=1.0").contains("not a version"));
        CHECK(set_of("===not-a-version").contains("NOT-A-VERSION"));
        CHECK(set_of("").contains("not a version"));  // as filter() passes it through
        CHECK(set_of("").filter({"not a version"}) == std::vector<std::string>{"not a version"});
        CHECK(set_of("").contains("1.0.dev1"));
        CHECK_FALSE(set_of("").contains("1.0.dev1", Prereleases::deny));
    }

    TEST_CASE("is_satisfiable: boundaries of pre-, post- and local releases") {
        CHECK(set_of(">=2.11.0.dev0,<2.12").is_satisfiable());
        CHECK_FALSE(set_of(">=2.11,<2.11.0.dev5").is_satisfiable());
        CHECK_FALSE(set_of("==2.10.*,>=2.11.0.dev0").is_satisfiable());
        CHECK(set_of("==2.10.0+cu128,>=2.10").is_satisfiable());
        CHECK_FALSE(set_of("==2.10.0+cu128,==2.10.0+cu130").is_satisfiable());
        CHECK(set_of("!=2.10.0+cu128,==2.10.0").is_satisfiable());
        CHECK(set_of(">1.0,<1.1").is_satisfiable());          // 1.0.1 lies between
        CHECK(set_of(">1.0,<1.0.0.0.1").is_satisfiable());    // and 1.0.0.0.0.1 here
        CHECK_FALSE(set_of(">1.0,<1.0.0.0.1.dev0,!=1.0.0.0.0.*").is_satisfiable());
        CHECK(set_of(">=1.0.dev0,<1.0").is_satisfiable() == false);
        CHECK(set_of(">=0.9.dev0,<1.0").is_satisfiable(Prereleases::deny));
        CHECK_FALSE(set_of(">=1.0a1,<=1.0rc9").is_satisfiable(Prereleases::deny));
    }
}
