#include <doctest/doctest.h>

#include <algorithm>

#include "base/argv.hpp"
#include "installer/command.hpp"
#include "installer/runner.hpp"
#include "manifest/environment.hpp"

using namespace stackup;

namespace {

manifest::Manifest two_index_manifest() {
    manifest::Manifest m;
    m.venv = "/srv/env";
    m.indexes = {{"pytorch", "http://127.0.0.1:9/pytorch/"}, {"pypi", "http://127.0.0.1:9/pypi/"}};
    m.default_index = "pypi";
    manifest::Step torch;
    torch.name = "torch";
    torch.index = "pytorch";
    torch.prerelease = true;
    torch.packages = {*pep::parse_requirement("torch"), *pep::parse_requirement("Torch_Vision>=0.26.0.dev0")};
    m.steps.push_back(torch);
    return m;
}

bool has_pair(const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == flag && argv[i + 1] == value) {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST_SUITE("installer") {
    TEST_CASE("a step's uv argv: its index first, the default index below, every package reinstalled") {
        auto m = two_index_manifest();
        auto argv = installer::install_argv(m, m.steps[0], "/state/requirements/step-1.txt", "/opt/uv", m.venv, installer::Mode::install);
        CHECK(std::vector<std::string>(argv.begin(), argv.begin() + 6) ==
              std::vector<std::string>{"/opt/uv", "pip", "install", "--python", "/srv/env/bin/python", "--no-config"});
        CHECK(has_pair(argv, "--index", "http://127.0.0.1:9/pytorch/"));
        CHECK(has_pair(argv, "--default-index", "http://127.0.0.1:9/pypi/"));
        CHECK(has_pair(argv, "--prerelease", "allow"));
        CHECK(has_pair(argv, "--reinstall-package", "torch"));
        CHECK(has_pair(argv, "--reinstall-package", "torch-vision"));
        CHECK(std::count(argv.begin(), argv.end(), "--no-deps") == 0);
        CHECK(std::count(argv.begin(), argv.end(), "--dry-run") == 0);
        CHECK(argv.end()[-2] == "--requirements");
        CHECK(argv.back() == "/state/requirements/step-1.txt");
    }

    TEST_CASE("a step's removals: uv pip uninstall of exactly the resolved names, hermetic like the install") {
        auto m = two_index_manifest();
        auto argv = installer::uninstall_argv({"nvidia-cublas-cu12", "nvidia-cuda-runtime-cu12"}, "/opt/uv", m.venv,
                                              installer::Mode::install);
        CHECK(std::vector<std::string>(argv.begin(), argv.begin() + 6) ==
              std::vector<std::string>{"/opt/uv", "pip", "uninstall", "--python", "/srv/env/bin/python", "--no-config"});
        CHECK(std::count(argv.begin(), argv.end(), "--dry-run") == 0);
        CHECK(argv.end()[-2] == "nvidia-cublas-cu12");
        CHECK(argv.back() == "nvidia-cuda-runtime-cu12");
        auto dry = installer::removal_invocation(m, {"torch"}, "uv", m.venv, {{"UV_INDEX_URL", "http://elsewhere/"}},
                                                 installer::Mode::dry_run);
        CHECK(std::count(dry.argv.begin(), dry.argv.end(), "--dry-run") == 1);
        CHECK(dry.env.count("UV_INDEX_URL") == 0);
        CHECK(dry.env.at("VIRTUAL_ENV") == "/srv/env");
    }

    TEST_CASE("without default_index a step installs only from its own index") {
        auto m = two_index_manifest();
        m.default_index.reset();
        m.steps[0].deps = false;
        m.steps[0].prerelease = false;
        auto argv = installer::install_argv(m, m.steps[0], "reqs.txt", "uv", m.venv, installer::Mode::dry_run);
        CHECK(has_pair(argv, "--default-index", "http://127.0.0.1:9/pytorch/"));
        CHECK(std::count(argv.begin(), argv.end(), "--index") == 0);
        CHECK(std::count(argv.begin(), argv.end(), "--no-deps") == 1);
        CHECK(std::count(argv.begin(), argv.end(), "--dry-run") == 1);
        CHECK(std::count(argv.begin(), argv.end(), "--prerelease") == 0);
        CHECK(argv.back() == "reqs.txt");  // the plan's pins are in the file, not the requirements as written
    }

    TEST_CASE("a requirements file line carries the sha256 uv must check") {
        CHECK(installer::requirement_line("torch==2.11.0+cu130", "ab12") == "torch==2.11.0+cu130 --hash=sha256:ab12");
        CHECK(installer::requirement_line("torch==2.11.0+cu130", "") == "torch==2.11.0+cu130");
        auto text = installer::requirements_text({"a==1 --hash=sha256:00", "b[x]==2; python_version >= \"3\""});
        CHECK(text.find("\na==1 --hash=sha256:00\nb[x]==2; python_version >= \"3\"\n") != std::string::npos);
        CHECK(text.rfind("#", 0) == 0);
    }

    TEST_CASE("the child environment drops the caller's PIP_* and UV_*, adds what we mean") {
        auto m = two_index_manifest();
        m.cuda = manifest::Cuda{"13.0", "/usr/local/cuda-13.0", std::nullopt, false, {}};
        m.env = {{"UV_CACHE_DIR", "/cache"}, {"EXTRA", "1"}};
        base::Environment caller{{"PATH", "/usr/bin"}, {"UV_INDEX_URL", "http://wrong/"}, {"PIP_FIND_LINKS", "/x"},
                                 {"VIRTUAL_ENV", "/other"}, {"PYTHONPATH", "/shadow"}, {"HOME", "/root"}};
        auto env = manifest::child_environment(m, m.venv, caller);
        CHECK(env.count("UV_INDEX_URL") == 0);
        CHECK(env.count("PIP_FIND_LINKS") == 0);
        CHECK(env.count("PYTHONPATH") == 0);
        CHECK(env.at("UV_CACHE_DIR") == "/cache");
        CHECK(env.at("EXTRA") == "1");
        CHECK(env.at("VIRTUAL_ENV") == "/srv/env");
        CHECK(env.at("CUDA_HOME") == "/usr/local/cuda-13.0");
        CHECK(env.at("PATH") == "/usr/bin");
        CHECK(env.at("HOME") == "/root");
    }

    TEST_CASE("credentials in URLs never reach a log line") {
        CHECK(base::render_argv({"uv", "--index", "https://u:p@h/", "torch>=2"}) ==
              "uv --index https://***@h/ 'torch>=2'");
        CHECK(base::render_argv({"see http://token@h/x and https://u:p@h2/"}) ==
              "'see http://***@h/x and https://***@h2/'");
        auto shown = manifest::masked({{"EXTRA_URL", "https://alice:s3cret@idx.example/simple"},
                                        {"PLAIN", "no creds: https://h/x?a=b@c"}});
        CHECK(shown.at("EXTRA_URL") == "https://***@idx.example/simple");
        CHECK(shown.at("PLAIN") == "no creds: https://h/x?a=b@c");
    }

    TEST_CASE("an index's credentials reach uv through its environment, never its argv") {
        auto m = two_index_manifest();
        m.indexes["pytorch"] = "http://bob:s%3Acret@127.0.0.1:9/pytorch/";
        m.indexes["my.mirror-1"] = "http://carol:pw@127.0.0.1:9/mirror/";
        m.default_index = "my.mirror-1";
        auto inv = installer::step_invocation(m, m.steps[0], "r.txt", "uv", m.venv, {}, installer::Mode::install);
        CHECK(has_pair(inv.argv, "--index", "pytorch=http://127.0.0.1:9/pytorch/"));
        CHECK(has_pair(inv.argv, "--default-index", "my.mirror-1=http://127.0.0.1:9/mirror/"));
        for (const auto& arg : inv.argv) {
            CHECK(arg.find("cret") == std::string::npos);
            CHECK(arg.find("pw@") == std::string::npos);
        }
        CHECK(inv.env.at("UV_INDEX_PYTORCH_USERNAME") == "bob");
        CHECK(inv.env.at("UV_INDEX_PYTORCH_PASSWORD") == "s:cret");
        CHECK(inv.env.at("UV_INDEX_MY_MIRROR_1_PASSWORD") == "pw");
        // The python that verifies and runs the checks never sees them.
        CHECK(manifest::child_environment(m, m.venv, {}).count("UV_INDEX_PYTORCH_PASSWORD") == 0);
        auto shown = manifest::masked(inv.env);
        CHECK(shown.at("UV_INDEX_PYTORCH_PASSWORD") == "***");
        CHECK(shown.at("UV_INDEX_PYTORCH_USERNAME") == "bob");
    }
    TEST_CASE("uv --version: a version at or past the floor passes; an old one or no uv at all is named") {
        using installer::check_uv_version;
        CHECK(check_uv_version("uv 0.13.9 (abc1234 2025-12-01)", "uv").empty());
        CHECK(check_uv_version("uv 0.4.23", "uv").empty());
        CHECK(check_uv_version("uv 0.9.0+3 (dev build)", "uv").empty());
        const auto old = check_uv_version("uv 0.1.0 (abc1234 2024-02-15)", "/opt/uv");
        CHECK(old.find("/opt/uv") != std::string::npos);
        CHECK(old.find("0.1.0, too old") != std::string::npos);
        CHECK(old.find(installer::kMinimumUv) != std::string::npos);
        CHECK(check_uv_version("uv 0.4.22", "uv").starts_with("uv is 0.4.22, too old"));  // not "uv (uv)"
        const auto odd = check_uv_version("pip 24.0 from /usr/lib", "uv");
        CHECK(odd.find("\"pip 24.0 from /usr/lib\", not \"uv X.Y.Z\"") != std::string::npos);
        CHECK(!check_uv_version("", "uv").empty());
    }
}
