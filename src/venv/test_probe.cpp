#include <doctest/doctest.h>

#include "venv/probe.hpp"
#include "venv/toolkit.hpp"

using namespace stackup::venv;

TEST_SUITE("venv") {
    TEST_CASE("nvcc's release line") {
        CHECK(parse_nvcc_release("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                 "Cuda compilation tools, release 13.0, V13.0.88\n"
                                 "Build cuda_13.0.r13.0/compiler.36424714_0\n") == "13.0");
        CHECK(parse_nvcc_release("Cuda compilation tools, release 12.8, V12.8.93") == "12.8");
        CHECK_FALSE(parse_nvcc_release("command not found"));
    }

    TEST_CASE("the probe request names each import and its attrs") {
        auto text = probe_request_json({{"torch", "", {"version.git_version"}}, {"sgl-kernel", "sgl_kernel", {}}});
        CHECK(text == R"({"imports":[{"attrs":["version.git_version"],"dist":"torch","module":""},)"
                      R"({"attrs":[],"dist":"sgl-kernel","module":"sgl_kernel"}]})");
    }

    TEST_CASE("the probe request names where bytecode goes only when it is written for another path") {
        const std::string plain = R"({"imports":[]})";
        CHECK(probe_request_json({}, "/s/clone", {}) == plain);
        CHECK(probe_request_json({}, "/s/clone", {true, {}}) == plain);
        CHECK(probe_request_json({}, "/s/clone", {true, "/s/clone"}) == plain);
        CHECK(probe_request_json({}, "/s/clone", {false, "/v"}) == plain);
        CHECK(probe_request_json({}, "/s/clone", {true, "/v"}) ==
              R"({"bytecode_names":{"from":"/s/clone","to":"/v"},"imports":[]})");
    }

    TEST_CASE("the probe's answer becomes facts") {
        auto facts = parse_probe_result(R"({
          "interpreter": {"executable": "/v/bin/python", "version": "3.12.4", "major": 3, "minor": 12,
                          "implementation": "cpython", "soabi": "cpython-312-x86_64-linux-gnu",
                          "machine": "x86_64", "libc": "glibc 2.36", "is_venv": true},
          "distributions": [{"name": "torch", "normalized": "torch", "version": "2.11.0.dev20251230+cu130"}],
          "imports": [{"dist": "torch", "module": "torch", "version": "2.11.0.dev20251230+cu130", "cuda": "13.0",
                       "attrs": {"version.git_version": "abc"}, "attr_errors": {"x.y": "AttributeError: y"}},
                      {"dist": "sgl-kernel", "module": "sgl_kernel", "error": "ImportError: libcuda.so.1"}]
        })");
        CHECK(facts.interpreter.minor == 12);
        CHECK(facts.interpreter.is_venv);
        REQUIRE(facts.find("torch") != nullptr);
        CHECK(facts.find("torch")->version == "2.11.0.dev20251230+cu130");
        CHECK(facts.find("numpy") == nullptr);
        REQUIRE(facts.import_of("torch") != nullptr);
        CHECK(facts.import_of("torch")->cuda == "13.0");
        CHECK(facts.import_of("torch")->attrs.at("version.git_version") == "abc");
        CHECK(facts.import_of("torch")->attr_errors.at("x.y") == "AttributeError: y");
        REQUIRE(facts.import_of("sgl-kernel") != nullptr);
        CHECK(facts.import_of("sgl-kernel")->error == "ImportError: libcuda.so.1");
        CHECK_FALSE(facts.import_of("sgl-kernel")->cuda);
    }
}

TEST_SUITE("venv") {
    TEST_CASE("the probe says when a dist has no module, and whether the imported files are the dist's") {
        auto facts = parse_probe_result(R"({
          "interpreter": {}, "distributions": [],
          "imports": [{"dist": "cuda-python", "module": "",
                       "skipped": "no importable module in RECORD: judged by its metadata only"},
                      {"dist": "regex", "module": "regex", "version": "2.5.148", "file_record": "matches",
                       "file": "/v/site-packages/regex/__init__.py", "attrs": {}, "attr_errors": {}},
                      {"dist": "a", "module": "a", "version": "1", "file_record": "differs", "file": "/v/a/_v.py"},
                      {"dist": "b", "module": "b", "version": "1", "file_record": "not-listed", "file": "/x/b.py"},
                      {"dist": "c", "module": "c", "version": "1", "file_record": "no-record", "file": "/v/c.py"},
                      {"dist": "torch", "module": "torch", "version": "2.11.0"}]
        })");
        using Record = ImportResult::Record;
        REQUIRE(facts.imports.size() == 6);
        CHECK(facts.imports[0].skipped == "no importable module in RECORD: judged by its metadata only");
        CHECK(facts.imports[0].module.empty());
        CHECK_FALSE(facts.imports[0].error);
        CHECK(facts.imports[1].skipped.empty());
        CHECK(facts.imports[1].file_record == Record::matches);
        CHECK(facts.imports[1].file == "/v/site-packages/regex/__init__.py");
        CHECK(facts.imports[2].file_record == Record::differs);
        CHECK(facts.imports[2].file == "/v/a/_v.py");
        CHECK(facts.imports[3].file_record == Record::not_listed);
        CHECK(facts.imports[4].file_record == Record::no_record);
        CHECK(facts.imports[5].file_record == Record::unchecked);
        CHECK(facts.imports[5].file.empty());
    }
}

