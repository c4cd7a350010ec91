// PEP 508 markers against a Linux CPython 3.12 environment; most rows are pypa/packaging's
// tests/test_markers.py cases (packaging >= 26 semantics), the rest pin each operator.

#include <doctest/doctest.h>

#include <vector>

#include "marker_env.hpp"
#include "pep/marker.hpp"

using stackup::pep::evaluate_marker;
using stackup::pep::MarkerEnvironment;
using stackup::testing::linux_cpython312;

namespace {

MarkerEnvironment with(MarkerEnvironment overrides) {
    MarkerEnvironment env = linux_cpython312();
    for (auto& [name, value] : overrides) {
        env[name] = value;
    }
    return env;
}

struct Case {
    std::string_view marker;
    MarkerEnvironment overrides;
    bool expected;
};

struct Refusal {
    std::string_view marker;
    std::string_view error;
};

const std::vector<Case> kCases = {
    // Version variables compare as PEP 440 versions.
    {"python_version == '3.12'", {}, true},
    {"python_version == '3.12.0'", {}, true},  // zero padding: a string compare says false
    {"python_version != '3.11'", {}, true},
    {"python_version != '3.12.0'", {}, false},
    {"python_version < '3.13'", {}, true},
    {"python_version < '3.12'", {}, false},
    {"python_version <= '3.12'", {}, true},
    {"python_version <= '3.11'", {}, false},
    {"python_version > '3.9'", {}, true},  // as strings, "3.12" > "3.9" is false
    {"python_version > '3.12'", {}, false},
    {"python_version >= '3.10'", {}, true},
    {"python_version >= '3.13'", {}, false},
    {"python_full_version ~= '3.12.0'", {}, true},
    {"python_full_version ~= '3.11.0'", {}, false},
    {"python_full_version === '3.12.3'", {}, true},
    {"python_full_version === '3.12.03'", {}, false},  // === compares the text
    {"python_version == '3.*'", {}, true},
    {"python_version != '3.12.*'", {}, false},
    {"implementation_version ~= '3.12'", {}, true},
    {"platform_release >= '5.15'", {}, true},
    {"platform_release >= '5.15'", {{"platform_release", "6.8.0-45-generic"}}, false},  // not a version
    {"python_version>='3.10'", {}, true},
    // Pre-releases are admitted; the specifier's own pre-release rules still hold.
    {"python_full_version > \"3.6.2\"", {{"python_full_version", "3.11.0a5"}}, true},
    {"python_full_version >= '3.13'", {{"python_full_version", "3.13.0rc1"}}, false},
    {"python_full_version < '3.13'", {{"python_full_version", "3.13.0rc1"}}, false},
    {"python_full_version >= '3.13.0rc1'", {{"python_full_version", "3.13.0rc1"}}, true},
    // An untagged build's "3.11.1+" is read as 3.11.1+local.
    {"python_full_version < '3.12'", {{"python_full_version", "3.11.1+"}}, true},
    // The variable on the right: the literal is the candidate, the variable's value the specifier.
    {"'3.8' < python_version", {}, true},
    {"'3.13' < python_version", {}, false},
    {"'3.12.0' == python_version", {}, true},
    {"\"2.7.9\" < python_full_version", {{"python_full_version", "2.7.10"}}, true},
    {"\"2.7.9\" < python_full_version", {{"python_full_version", "2.7.8"}}, false},
    {"'3.13' >= python_version", {}, true},
    {"'3.11' < python_version", {{"python_version", "3.9"}}, false},  // as strings, "3.11" < "3.9"
    // A version variable whose other side is no specifier falls back to strings.
    {"python_version == 'dog'", {}, false},
    {"python_version == 'dog'", {{"python_version", "dog"}}, true},
    {"python_version <= 'dog'", {{"python_version", "dog"}}, true},
    {"python_version < 'dog'", {{"python_version", "cat"}}, false},
    {"\"b\" < python_full_version", {{"python_full_version", "c"}}, false},
    {"\"b\" < python_full_version", {{"python_full_version", "a"}}, false},
    // Other variables are strings even when they look like versions: no order, <= and >= mean ==.
    {"os_name == 'posix'", {}, true},
    {"os_name == \"nt\"", {}, false},
    {"os_name != 'nt'", {}, true},
    {"os_name != 'posix'", {}, false},
    {"os_name <= 'posix'", {}, true},
    {"os_name >= 'posix'", {}, true},
    {"os_name >= 'a'", {}, false},
    {"os_name <= 'z'", {}, false},
    {"os_name < 'z'", {}, false},
    {"os_name > 'a'", {}, false},
    {"sys_platform == '1.0.0'", {{"sys_platform", "1.0"}}, false},
    {"sys_platform < '2'", {{"sys_platform", "1"}}, false},
    // Two literals compare as strings (packaging instead looks the right one up as a variable name).
    {"\"b\" > \"a\"", {}, false},
    {"\"b\" < \"a\"", {}, false},
    {"\"b\" >= \"a\"", {}, false},
    {"\"b\" <= \"a\"", {}, false},
    {"\"a\" <= \"a\"", {}, true},
    // Membership is a substring test, on version variables too.
    {"'linux' in sys_platform", {}, true},
    {"'lin' in sys_platform", {}, true},
    {"'win' in sys_platform", {}, false},
    {"sys_platform in 'linux2 darwin'", {}, true},
    {"sys_platform in 'win32 cygwin'", {}, false},
    {"'win' not in sys_platform", {}, true},
    {"'linux' not in sys_platform", {}, false},
    {"'2.7' in python_version", {{"python_version", "2.7.5"}}, true},
    {"'2.7' not in python_version", {{"python_version", "2.7"}}, false},
    {"'a' in 'abc'", {}, true},
    {"platform_version not in 'Ubuntu'", {}, true},
    {"os_name not\tin 'nt'", {}, true},
    // `or` binds loosest; parentheses group.
    {"os_name == 'nt' and sys_platform == 'win32' or python_version >= '3'", {}, true},
    {"python_version >= '3' or os_name == 'nt' and sys_platform == 'win32'", {}, true},
    {"(python_version >= '3' or os_name == 'nt') and sys_platform == 'win32'", {}, false},
    {"python_version >= '3' and (os_name == 'nt' or sys_platform == 'linux')", {}, true},
    {"python_version >= '3' and (os_name == 'nt' or sys_platform == 'win32')", {}, false},
    {"os_name == 'foo' and python_version ~= '2.7.0'", {{"os_name", "foo"}, {"python_version", "2.7.6"}}, true},
    {"python_version ~= '2.7.0' and (os_name == 'foo' or os_name == 'bar')",
     {{"os_name", "foo"}, {"python_version", "2.7.4"}}, true},
    {"python_version ~= '2.7.0' and (os_name == 'foo' or os_name == 'bar')",
     {{"os_name", "bar"}, {"python_version", "2.7.4"}}, true},
    {"python_version ~= '2.7.0' and (os_name == 'foo' or os_name == 'bar')",
     {{"os_name", "other"}, {"python_version", "2.7.4"}}, false},
    {"((os_name == 'posix'))", {}, true},
    {"( os_name=='posix' )and(sys_platform=='linux')", {}, true},
    {"platform_python_implementation=='CPython'and python_version>'3'", {}, true},
    {"os_name == 'nt' or os_name == 'posix' or os_name == 'java'", {}, true},
    {"os_name == 'posix' and sys_platform == 'linux' and platform_machine == 'aarch64'", {}, false},
    // White space is spaces and tabs, anywhere between tokens.
    {"\tos_name\t==\t'posix'  ", {}, true},
    {"python_version >= \"3\" \t", {}, true},
    // Quotes do not nest: this is one comparison of a long literal with os_name.
    {"'a\" == os_name or python_version >= \"0\" or \"b' == os_name", {}, false},
    {"'a\" == os_name or python_version >= \"0\" or \"b' == os_name",
     {{"os_name", "a\" == os_name or python_version >= \"0\" or \"b"}}, true},
    // Two variables: both are looked up (packaging compares the left one's value with the right one's name).
    {"os_name == sys_platform", {{"sys_platform", "posix"}}, true},
    {"os_name == sys_platform", {}, false},
    {"python_full_version > python_version", {}, true},
    // Legacy spellings read the PEP 508 names.
    {"os.name == 'posix'", {}, true},
    {"sys.platform == 'win32'", {{"sys_platform", "linux2"}}, false},
    {"platform.version in 'Ubuntu'", {{"platform_version", "#39"}}, false},
    {"platform.machine=='x86_64'", {}, true},
    {"platform.python_implementation=='Jython'", {}, false},
    {"python_implementation=='Jython'", {}, false},
    {"python_implementation=='Jython'", {{"platform_python_implementation", "Jython"}}, true},
    {"python_version == '2.5' and platform.python_implementation!= 'Jython'", {{"python_version", "2.7"}}, false},
    // Extras compare PEP 503-normalized on both sides, and always as strings.
    {"extra == \"im_valid\"", {}, false},
    {"extra == 'security'", {{"extra", "quux"}}, false},
    {"extra == 'security'", {{"extra", "security"}}, true},
    {"extra == 'SECURITY'", {{"extra", "security"}}, true},
    {"extra == 'security'", {{"extra", "SECURITY"}}, true},
    {"extra == 'pep-685-norm'", {{"extra", "PEP_685...norm"}}, true},
    {"extra == 'Different.punctuation..is...equal'", {{"extra", "different__punctuation_is_EQUAL"}}, true},
    {"'S_P__A_M' == extra", {{"extra", "s-p-a-m"}}, true},
    {"extra != 'S_P__A_M'", {{"extra", "s-p-a-m"}}, false},
    {"(extra == \"Foo_Bar\" or extra == \"Baz\") and python_version >= \"3\"", {{"extra", "foo-bar"}}, true},
    {"extra == \"v2\"", {{"extra", ""}}, false},
    {"extra == \"v2\"", {{"extra", "v2"}}, true},
    {"extra == \"v2\"", {{"extra", "v2a3"}}, false},
    {"extra == \"v2a3\"", {{"extra", "v2"}}, false},
    {"extra == \"2.0\"", {{"extra", "2"}}, false},  // as versions they would be equal
    {"extra <= 'test'", {{"extra", "test"}}, true},
    {"extra < 'test'", {{"extra", "test"}}, false},
};

const std::vector<Refusal> kRefusals = {
    {"", "invalid marker '': expected a marker variable or a quoted string at column 1"},
    {"this_isnt_a_real_variable >= '1.0'",
     "invalid marker 'this_isnt_a_real_variable >= '1.0'': unknown marker variable 'this_isnt_a_real_variable' "
     "at column 1"},
    {"python_version",
     "invalid marker 'python_version': expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in) "
     "at column 15"},
    {"(python_version)",
     "invalid marker '(python_version)': expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in) "
     "at column 16"},
    {"python_version >= 1.0 and (python_version)",
     "invalid marker 'python_version >= 1.0 and (python_version)': expected a marker variable or a quoted string "
     "at column 19"},
    {"(python_version == \"2.7\" and os_name == \"linux\"",
     "invalid marker '(python_version == \"2.7\" and os_name == \"linux\"': expected ')' to close the '(' at column 48"},
    {"(python_version == \"2.7\") with random text",
     "invalid marker '(python_version == \"2.7\") with random text': expected 'and', 'or' or the end of the marker "
     "at column 27"},
    {"python_version >= \"3\"\n",
     "invalid marker 'python_version >= \"3\"\n': expected 'and', 'or' or the end of the marker at column 22"},
    {"os_name == \"C:\\\"",
     "invalid marker 'os_name == \"C:\\\"': a backslash in a quoted string (PEP 508 strings have no escapes) "
     "at column 15"},
    // packaging's tokenizer takes a line break inside quotes, its ast.literal_eval does not.
    {"os_name == 'pos\nix'", "invalid marker 'os_name == 'pos\nix'': a line break in a quoted string at column 16"},
    {"os_name == \"posix\r\"", "invalid marker 'os_name == \"posix\r\"': a line break in a quoted string at column 18"},
    {"os_name == 'posix", "invalid marker 'os_name == 'posix': unterminated string at column 12"},
    {"os_name = 'posix'",
     "invalid marker 'os_name = 'posix'': expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in) "
     "at column 9"},
    {"os_name notin 'posix'",
     "invalid marker 'os_name notin 'posix'': expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not "
     "in) at column 9"},
    {"os_name not 'posix'", "invalid marker 'os_name not 'posix'': expected 'in' after 'not' at column 13"},
    {"os_name == 'nt' and",
     "invalid marker 'os_name == 'nt' and': expected a marker variable or a quoted string at column 20"},
    {"os_name == 'nt' andos_name == 'x'",
     "invalid marker 'os_name == 'nt' andos_name == 'x'': expected 'and', 'or' or the end of the marker at column 17"},
    {"os_name == 'nt' xor os_name == 'posix'",
     "invalid marker 'os_name == 'nt' xor os_name == 'posix'': expected 'and', 'or' or the end of the marker at "
     "column 17"},
    {"python_version < 3",
     "invalid marker 'python_version < 3': expected a marker variable or a quoted string at column 18"},
    {"python.version == '3.12'",
     "invalid marker 'python.version == '3.12'': unknown marker variable 'python.version' at column 1"},
    // Comparisons that are undefined, found only when evaluating.
    {"'2.7.0' ~= os_name",
     "cannot evaluate marker ''2.7.0' ~= os_name': '~=' is undefined on '2.7.0' and 'posix' (only python_version, "
     "python_full_version, implementation_version and platform_release compare as versions) at column 1"},
    {"os_name ~= '2.7.0'",
     "cannot evaluate marker 'os_name ~= '2.7.0'': '~=' is undefined on 'posix' and '2.7.0' (only python_version, "
     "python_full_version, implementation_version and platform_release compare as versions) at column 1"},
    {"sys_platform === 'linux'",
     "cannot evaluate marker 'sys_platform === 'linux'': '===' is undefined on 'linux' and 'linux' (only "
     "python_version, python_full_version, implementation_version and platform_release compare as versions) at "
     "column 1"},
    {"python_version ~= '3'",
     "cannot evaluate marker 'python_version ~= '3'': '~=' is undefined on '3.12' and '3' (not a valid version "
     "specifier) at column 1"},
    {"os_name == 'nt' or python_version ~= 'dog'",
     "cannot evaluate marker 'os_name == 'nt' or python_version ~= 'dog'': '~=' is undefined on '3.12' and 'dog' "
     "(not a valid version specifier) at column 20"},
    // Every comparison is evaluated, as packaging does: a true `or` does not hide an error.
    {"os_name == 'posix' or os_name ~= '1.0'",
     "cannot evaluate marker 'os_name == 'posix' or os_name ~= '1.0'': '~=' is undefined on 'posix' and '1.0' (only "
     "python_version, python_full_version, implementation_version and platform_release compare as versions) at "
     "column 23"},
    {"'foo' in extras",
     "cannot evaluate marker ''foo' in extras': the environment has no value for 'extras' at column 10"},
};

// Every PEP 508 operator and every legacy spelling reaches a comparison.
const std::vector<std::string_view> kVariables = {
    "extra", "implementation_name", "implementation_version", "os_name", "platform_machine", "platform_release",
    "platform_system", "platform_version", "python_full_version", "python_version",
    "platform_python_implementation", "sys_platform", "os.name", "sys.platform", "platform.version",
    "platform.machine", "platform.python_implementation", "python_implementation",
};
const std::vector<std::string_view> kOperators = {"===", "==", ">=", "<=", "!=", "~=", ">", "<", "in", "not in"};
const std::vector<std::string_view> kValues = {
    "1.0", "5.6a0", "dog", "freebsd", "literally any string can go here", "things @#4 dsfd (((",
};

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("marker: evaluations") {
        for (const auto& c : kCases) {
            std::string error;
            auto result = evaluate_marker(c.marker, with(c.overrides), &error);
            INFO(c.marker);
            REQUIRE_MESSAGE(result, error);
            CHECK(*result == c.expected);
        }
    }

