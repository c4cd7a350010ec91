// PEP 508 requirement strings: what parses into what, and what is refused and why.

#include <doctest/doctest.h>

#include "pep/requirement.hpp"

using stackup::pep::parse_requirement;
using stackup::pep::Prereleases;
using stackup::pep::Requirement;

namespace {

Requirement parsed(std::string_view text) {
    std::string error;
    auto req = parse_requirement(text, &error);
    REQUIRE_MESSAGE(req, text, ": ", error);
    return *req;
}

// The error for `text`, which must be refused.
std::string refusal(std::string_view text) {
    std::string error;
    auto req = parse_requirement(text, &error);
    CHECK_MESSAGE(!req, text, " parsed as ", req ? req->str() : "");
    return error;
}

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("requirement: name, extras, specifier, marker") {
        Requirement r = parsed("Torch_Vision[Opt, cuda] >=0.26.0.dev0, <1 ; python_version >= '3.10'");
        CHECK(r.name == "Torch_Vision");
        CHECK(r.normalized_name() == "torch-vision");
        CHECK(r.extras == std::vector<std::string>{"Opt", "cuda"});
        CHECK(r.specifier.str() == ">=0.26.0.dev0,<1");
        CHECK(r.url.empty());
        CHECK(r.marker == "python_version >= '3.10'");
        CHECK(r.str() == "Torch_Vision[Opt,cuda]>=0.26.0.dev0,<1; python_version >= '3.10'");
        CHECK(parsed(r.str()) == r);
    }

    TEST_CASE("requirement: the forms a manifest uses") {
        CHECK(parsed("torch").specifier.empty());
        CHECK(parsed("torch").str() == "torch");
        CHECK(parsed("sglang==0.5.6").specifier.contains("0.5.6"));
        CHECK(parsed("torch==2.11.0.dev20251230+cu130").str() == "torch==2.11.0.dev20251230+cu130");
        CHECK(parsed("torch>=2.11.0.dev0").specifier.contains("2.11.0.dev20251230+cu130", Prereleases::allow));
        CHECK(parsed("  sgl-kernel  ").name == "sgl-kernel");
        CHECK(parsed("name (>=1.0, <2)").specifier.str() == ">=1.0,<2");
        CHECK(parsed("name()").specifier.empty());
        CHECK(parsed("name[]").extras.empty());
        CHECK(parsed("name>=1.0;os_name=='posix'").marker == "os_name=='posix'");
        CHECK(parsed("name ; extra == 'cuda'").specifier.empty());
        CHECK(parsed("name>=1.0A1").str() == "name>=1.0a1");
    }

    TEST_CASE("requirement: name @ url") {
        const std::string url = "https://example.org/whl/sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl";
        Requirement r = parsed("sgl-kernel @ " + url + " ; sys_platform == 'linux'");
        CHECK(r.url == url);
        CHECK(r.specifier.empty());
        CHECK(r.marker == "sys_platform == 'linux'");
        CHECK(r.str() == "sgl-kernel @ " + r.url + " ; sys_platform == 'linux'");
        CHECK(parsed(r.str()) == r);
        CHECK(parsed("pkg[x]@file:///tmp/pkg-1.0-py3-none-any.whl").url == "file:///tmp/pkg-1.0-py3-none-any.whl");
    }

    TEST_CASE("requirement: marker grammar") {
        const char* markers[] = {
            "python_version < '3.13' and (platform_machine == 'x86_64' or platform_machine == \"aarch64\")",
            "'linux' in sys_platform",
            "platform_release not in '5.15'",
            "python_full_version === '3.12.1'",
            "implementation_version ~= '3.12'",
            "extra == 'test' or extra=='dev'",
            "((os_name == 'posix'))",
            "platform_python_implementation=='CPython'and python_version>'3'",
            "os.name == 'posix'",
            "'a' == 'b'",
            "python_version>='3.10'",
        };
        for (const char* marker : markers) {
            CHECK(parsed(std::string("name; ") + marker).marker == marker);
        }
    }

    TEST_CASE("requirement: refusals name what is wrong and where") {
        CHECK(refusal("") == "invalid requirement '': empty requirement at column 1");
        CHECK(refusal("[cuda]") == "invalid requirement '[cuda]': expected a project name at column 1");
        CHECK(refusal("torch-") ==
              "invalid requirement 'torch-': invalid project name 'torch-' (letters, digits, -_. ; starting and "
              "ending with a letter or digit) at column 1");
        CHECK(refusal("-torch").find("invalid project name '-torch'") != std::string::npos);
        CHECK(refusal("torch>>2") ==
              "invalid requirement 'torch>>2': invalid specifier '>>2': '>2' is not a valid PEP 440 version at column 6");
        CHECK(refusal("torch==2.0 extra") ==
              "invalid requirement 'torch==2.0 extra': invalid specifier '==2.0 extra': white space inside the "
              "version at column 6");
        CHECK(refusal("torch>=1,") ==
              "invalid requirement 'torch>=1,': expected a version specifier between the commas at column 10");
        CHECK(refusal("torch[cuda") == "invalid requirement 'torch[cuda': expected ',' or ']' in the extras at column 11");
        CHECK(refusal("torch[cuda,]").find("expected an extra name at column 12") != std::string::npos);
        CHECK(refusal("torch (>=1") == "invalid requirement 'torch (>=1': expected ')' to close the '(' at column 7");
        CHECK(refusal("torch @ ") == "invalid requirement 'torch @': expected a URL after '@' at column 8");
        CHECK(refusal("torch @ ./local.whl") ==
              "invalid requirement 'torch @ ./local.whl': invalid URL './local.whl' at column 9");
        CHECK(refusal("torch @ https://x/y.whl extra") ==
              "invalid requirement 'torch @ https://x/y.whl extra': expected ';' (after white space) or the end "
              "after the URL at column 25");
        CHECK(refusal("torch;") == "invalid requirement 'torch;': expected a marker after ';' at column 7");
    }

    TEST_CASE("requirement: marker refusals") {
        CHECK(refusal("torch; python_versoin < '3'") ==
              "invalid requirement 'torch; python_versoin < '3'': unknown marker variable 'python_versoin' at column 8");
        CHECK(refusal("torch; python_version < 3") ==
              "invalid requirement 'torch; python_version < 3': expected a marker variable or a quoted string at "
              "column 25");
        CHECK(refusal("torch; python_version = '3'").find("expected a marker operator") != std::string::npos);
        CHECK(refusal("torch; python_version < '3").find("unterminated string at column 25") != std::string::npos);
        CHECK(refusal("torch; (os_name == 'nt'").find("expected ')' to close the '('") != std::string::npos);
        CHECK(refusal("torch; os_name == 'nt' and").find("expected a marker variable or a quoted string") !=
              std::string::npos);
        CHECK(refusal("torch; os_name == 'nt' xor os_name == 'posix'").find("expected 'and', 'or'") !=
              std::string::npos);
        CHECK(refusal("torch; os_name notin 'nt'").find("expected a marker operator") != std::string::npos);
        CHECK(refusal("torch; os_name == 'nt' andos_name == 'x'").find("expected 'and', 'or'") != std::string::npos);
    }
}