#include "base/error.hpp"
#include "temp_dir.hpp"

TEST_SUITE("venv") {
    TEST_CASE("one run of a real venv's python tells its interpreter, dists and imports") {
        stackup::testing::TempDir dir;
        auto env = stackup::base::current_environment();
        auto made = stackup::base::run_process({{"python3", "-m", "venv", (dir / "v").string()}, env, std::nullopt});
        REQUIRE_MESSAGE(made.ok(), made.output);
        auto facts = probe(dir / "v", {{"pip", "", {"__name__"}}, {"no-such-dist", "no_such_module", {}}}, env);
        CHECK(facts.interpreter.is_venv);
        CHECK(facts.interpreter.major == 3);
        CHECK(facts.interpreter.implementation == "cpython");
        REQUIRE(facts.find("pip") != nullptr);
        const auto* pip = facts.import_of("pip");
        REQUIRE(pip != nullptr);
        CHECK(pip->module == "pip");
        CHECK_FALSE(pip->error);
        CHECK(pip->version == facts.find("pip")->version);
        CHECK(pip->attrs.at("__name__") == "pip");
        const auto* missing = facts.import_of("no-such-dist");
        REQUIRE(missing != nullptr);
        REQUIRE(missing->error);
        CHECK(missing->error->find("ModuleNotFoundError") != std::string::npos);
    }

    TEST_CASE("core metadata as real dists write it: meson's License, CRLF, an egg's requires.txt") {
        stackup::testing::TempDir dir;
        auto env = stackup::base::current_environment();
        auto made = stackup::base::run_process(
            {{"python3", "-m", "venv", "--without-pip", (dir / "v").string()}, env, std::nullopt});
        REQUIRE_MESSAGE(made.ok(), made.output);
        std::filesystem::path site;
        for (const auto& e : std::filesystem::directory_iterator(dir / "v" / "lib")) {
            site = e.path() / "site-packages";
        }
        // meson-python (pandas, scipy) puts the license text in License, its blank lines as
        // lines of spaces: continuation lines, not the end of the headers.
        dir.write((site / "pandas-2.2.2.dist-info/METADATA").lexically_relative(dir.path()).string(),
                  "Metadata-Version: 2.1\nName: pandas\nVersion: 2.2.2\nLicense: BSD 3-Clause\n"
                  "         \n         Copyright (c) 2008\nRequires-Dist: numpy>=1.23.2; python_version == \"3.11\"\n"
                  "Requires-Dist: pytz>=2020.1\n\nThe description.\nRequires-Dist: not-a-header\n");
        dir.write((site / "Bar-2.0.dist-info/METADATA").lexically_relative(dir.path()).string(),
                  "Metadata-Version: 2.1\r\nName: Bar\r\nVersion: 2.0\r\nRequires-Dist: baz ; extra == \"x\"\r\n\r\n");
        dir.write((site / "foo-1.0-py3.11.egg-info/PKG-INFO").lexically_relative(dir.path()).string(),
                  "Metadata-Version: 1.1\nName: foo\nVersion: 1.0\n");
        dir.write((site / "foo-1.0-py3.11.egg-info/requires.txt").lexically_relative(dir.path()).string(),
                  "requests>=2\n\n[extra]\npytest\n");
        auto facts = probe(dir / "v", {}, env);
        REQUIRE(facts.find("pandas") != nullptr);
        CHECK(facts.find("pandas")->version == "2.2.2");
        CHECK(facts.find("pandas")->requires_dist ==
              std::vector<std::string>{"numpy>=1.23.2; python_version == \"3.11\"", "pytz>=2020.1"});
        REQUIRE(facts.find("bar") != nullptr);
        CHECK(facts.find("bar")->name == "Bar");
        CHECK(facts.find("bar")->requires_dist == std::vector<std::string>{"baz ; extra == \"x\""});
        REQUIRE(facts.find("foo") != nullptr);
        CHECK(facts.find("foo")->requires_dist == std::vector<std::string>{"requests>=2", "pytest; extra == \"extra\""});
    }

    TEST_CASE("dists where importlib.metadata finds them: the first on sys.path, a zip, an .egg folder") {
        // The probe reads dist-info folders itself (importlib.metadata costs 37 ms to import);
        // what it finds must be what importlib.metadata would.
        stackup::testing::TempDir dir;
        auto env = stackup::base::current_environment();
        auto made = stackup::base::run_process(
            {{"python3", "-m", "venv", "--without-pip", (dir / "v").string()}, env, std::nullopt});
        REQUIRE_MESSAGE(made.ok(), made.output);
        std::filesystem::path site;
        for (const auto& e : std::filesystem::directory_iterator(dir / "v" / "lib")) {
            site = e.path() / "site-packages";
        }
        auto rel = [&](const std::filesystem::path& p) { return p.lexically_relative(dir.path()).string(); };
        dir.write(rel(site / "qux-1.0.dist-info/METADATA"), "Metadata-Version: 2.1\nName: qux\nVersion: 1.0\n\n");
        dir.write(rel(dir / "later/qux-2.0.dist-info/METADATA"), "Metadata-Version: 2.1\nName: qux\nVersion: 2.0\n\n");
        dir.write(rel(dir / "eggs/eggy-4.0-py3.11.egg/EGG-INFO/PKG-INFO"), "Metadata-Version: 1.1\nName: eggy\nVersion: 4.0\n");
        const auto zip = dir / "zipped.zip";
        auto zipped = stackup::base::run_process(
            {{"python3", "-c",
              "import sys, zipfile\n"
              "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
              "    z.writestr('zipped-3.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: zipped\\nVersion: 3.0\\n\\n')\n",
              zip.string()},
             env, std::nullopt});
        REQUIRE_MESSAGE(zipped.ok(), zipped.output);
        dir.write(rel(site / "paths.pth"), (dir / "later").string() + "\n" + zip.string() + "\n" +
                                              (dir / "eggs/eggy-4.0-py3.11.egg").string() + "\n");
        auto facts = probe(dir / "v", {}, env);
        REQUIRE(facts.find("qux") != nullptr);
        CHECK(facts.find("qux")->version == "1.0");  // site-packages comes before the .pth's folders
        REQUIRE(facts.find("zipped") != nullptr);
        CHECK(facts.find("zipped")->version == "3.0");
        REQUIRE(facts.find("eggy") != nullptr);
        CHECK(facts.find("eggy")->version == "4.0");
    }

    TEST_CASE("a directory without python is a preflight failure") {
        stackup::testing::TempDir dir;
        try {
            probe(dir.path(), {}, stackup::base::current_environment());
            FAIL("probe of an empty dir succeeded");
        } catch (const stackup::Error& e) {
            CHECK(e.code() == stackup::ExitCode::preflight_failed);
            CHECK(std::string(e.what()).find("no python") != std::string::npos);
        }
    }
}

