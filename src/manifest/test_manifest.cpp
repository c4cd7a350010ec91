// The manifest parser: the document, the top level and its sections (venv, cuda, indexes,
// checks, env, snapshot), loading files, and the manifests shipped in manifests/. Steps,
// packages, removals and expectations are in test_manifest_steps.cpp.

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "base/sha256.hpp"
#include "manifest/manifest.hpp"
#include "manifest/test_manifest_helpers.hpp"
#include "manifest/text.hpp"
#include "temp_dir.hpp"

namespace m = stackup::manifest;
using namespace stackup::manifest::testing;
using stackup::Error;
using stackup::ExitCode;

namespace {

// The example of PRODUCT.md, "Manifest, schema version 1", verbatim.
const std::string product_manifest = R"(version: 1
name: cuda13-sglang
venv: ~/ml-env                  # ~ and ${VAR} expanded; --venv overrides
python: "3.12"                  # optional: required interpreter major.minor
cuda:                           # optional
  toolkit: "13.0"               # what <home>/bin/nvcc --version must report
  home: /usr/local/cuda-13.0    # default /usr/local/cuda-<toolkit>; exported as CUDA_HOME to installs
  driver: ">=580.65.06"         # optional minimum driver (nvidia-smi); absent driver: warning
  require_driver: false         # true: an absent driver fails preflight
indexes:                        # name: PEP 503 / PEP 691 simple-API root
  pytorch: https://download.pytorch.org/whl/nightly/cu130
  sglang: https://docs.sglang.ai/whl/cu130
  pypi: https://mirror.example/simple          # PyPI itself, or your mirror of it
default_index: pypi             # where dependencies not on a step's index come from;
                                # without it a step installs only from its own index
steps:                          # applied in this order
  - name: torch
    index: pytorch
    packages: [torch, torchvision, torchaudio]   # PEP 508 requirements
    prerelease: true            # admit .dev/.a/.b/.rc versions (nightlies)
    expect:                     # checked after this step AND after every later one
      torch: {version: ">=2.11.0.dev0", local: cu130, cuda: "13.0"}
      torchvision: {local: cu130}
      torchaudio: {local: cu130}
  - name: sglang
    index: pypi
    packages: ["sglang==0.5.6"]
    expect:
      sglang: {version: "==0.5.6"}
  - name: sgl-kernel
    index: sglang
    packages: [sgl-kernel]
    deps: false                 # install with --no-deps
    expect:
      sgl-kernel: {local: cu130}
checks:                         # run after the last step, in the venv's python
  - name: torch reports CUDA 13.0
    python: "import torch; assert torch.version.cuda == '13.0', torch.version.cuda"
allow_mixed: []                 # dists allowed to carry another CUDA's build
env: {}                         # extra variables for the installer (PIP_*/UV_* of the caller are not passed)
snapshot:
  keep: 3                       # snapshots kept per venv
)";

}  // namespace

