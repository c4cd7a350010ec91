// The manifest parser on 'steps': names, indexes, packages, removals and expectations.

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "manifest/manifest.hpp"
#include "manifest/test_manifest_helpers.hpp"

namespace m = stackup::manifest;
using namespace stackup::manifest::testing;

TEST_SUITE("manifest") {
    TEST_CASE("unknown key in a step suggests the near one") {
        check_failure(minimal + "    expct:\n      six: {}\n", 9, 5,
                      "unknown key 'expct' in step 'one' (did you mean 'expect'?)");
    }

    TEST_CASE("an undefined index names the defined ones") {
        const std::string text = R"(version: 1
venv: /srv/env
indexes:
  pytorch: https://download.pytorch.org/whl/nightly/cu130
  sglang: https://docs.sglang.ai/whl/cu130
  pypi: https://pypi.example/simple
steps:
  - name: torch
    index: pytroch
    packages: [torch]
)";
        check_failure(text, 9, 12,
                      "index 'pytroch' is not defined under 'indexes' (defined: pytorch, sglang, pypi); "
                      "did you mean 'pytorch'?");
    }

    TEST_CASE("a bad version specifier names the field and the dist") {
        check_failure(minimal + "    expect:\n      torch: {version: '>=2.11..0'}\n", 10, 24,
                      "'version' of 'torch': invalid specifier '>=2.11..0': '2.11..0' is not a valid PEP 440 version");
        check_failure(minimal + "    expect:\n      torch: {version: '>=2,<1'}\n", 10, 24,
                      "'version' of 'torch': '>=2,<1' can never be satisfied");
        check_failure(minimal + "cuda:\n  toolkit: '13.0'\n  driver: 'new'\n", 11, 11, "'driver': invalid specifier 'new'");
    }

    TEST_CASE("a bad requirement names the step") {
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: [torch, 'sglang==']\n", 11, 23,
                      "'packages' of step 'two': invalid requirement 'sglang=='");
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: [six, Six]\n", 11, 21,
                      "'packages' of step 'two' names 'Six' twice (first at line 11)");
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: ['six @ https://x.org/six.whl']\n", 11, 16,
                      "is a direct URL requirement");
    }

    TEST_CASE("booleans are true or false") {
        check_failure(minimal + "    prerelease: maybe\n", 9, 17, "expected a boolean for 'prerelease', got 'maybe'");
        check_failure(minimal + "    deps:\n", 9, 5, "expected a boolean for 'deps', got nothing");
        m::Manifest man = m::parse(minimal + "    prerelease: True\n    deps: false\n", "m.yaml", options());
        CHECK(man.steps[0].prerelease);
        CHECK_FALSE(man.steps[0].deps);
    }

    TEST_CASE("steps must list at least one step") {
        check_failure("version: 1\nvenv: /x\nindexes: {pypi: 'https://pypi.example/simple'}\nsteps: []\n", 4, 8,
                      "'steps' must list at least one step");
        check_failure("version: 1\nvenv: /x\nindexes: {pypi: 'https://pypi.example/simple'}\n", 1, 1,
                      "'steps' must list at least one step");
        check_failure("version: 1\nvenv: /x\nindexes: {pypi: 'https://pypi.example/simple'}\nsteps:\n", 4, 1,
                      "'steps' must list at least one step");
    }

    TEST_CASE("a step needs a name, an index and packages") {
        check_failure("version: 1\nvenv: /x\nindexes: {pypi: 'https://pypi.example/simple'}\nsteps:\n  - index: pypi\n", 5, 5,
                      "missing 'name' in step #1");
        check_failure("version: 1\nvenv: /x\nindexes: {pypi: 'https://pypi.example/simple'}\nsteps:\n  - name: a\n", 5, 5,
                      "missing 'index' in step 'a'");
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: []\n", 11, 15,
                      "'packages' of step 'two' must list at least one requirement (or the step must 'remove' or 'expect' something)");
        check_failure(minimal + "  - name: two\n    index: pypi\n", 9, 5, "missing 'packages' in step 'two'");
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: six\n", 11, 15,
                      "expected a list for 'packages', got 'six'");
    }

    TEST_CASE("step names are unique") {
        check_failure(minimal + "  - name: one\n    index: pypi\n    packages: [six]\n", 9, 11,
                      "duplicate step name 'one' (first at line 6)");
    }

    TEST_CASE("expect keys are PEP 503-normalized; two spellings of one dist are an error") {
        m::Manifest man = m::parse(minimal + "    expect:\n      Sgl_Kernel: {local: CU130}\n", "m.yaml", options());
        CHECK(man.steps[0].expect[0].dist == "sgl-kernel");
        CHECK(man.steps[0].expect[0].local == "cu130");
        check_failure(minimal + "    expect:\n      sgl-kernel: {}\n      sgl_kernel: {local: cu130}\n", 11, 7,
                      "'expect' of step 'one' names 'sgl-kernel' twice ('sgl-kernel' at line 10)");
        check_failure(minimal + "    expect:\n      -bad-: {}\n", 10, 7, "'-bad-' in 'expect' of step 'one' is not a distribution name");
    }

    TEST_CASE("expectation fields are checked") {
        check_failure(minimal + "    expect:\n      torch: {local: +cu130}\n", 10, 22, "the label without '+'");
        check_failure(minimal + "    expect:\n      torch: {cuda: 'thirteen'}\n", 10, 21, "'cuda' of 'torch' must be a CUDA version");
        check_failure(minimal + "    expect:\n      torch: {import: 'torch-x'}\n", 10, 23, "'import' of 'torch' must be a module name");
        check_failure(minimal + "    expect:\n      torch: {attrs: {'a b': x}}\n", 10, 23, "'a b' is not a dotted attribute name");
        check_failure(minimal + "    expect:\n      torch: [1]\n", 10, 14, "expected a map for 'torch', got a list");
        m::Manifest man = m::parse(minimal + "    expect:\n      sgl-kernel:\n        import: sgl_kernel\n      six:\n",
                                   "m.yaml", options());
        CHECK(man.steps[0].expect[0].import_name == "sgl_kernel");
        CHECK(man.steps[0].expect[1].dist == "six");  // an empty expectation: installed and importable
    }

    TEST_CASE("remove: names and patterns, normalized; a step may only remove") {
        m::Manifest man = m::parse(minimal + "    remove: [\"nvidia-*-CU12\", Cupy_Cuda12x]\n"
                                             "  - name: clean\n    index: pypi\n    remove: [torch]\n",
                                   "m.yaml", options());
        CHECK(man.steps[0].remove == std::vector<std::string>{"nvidia-*-cu12", "cupy-cuda12x"});
        CHECK(man.steps[1].packages.empty());
        CHECK(man.steps[1].remove == std::vector<std::string>{"torch"});
        CHECK(m::removal_matches(man.steps[0].remove[0], "nvidia-cuda-runtime-cu12"));

        check_failure(minimal + "    remove: []\n", 9, 13, "'remove' of step 'one' is empty");
        check_failure(minimal + "    remove: [\"*\"]\n", 9, 14, "'*' is not a distribution name or a pattern of one");
        check_failure(minimal + "    remove: [\"nvidia/*\"]\n", 9, 14,
                      "'nvidia/*' is not a distribution name or a pattern of one");
        check_failure(minimal + "    remove: [torch, Torch]\n", 9, 21, "'remove' of step 'one' names 'Torch' twice");
        check_failure(minimal + "    remove: torch\n", 9, 13, "expected a list for 'remove', got 'torch'");
    }

    TEST_CASE("a step may only expect: packages empty or absent, nothing installed") {
        m::Manifest man = m::parse(minimal + "  - name: baseline\n    index: pypi\n"
                                             "    expect:\n      torch: {version: \"==2.10.0+cu128\", local: cu128}\n"
                                             "  - name: again\n    index: pypi\n    packages: []\n"
                                             "    expect: {triton: {}}\n",
                                   "m.yaml", options());
        REQUIRE(man.steps.size() == 3);
        CHECK(man.steps[1].packages.empty());
        CHECK(man.steps[1].remove.empty());
        REQUIRE(man.steps[1].expect.size() == 1);
        CHECK(man.steps[1].expect[0].dist == "torch");
        CHECK(man.steps[1].expect[0].local == "cu128");
        CHECK(man.steps[2].packages.empty());
        REQUIRE(man.steps[2].expect.size() == 1);
        CHECK(man.steps[2].expect[0].dist == "triton");

        // An empty expect is no expectation: such a step still needs packages.
        check_failure(minimal + "  - name: two\n    index: pypi\n    expect: {}\n", 9, 5,
                      "missing 'packages' in step 'two'");
        check_failure(minimal + "  - name: two\n    index: pypi\n    packages: []\n    expect: {}\n", 11, 15,
                      "'packages' of step 'two' must list at least one requirement (or the step must 'remove' or 'expect' "
                      "something)");
        // The index is still required and still checked, though nothing is fetched from it.
        check_failure(minimal + "  - name: two\n    expect: {torch: {}}\n", 9, 5, "missing 'index' in step 'two'");
        check_failure(minimal + "  - name: two\n    index: nowhere\n    expect: {torch: {}}\n", 10, 12,
                      "index 'nowhere' is not defined under 'indexes'");
    }
}