#include "venv/platform.hpp"

TEST_SUITE("venv") {
    TEST_CASE("the probe's interpreter becomes the tag rules' interpreter") {
        CHECK(parse_glibc("glibc 2.36") == stackup::pep::LibcVersion{2, 36});
        CHECK_FALSE(parse_glibc(""));
        CHECK_FALSE(parse_glibc("musl 1.2"));
        Interpreter i;
        i.implementation = "cpython";
        i.major = 3;
        i.minor = 12;
        i.soabi = "cpython-312-x86_64-linux-gnu";
        i.libc = "glibc 2.35";
        i.machine = "x86_64";
        auto t = tag_interpreter(i);
        CHECK(t.abi == "cp312");
        CHECK(t.glibc == stackup::pep::LibcVersion{2, 35});
        CHECK(t.arch == "x86_64");
        auto tags = stackup::pep::supported_tags(t);
        REQUIRE_FALSE(tags.empty());
        CHECK(tags.front().str() == "cp312-cp312-manylinux_2_35_x86_64");
    }
}

#include "venv/driver.hpp"

TEST_SUITE("venv") {
    TEST_CASE("driver versions from nvidia-smi and /proc") {
        CHECK(parse_nvidia_smi("580.65.06\n580.65.06\n") == "580.65.06");
        CHECK_FALSE(parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"));
        CHECK(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 "
                                        "06:54:38 UTC 2025\nGCC version:  gcc version 12.2.0\n") == "580.65.06");
        CHECK(parse_proc_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  "
                                        "Release Build") == "575.57.08");
        CHECK_FALSE(parse_proc_driver_version(""));
    }

    TEST_CASE("driver versions as a real H200 machine gave them (tests/realworld/gpu_check.py, 2026-12-04)") {
        // nvidia-smi --query-gpu=driver_version --format=csv,noheader, and /proc/driver/nvidia/version, verbatim.
        CHECK(parse_nvidia_smi("580.159.04\n") == "580.159.04");
        CHECK(parse_proc_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                                        "Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n") ==
              "580.159.04");
    }
}