TEST_SUITE("manifest") {
    TEST_CASE("the manifest of PRODUCT.md parses to its typed values") {
        m::Manifest man = m::parse(product_manifest, "m.yaml", options());
        CHECK(man.version == 1);
        CHECK(man.name == "cuda13-sglang");
        CHECK(man.source == "m.yaml");
        CHECK(man.digest == stackup::base::sha256_hex(product_manifest));
        CHECK(man.venv == "/home/u/ml-env");
        CHECK(man.python == "3.12");
        REQUIRE(man.cuda.has_value());
        CHECK(man.cuda->toolkit == "13.0");
        CHECK(man.cuda->home == "/usr/local/cuda-13.0");
        REQUIRE(man.cuda->driver.has_value());
        CHECK(man.cuda->driver->contains("580.65.06"));
        CHECK_FALSE(man.cuda->driver->contains("570.1"));
        CHECK_FALSE(man.cuda->require_driver);
        CHECK(man.indexes == std::map<std::string, std::string>{
                                 {"pytorch", "https://download.pytorch.org/whl/nightly/cu130"},
                                 {"sglang", "https://docs.sglang.ai/whl/cu130"},
                                 {"pypi", "https://mirror.example/simple"}});
        CHECK(man.default_index == "pypi");
        REQUIRE(man.checks.size() == 1);
        CHECK(man.checks[0].name == "torch reports CUDA 13.0");
        CHECK(man.checks[0].python == "import torch; assert torch.version.cuda == '13.0', torch.version.cuda");
        CHECK(man.allow_mixed.empty());
        CHECK(man.env.empty());
        CHECK(man.snapshot_keep == 3);
    }

    TEST_CASE("the manifest of PRODUCT.md parses to its typed steps") {
        m::Manifest man = m::parse(product_manifest, "m.yaml", options());
        REQUIRE(man.steps.size() == 3);

        const m::Step& torch = man.steps[0];
        CHECK(torch.name == "torch");
        CHECK(torch.index == "pytorch");
        REQUIRE(torch.packages.size() == 3);
        CHECK(torch.packages[0].name == "torch");
        CHECK(torch.packages[2].name == "torchaudio");
        CHECK(torch.prerelease);
        CHECK(torch.deps);
        CHECK(torch.where == stackup::SourceLocation{"m.yaml", 17, 5});
        REQUIRE(torch.expect.size() == 3);
        CHECK(torch.expect[0].dist == "torch");
        CHECK(torch.expect[0].where == stackup::SourceLocation{"m.yaml", 22, 7});
        REQUIRE(torch.expect[0].version.has_value());
        CHECK(torch.expect[0].version->contains("2.11.0.dev20251230+cu130", stackup::pep::Prereleases::allow));
        CHECK_FALSE(torch.expect[0].version->contains("2.10.0+cu128", stackup::pep::Prereleases::allow));
        CHECK(torch.expect[0].local == "cu130");
        CHECK(torch.expect[0].cuda == "13.0");
        CHECK_FALSE(torch.expect[0].import_name.has_value());
        CHECK(torch.expect[1].dist == "torchvision");
        CHECK_FALSE(torch.expect[1].version.has_value());

        const m::Step& sglang = man.steps[1];
        REQUIRE(sglang.packages.size() == 1);
        CHECK(sglang.packages[0].name == "sglang");
        CHECK(sglang.packages[0].specifier.contains("0.5.6"));
        CHECK_FALSE(sglang.packages[0].specifier.contains("0.5.7"));
        CHECK_FALSE(sglang.prerelease);

        const m::Step& kernel = man.steps[2];
        CHECK(kernel.index == "sglang");
        CHECK_FALSE(kernel.deps);
        REQUIRE(kernel.expect.size() == 1);
        CHECK(kernel.expect[0].dist == "sgl-kernel");
    }

    TEST_CASE("optional parts take their defaults") {
        m::Manifest man = m::parse(minimal, "dir/small.yaml", options());
        CHECK(man.name == "small");  // the file's stem
        CHECK_FALSE(man.python.has_value());
        CHECK_FALSE(man.cuda.has_value());
        CHECK_FALSE(man.default_index.has_value());
        CHECK(man.snapshot_keep == 3);
        CHECK(man.steps[0].deps);
        CHECK_FALSE(man.steps[0].prerelease);
        CHECK(man.steps[0].expect.empty());
        CHECK(man.checks.empty());
    }

    TEST_CASE("unknown keys are caught at every level, with suggestions") {
        check_failure("version: 1\nvenvv: /x\n", 2, 1, "unknown key 'venvv' at the top level (did you mean 'venv'?)");
        check_failure(minimal + "default-index: pypi\n", 9, 1, "(did you mean 'default_index'?)");
        check_failure(minimal + "cuda:\n  toolkit: '13.0'\n  require-driver: true\n", 11, 3,
                      "unknown key 'require-driver' in 'cuda' (did you mean 'require_driver'?)");
        check_failure(minimal + "    expect:\n      six: {verison: '>=1'}\n", 10, 13,
                      "unknown key 'verison' in the expectation for 'six' in step 'one' (did you mean 'version'?)");
        check_failure(minimal + "snapshot: {kep: 2}\n", 9, 12, "unknown key 'kep' in 'snapshot' (did you mean 'keep'?)");
        check_failure(minimal + "checks:\n  - name: c\n    pyhton: 'import six'\n", 11, 5,
                      "unknown key 'pyhton' in check #1 (did you mean 'python'?)");
    }

    TEST_CASE("an unknown key with no near match lists the known ones") {
        check_failure(minimal + "frobnicate: 1\n", 9, 1,
                      "unknown key 'frobnicate' at the top level (known keys: version, name, venv,");
    }

    TEST_CASE("default_index must be a defined index") {
        check_failure(minimal + "default_index: pipy\n", 9, 16,
                      "default_index 'pipy' is not defined under 'indexes' (defined: pypi)");
    }

    TEST_CASE("only schema version 1 is read") {
        check_failure("version: 2\nsteps: {}\nnew_key: 1\n", 1, 10,
                      "unsupported manifest version 2 (this stackup reads version 1)");
        check_failure("venv: /x\n", 1, 1, "missing 'version' (this stackup reads version 1)");
        check_failure("venv: /x\nverison: 1\n", 2, 1, "unknown key 'verison' at the top level (did you mean 'version'?)");
        check_failure("version: 1.0\n", 1, 10, "unsupported manifest version 1.0");
    }

    TEST_CASE("no venv is an error unless --venv gives one") {
        const std::string text = "version: 1\nindexes: {pypi: 'https://pypi.example/simple'}\n"
                                 "steps: [{name: a, index: pypi, packages: [six]}]\n";
        check_failure(text, 1, 1, "no venv: set 'venv' in the manifest or pass --venv");
        m::ParseOptions o = options();
        o.venv_override = "/opt/env/";
        CHECK(m::parse(text, "m.yaml", o).venv == "/opt/env");
    }

    TEST_CASE("--venv replaces the manifest's venv, which is then not expanded") {
        std::string text = minimal;
        text.replace(text.find("/srv/env"), 8, "${UNSET_IN_TEST}/env");
        m::ParseOptions o = options();
        o.venv_override = "/opt/env";
        CHECK(m::parse(text, "m.yaml", o).venv == "/opt/env");
        check_failure(text, 2, 7, "'venv': environment variable 'UNSET_IN_TEST' is not set");
    }

    TEST_CASE("~ and ${VAR} are expanded in venv and cuda.home") {
        std::string text = minimal;
        text.replace(text.find("/srv/env"), 8, "~/envs/${ENV_NAME}");
        text += "cuda:\n  toolkit: 13.0\n  home: ${CUDA_ROOT}/cuda-13.0\n";
        m::Manifest man = m::parse(text, "m.yaml",
                                   options({{"HOME", "/home/u"}, {"ENV_NAME", "ml"}, {"CUDA_ROOT", "/opt"}}));
        CHECK(man.venv == "/home/u/envs/ml");
        CHECK(man.cuda->home == "/opt/cuda-13.0");
        check_failure(text, 11, 9, "'home': environment variable 'CUDA_ROOT' is not set",
                      options({{"HOME", "/home/u"}, {"ENV_NAME", "ml"}}));
        check_failure(text, 2, 7, "'venv': cannot expand '~': HOME is not set", options({}));
    }

    TEST_CASE("malformed ${ and ~user are errors") {
        std::string error;
        CHECK_FALSE(m::expand_vars("${HOME", fake_env(), &error).has_value());
        CHECK(error.find("malformed variable reference '${HOME'") != std::string::npos);
        CHECK_FALSE(m::expand_vars("${1X}", fake_env(), &error).has_value());
        CHECK_FALSE(m::expand_path_text("~bob/env", fake_env(), &error).has_value());
        CHECK(error.find("'~bob'") != std::string::npos);
        CHECK(m::expand_path_text("a$b/${HOME}~", fake_env(), &error) == "a$b//home/u~");
        CHECK(m::expand_path_text("~", fake_env(), &error) == "/home/u");
        CHECK(m::expand_vars("~/x", fake_env(), &error) == "~/x");  // URLs get ${VAR} only
    }

    TEST_CASE("a relative venv is taken from the manifest's directory") {
        stackup::testing::TempDir dir;
        std::string text = minimal;
        text.replace(text.find("/srv/env"), 8, "../envs/./ml/");
        auto path = dir.write("conf/stack.yaml", text);
        m::Manifest man = m::load(path, options());
        CHECK(man.venv == dir.path() / "envs/ml");
        CHECK(man.source == path);
        CHECK(man.name == "stack");
        CHECK(man.digest == stackup::base::sha256_file(path));
    }

    TEST_CASE("cuda.home defaults to /usr/local/cuda-<toolkit>") {
        m::Manifest man = m::parse(minimal + "cuda: {toolkit: '12.8'}\n", "m.yaml", options());
        CHECK(man.cuda->home == "/usr/local/cuda-12.8");
        CHECK_FALSE(man.cuda->driver.has_value());
        check_failure(minimal + "cuda: {home: /opt/cuda}\n", 9, 7, "missing 'toolkit' in 'cuda'");
        check_failure(minimal + "cuda: {toolkit: 13}\n", 9, 17, "expected 'toolkit' as MAJOR.MINOR, like \"13.0\", got '13'");
    }

    TEST_CASE("cuda.arch: compute capabilities, each once, else an error at the item") {
        m::Manifest man = m::parse(minimal + "cuda: {toolkit: '13.0', arch: ['12.0', 9.0, '12.0', '10.3']}\n", "m.yaml",
                                   options());
        CHECK(man.cuda->arch == std::vector<std::string>{"12.0", "9.0", "10.3"});
        CHECK(m::parse(minimal + "cuda: {toolkit: '13.0'}\n", "m.yaml", options()).cuda->arch.empty());
        check_failure(minimal + "cuda: {toolkit: '13.0', arch: ['sm_90']}\n", 9, 32,
                      "expected a compute capability in 'arch' as MAJOR.MINOR, like \"12.0\"");
        check_failure(minimal + "cuda: {toolkit: '13.0', arch: ['12.10']}\n", 9, 32, "got '12.10'");
        check_failure(minimal + "cuda: {toolkit: '13.0', arch: '12.0'}\n", 9, 31, "arch");
    }

    TEST_CASE("scalars keep the text they were written with") {
        std::string text = minimal + "    expect:\n      six: {attrs: {__version__: 1.10, version.cuda: '13.0'}, cuda: 13.0}\n" +
               "python: 3.10\ncuda:\n  toolkit: 13.0\nenv:\n  MAX_JOBS: 8\n  UV_HTTP_TIMEOUT: \"120\"\n  FLAG: true\n";
        m::Manifest man = m::parse(text, "m.yaml", options());
        CHECK(man.python == "3.10");
        CHECK(man.cuda->toolkit == "13.0");
        CHECK(man.cuda->home == "/usr/local/cuda-13.0");
        CHECK(man.env == std::map<std::string, std::string>{{"MAX_JOBS", "8"}, {"UV_HTTP_TIMEOUT", "120"}, {"FLAG", "true"}});
        const m::Expectation& e = man.steps[0].expect.at(0);
        CHECK(e.cuda == "13.0");
        CHECK(e.attrs == std::map<std::string, std::string>{{"__version__", "1.10"}, {"version.cuda", "13.0"}});
    }

    TEST_CASE("python must be MAJOR.MINOR") {
        check_failure(minimal + "python: '3'\n", 9, 9, "expected 'python' as MAJOR.MINOR, like \"3.12\", got '3'");
        check_failure(minimal + "python: [3, 12]\n", 9, 9, "expected a string for 'python', got a list");
    }

    TEST_CASE("duplicate keys are errors") {
        check_failure(minimal + "venv: /other\n", 9, 1, "duplicate key 'venv' at the top level (first at line 2)");
        check_failure(minimal + "    index: pypi\n", 9, 5, "duplicate key 'index' in step 'one' (first at line 7)");
        check_failure(minimal + "    expect: {six: {local: cu130, local: cu128}}\n", 9, 34,
                      "duplicate key 'local' in the expectation for 'six'");
    }

    TEST_CASE("index URLs must be http, https or file, and are never echoed") {
        check_failure("version: 1\nvenv: /x\nindexes:\n  pypi: ftp://user:secret@host/simple\n", 4, 9,
                      "index 'pypi' has scheme 'ftp' (expected http, https or file)");
        Failure f = parse_failure("version: 1\nvenv: /x\nindexes:\n  pypi: ftp://user:secret@host/simple\n");
        CHECK(f.message.find("secret") == std::string::npos);
        check_failure("version: 1\nvenv: /x\nindexes:\n  pypi: pypi.example/simple\n", 4, 9, "index 'pypi' is not a URL");
        check_failure("version: 1\nvenv: /x\nindexes:\n  pypi: https:///simple\n", 4, 9, "index 'pypi' has no host");
        std::string ok = "version: 1\nvenv: /x\nindexes:\n  local: file:///srv/wheels\n  auth: https://u:t@h.example/simple\n"
                         "steps: [{name: a, index: local, packages: [six]}]\n";
        CHECK(m::parse(ok, "m.yaml", options()).indexes.at("auth") == "https://u:t@h.example/simple");
    }

    TEST_CASE("${VAR} is expanded in index URLs, and an unset one is an error") {
        const std::string text = "version: 1\nvenv: /x\nindexes:\n  demo: ${DEMO_ROOT}/cu130/\n"
                                 "steps: [{name: a, index: demo, packages: [six]}]\n";
        m::Manifest man = m::parse(text, "m.yaml", options({{"DEMO_ROOT", "http://127.0.0.1:8700"}}));
        CHECK(man.indexes.at("demo") == "http://127.0.0.1:8700/cu130/");
        check_failure(text, 4, 9, "index 'demo': environment variable 'DEMO_ROOT' is not set");
    }

    TEST_CASE("YAML syntax errors carry file:line:col") {
        check_failure("version: 1\nsteps: [a, b\n", 3, 1, "invalid YAML: end of sequence flow not found");
        check_failure("version: 1\n  venv: /x\n", 2, 7, "invalid YAML: illegal map value");
        check_failure("", 1, 1, "the manifest is empty");
        check_failure(minimal + "---\nversion: 1\n", 9, 1, "a manifest is a single YAML document");  // at its ---
        // yaml-cpp's LoadAll reads a lone ',' as empty documents forever (found by fuzz_manifest).
        check_failure(",", 1, 1, "invalid YAML: unexpected ','");
        check_failure("# a comment\n  ,\n", 2, 3, "invalid YAML: unexpected ','");
        check_failure("- version: 1\n", 1, 1, "expected a map at the top level, got a list");
    }

    TEST_CASE("snapshot.keep is a positive integer") {
        CHECK(m::parse(minimal + "snapshot:\n  keep: 7\n", "m.yaml", options()).snapshot_keep == 7);
        check_failure(minimal + "snapshot:\n  keep: 0\n", 10, 9, "expected a positive integer for 'keep', got '0'");
        check_failure(minimal + "snapshot:\n  keep: three\n", 10, 9, "expected a positive integer for 'keep', got 'three'");
    }

    TEST_CASE("checks, allow_mixed and env are validated") {
        m::Manifest man = m::parse(minimal + "allow_mixed: [Nvidia_NCCL_cu12, nvidia-nccl-cu12]\n"
                                             "checks:\n  - {name: a, python: 'import six'}\n",
                                   "m.yaml", options());
        CHECK(man.allow_mixed == std::vector<std::string>{"nvidia-nccl-cu12"});
        CHECK(man.checks.at(0).where == stackup::SourceLocation{"m.yaml", 11, 5});
        check_failure(minimal + "checks:\n  - {name: a, python: x}\n  - {name: a, python: y}\n", 11, 12,
                      "duplicate check name 'a' (first at line 10)");
        check_failure(minimal + "checks:\n  - {name: a}\n", 10, 5, "missing 'python' in check #1");
        check_failure(minimal + "allow_mixed: [-x]\n", 9, 15, "'-x' in 'allow_mixed' is not a distribution name");
        check_failure(minimal + "env: {1X: a}\n", 9, 7, "'1X' in 'env' is not an environment variable name");
        check_failure(minimal + "env: {A: [1]}\n", 9, 10, "expected a string for 'A', got a list");
    }

    TEST_CASE("allow_unmet is a list of distribution names") {
        m::Manifest man = m::parse(minimal + "allow_unmet: [SGL_Kernel]\n", "m.yaml", options());
        CHECK(man.allow_unmet == std::vector<std::string>{"sgl-kernel"});
        check_failure(minimal + "allow_unmet: [-x]\n", 9, 15, "'-x' in 'allow_unmet' is not a distribution name");
    }

    TEST_CASE("an unreadable manifest file is a usage error without a location") {
        stackup::testing::TempDir dir;
        try {
            m::load(dir / "missing.yaml");
            FAIL("loaded a missing file");
        } catch (const Error& e) {
            CHECK(e.code() == ExitCode::usage);
            CHECK_FALSE(e.where().has_value());
            CHECK(std::string(e.what()).find("missing.yaml") != std::string::npos);
        }
        CHECK_THROWS_AS(m::load(dir.path()), Error);
    }

    TEST_CASE("errors from load() name the file as given") {
        stackup::testing::TempDir dir;
        auto path = dir.write("bad.yaml", "version: 1\nvenv: [x]\n");
        try {
            m::load(path, options());
            FAIL("loaded a bad manifest");
        } catch (const Error& e) {
            CHECK(e.describe() == path.string() + ":2:7: expected a string for 'venv', got a list");
        }
    }

    TEST_CASE("read_input: at most max_input_bytes, a directory and an endless file are exit 2") {
        stackup::testing::TempDir dir;
        std::string fits(m::max_input_bytes, '#');
        CHECK(m::read_input(dir.write("fits.yaml", fits), "manifest").size() == m::max_input_bytes);
        auto refused = [](const std::filesystem::path& path, const std::string& words) {
            try {
                (void)m::read_input(path, "manifest");
                FAIL("read " << path);
            } catch (const Error& e) {
                CHECK(e.code() == ExitCode::usage);
                CHECK(e.describe() == "cannot read manifest '" + path.string() + "': " + words);
            }
        };
        const std::string over = "it holds more than 1 MiB, the most a manifest or plan may hold (is it the right file?)";
        refused(dir.write("over.yaml", fits + "\n"), over);
        refused("/dev/zero", over);
        refused(dir.path(), "it is a directory");
        refused(dir / "missing.yaml", "No such file or directory");
    }

    TEST_CASE("manifests/seed-cu130.yaml parses to the real stack") {
        m::ParseOptions o = options({{"HOME", "/home/u"}, {"STACKUP_REAL_INDEX", "https://pypi.example/simple"}});
        m::Manifest man = m::load(stackup::testing::source_dir() / "manifests/seed-cu130.yaml", o);
        CHECK(man.venv == "/home/u/ml-env");
        CHECK(man.cuda->toolkit == "13.0");
        CHECK(man.indexes.at("pytorch") == "https://download.pytorch.org/whl/nightly/cu130");
        CHECK(man.indexes.at("sglang") == "https://docs.sglang.ai/whl/cu130");
        CHECK(man.indexes.at("pypi") == "https://pypi.example/simple");  // ${STACKUP_REAL_INDEX}
        std::vector<std::string> names;
        for (const auto& step : man.steps) {
            names.push_back(step.name);
        }
        CHECK(names == std::vector<std::string>{"sglang", "torch", "flashinfer", "sgl-kernel"});
        CHECK(man.steps[1].index == "pytorch");
        CHECK(man.steps[1].prerelease);
        CHECK(man.steps[2].index == "pytorch");
        CHECK(man.steps[3].index == "sglang");
        CHECK_FALSE(man.steps[3].deps);
        CHECK(man.steps[3].expect.at(0).local == "cu130");
    }

    TEST_CASE("every manifest in manifests/ parses") {
        // demo.yaml takes its venv and index root from variables its script sets, seed-cu130.yaml
        // its PyPI from the one the real-index scripts read.
        m::ParseOptions o = options({{"HOME", "/home/u"},
                                     {"STACKUP_DEMO_INDEX", "http://127.0.0.1:8700"},
                                     {"STACKUP_REAL_INDEX", "https://pypi.example/simple"}});
        o.venv_override = "/opt/env";
        int count = 0;
        for (const auto& entry : std::filesystem::directory_iterator(stackup::testing::source_dir() / "manifests")) {
            if (entry.path().extension() == ".yaml") {
                INFO(entry.path().string());
                CHECK_NOTHROW(m::load(entry.path(), o));
                ++count;
            }
        }
        CHECK(count >= 1);
    }

    TEST_CASE("suggestions come from a small edit distance") {
        CHECK(m::edit_distance("expect", "expcet") == 1);
        CHECK(m::edit_distance("kitten", "sitting") == 3);
        CHECK(m::closest_match("prerelase", {"prerelease", "deps"}) == "prerelease");
        CHECK(m::closest_match("xyz", {"env", "name"}) == std::nullopt);
        CHECK(m::closest_match("nam", {"env", "name"}) == "name");
    }
}