    TEST_CASE("marker: refusals name what is wrong and where") {
        for (const auto& r : kRefusals) {
            std::string error;
            auto result = evaluate_marker(r.marker, linux_cpython312(), &error);
            INFO(r.marker);
            CHECK_FALSE(result);
            CHECK(error == r.error);
        }
    }

    TEST_CASE("marker: every variable, operator and value parses, either way round") {
        for (auto variable : kVariables) {
            for (auto op : kOperators) {
                for (auto value : kValues) {
                    std::string quoted = "'" + std::string(value) + "'";
                    for (const std::string& marker : {std::string(variable) + " " + std::string(op) + " " + quoted,
                                                      quoted + " " + std::string(op) + " " + std::string(variable)}) {
                        std::string error;
                        auto result = evaluate_marker(marker, linux_cpython312(), &error);
                        INFO(marker);
                        CHECK((result || error.starts_with("cannot evaluate marker")));
                    }
                }
            }
        }
    }

    TEST_CASE("marker: a variable the environment lacks is an error; a missing extra is \"\"") {
        std::string error;
        CHECK_FALSE(evaluate_marker("python_version >= '3.10'", {}, &error));
        CHECK(error ==
              "cannot evaluate marker 'python_version >= '3.10'': the environment has no value for 'python_version' "
              "at column 1");
        CHECK_FALSE(evaluate_marker("os.name == 'posix'", {{"os.name", "posix"}}, &error));
        CHECK(error.ends_with("the environment has no value for 'os_name' at column 1"));
        CHECK(evaluate_marker("extra == 'test'", {}) == false);
        CHECK(evaluate_marker("extra != 'test'", {}) == true);
        CHECK(evaluate_marker("'foo' in extras", {{"extras", "foo,bar"}}) == true);
        CHECK(evaluate_marker("os_name == 'posix'", {}) == std::nullopt);  // no error pointer: no crash
    }
}
