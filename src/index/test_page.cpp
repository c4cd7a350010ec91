// Simple-API pages through page.hpp: every stored real page in fixtures/indexes/ (see its
// SOURCES.md), the choice of parser by content type, and root listings. Hand-written pages
// for each shape a parser must handle, and garbage, are in test_page_html.cpp and
// test_page_json.cpp.

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "index/page.hpp"
#include "temp_dir.hpp"

using stackup::index::IndexFile;
using stackup::index::parse_html_page;
using stackup::index::parse_json_page;
using stackup::index::parse_page;
using stackup::index::parse_root_page;
using stackup::index::ParseResult;
using stackup::index::RootListing;

namespace {

std::string read_fixture(const std::string& name) {
    auto path = stackup::testing::fixtures_dir() / "indexes" / name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("missing fixture " + path.string());
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<IndexFile> html_files(const std::string& name, const std::string& page_url) {
    ParseResult r = parse_html_page(read_fixture(name), page_url);
    REQUIRE_FALSE(r.error);
    return r.files;
}

std::vector<IndexFile> json_files(const std::string& name, const std::string& page_url) {
    ParseResult r = parse_json_page(read_fixture(name), page_url);
    REQUIRE_FALSE(r.error);
    return r.files;
}

std::vector<std::string> root_projects(const std::string& name, const std::string& type) {
    RootListing r = parse_root_page(read_fixture(name), type);
    REQUIRE_FALSE(r.error);
    return r.projects;
}

size_t count_if_files(const std::vector<IndexFile>& files, auto pred) {
    return static_cast<size_t>(std::count_if(files.begin(), files.end(), pred));
}

size_t with_sha256(const std::vector<IndexFile>& files) {
    return count_if_files(files, [](const IndexFile& f) { return f.hashes.contains("sha256"); });
}

std::set<std::string> names(const std::vector<IndexFile>& files) {
    std::set<std::string> out;
    for (const auto& f : files) {
        out.insert(f.filename);
    }
    return out;
}

const std::string kGithub = "https://github.com/sgl-project/whl/releases/download/";

}  // namespace

TEST_SUITE("index") {
    TEST_CASE("fixture sglang-cu130-sgl-kernel: absolute GitHub hrefs, raw '+', one name listed with different hashes") {
        auto files = html_files("sglang-cu130-sgl-kernel.html", "https://docs.sglang.io/whl/cu130/sgl-kernel/");
        CHECK(files.size() == 50);
        CHECK(names(files).size() == 28);
        CHECK(with_sha256(files) == 50);
        CHECK(files[0].filename == "sgl_kernel-0.3.16.post4+cu130-cp310-abi3-manylinux2014_aarch64.whl");
        CHECK(files[0].url == kGithub + "v0.3.16.post4/sgl_kernel-0.3.16.post4+cu130-cp310-abi3-manylinux2014_aarch64.whl");
        CHECK(files[0].hashes.at("sha256") == "90c5ec78f567e905c157ea24c23a88f8b7dc088fcaac44a639b2e76acb1224c0");
        CHECK_FALSE(files[0].requires_python);
        CHECK_FALSE(files[0].metadata);
        CHECK_FALSE(files[0].yanked);
        CHECK(files.back().filename == "sgl_kernel-0.3.21+cu130-cp312-abi3-manylinux2014_x86_64.whl");
        CHECK(files.back().hashes.at("sha256") == "62d41f63067bfd8184c19e1ead194f232853f0ff2aa3831ed27bc946867ea163");
        std::set<std::string> digests;
        for (const auto& f : files) {
            if (f.filename == "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl") {
                digests.insert(f.hashes.at("sha256"));
            }
        }
        CHECK(digests.size() == 5);  // five entries, five different files under one name
        CHECK(digests.contains("3a0b3eb1ac55a0f46ea8f4e006d0b641a36c15a1e9f42ed506c7f3790acf68b1"));
    }

    TEST_CASE("fixture sglang cu130 sglang-kernel (bare <a> lines), sgl-deep-gemm, nightly; cu129 sgl-kernel") {
        auto kernel = html_files("sglang-cu130-sglang-kernel.html", "https://docs.sglang.io/whl/cu130/sglang-kernel/");
        CHECK(kernel.size() == 18);
        CHECK(kernel[0].filename == "sglang_kernel-0.4.0+cu130-cp310-abi3-manylinux2014_aarch64.whl");
        CHECK(kernel[0].hashes.at("sha256") == "59d6204b7941de36773f88a11e780075f4e4062ae72db4e8b46d520840fa81fd");
        CHECK(kernel.back().hashes.at("sha256") == "eb19842cd9809cce7e71d291aa1808f3a7e8c7ad46070a505d970e1ca8105240");

        auto gemm = html_files("sglang-cu130-sgl-deep-gemm.html", "https://docs.sglang.io/whl/cu130/sgl-deep-gemm/");
        CHECK(gemm.size() == 22);
        CHECK(gemm[3].filename == "sgl_deep_gemm-0.1.0rc0+cu130-py3-none-manylinux2014_x86_64.whl");
        CHECK(gemm[3].hashes.at("sha256") == "f5ca0142391305cbdd73f3f87b14b9a2f4cb78f4e49f75649c9be65f22d0feb0");

        auto nightly = html_files("sglang-cu130-sglang-nightly.html", "https://docs.sglang.io/whl/cu130/sglang/");
        CHECK(nightly.size() == 67);
        CHECK(with_sha256(nightly) == 67);
        CHECK(nightly[0].filename == "sglang-0.5.15.dev20260701+ga7390b17f8-cp310-cp310-linux_x86_64.whl");
        CHECK(nightly[0].hashes.at("sha256") == "812a72fa0fb3f24c2343a9e7a018688562d640ff8c633dc21681e5f8137cebb4");
        CHECK(nightly.back().url ==
              kGithub + "nightly-2026-04-30-2f13d2831/sglang-0.5.11.dev20260430+g2f13d2831-cp310-cp310-linux_x86_64.whl");

        auto cu129 = html_files("sglang-cu129-sgl-kernel.html", "https://docs.sglang.io/whl/cu129/sgl-kernel/");
        CHECK(cu129.size() == 100);
        CHECK(names(cu129).size() == 78);
        CHECK(cu129[0].filename == "sgl_kernel-0.3.3-cp39-abi3-manylinux2014_x86_64.whl");  // no local label at all
        CHECK(cu129[0].hashes.at("sha256") == "6baa35a48e3f3d0ac9e764d19e9706c5fca2ed1b2b6d21327d930bccbf15812f");
        CHECK(cu129[2].filename == "sgl_kernel-0.3.4+cu128-cp310-abi3-manylinux2014_x86_64.whl");  // cu128 on the cu129 page
        CHECK(count_if_files(cu129, [](const IndexFile& f) { return f.filename.find("+cu128-") != std::string::npos; }) == 11);
    }

    TEST_CASE("fixture sglang musa43: a project page with no links is empty, not an error") {
        auto files = html_files("sglang-musa43-sgl-kernel-empty.html", "https://docs.sglang.io/whl/musa43/sgl-kernel/");
        CHECK(files.empty());
    }

    TEST_CASE("fixture root listings: sglang, flashinfer, PyPI, PEP 691") {
        auto sglang = root_projects("sglang-root.html", "text/html");
        CHECK(sglang.size() == 11);
        CHECK(sglang.front() == "cu118");
        CHECK(sglang.back() == "rocm720");
        CHECK(root_projects("sglang-cu130-root.html", "text/html") ==
              std::vector<std::string>{"sgl-deep-gemm", "sgl-kernel", "sglang", "sglang-kernel"});
        CHECK(root_projects("sglang-cu128-root.html", "text/html") == std::vector<std::string>{"sgl-kernel"});
        // ".git/" is no project name; the trailing '/' of the link text is dropped
        CHECK(root_projects("flashinfer-root.html", "text/html") ==
              std::vector<std::string>{"cu118", "cu121", "cu124", "cu126", "nightly"});
        auto cu130 = root_projects("flashinfer-cu130-root.html", "text/html");
        CHECK(cu130.size() == 9);
        CHECK(cu130.front() == "flashinfer-jit-cache");
        CHECK(std::find(cu130.begin(), cu130.end(), "flashinfer-jit-cache-sm90a") != cu130.end());
        CHECK(std::find(cu130.begin(), cu130.end(), "flashinfer-python") == cu130.end());
        CHECK(root_projects("pypi-html-root-excerpt.html", "text/html; charset=utf-8") ==
              std::vector<std::string>{"a", "a00k5pgrtn", "a10ctl", "a10-horizon", "a10-neutronclient"});
        CHECK(root_projects("pep691-spec-example-root.json", "application/vnd.pypi.simple.v1+json") ==
              std::vector<std::string>{"frob", "spamspamspam"});
    }

    TEST_CASE("fixture flashinfer jit-cache and flashinfer-python: string-sorted versions kept in page order") {
        auto jit = html_files("flashinfer-cu130-flashinfer-jit-cache-excerpt.html", "https://flashinfer.ai/whl/cu130/flashinfer-jit-cache/");
        CHECK(jit.size() == 26);
        CHECK(with_sha256(jit) == 26);
        CHECK(jit[2].url == "https://github.com/flashinfer-ai/flashinfer/releases/download/v0.4.1/"
                            "flashinfer_jit_cache-0.4.1+cu130-cp39-abi3-manylinux_2_28_aarch64.whl");
        CHECK(jit[2].hashes.at("sha256") == "d1c3f5e1ea6c226326df2393440384cc6128fed0ab2a5ccf335806bf1c86f278");
        CHECK(jit[8].filename == "flashinfer_jit_cache-0.6.1+cu130-cp39-abi3-manylinux_2_28_aarch64.whl");
        CHECK(jit[10].filename == "flashinfer_jit_cache-0.6.10.post1+cu130-cp39-abi3-manylinux_2_28_aarch64.whl");
        CHECK(jit[14].filename == "flashinfer_jit_cache-0.6.10rc1+cu130-cp39-abi3-manylinux_2_28_aarch64.whl");

        auto py = html_files("flashinfer-flashinfer-python-excerpt.html", "https://flashinfer.ai/whl/flashinfer-python/");
        CHECK(py.size() == 15);
        CHECK(py[0].filename == "flashinfer_python-0.4.1-py3-none-any.whl");
        CHECK(py[0].hashes.at("sha256") == "5b44d28e485a54fa47e994358684981cf46440ec7acbed9954575157d341ff61");
        CHECK(py.back().filename == "flashinfer_python-0.7.1rc1-py3-none-any.whl");
        CHECK(count_if_files(py, [](const IndexFile& f) { return f.filename.ends_with("-py3-none-any.whl"); }) == 15);
    }

    TEST_CASE("fixture download.pytorch.org cu128: root-relative hrefs, %2B, PEP 658/714, hashes missing on aarch64") {
        auto files = html_files("pytorch-whl-torch-cu128-2.7.0-excerpt.html", "https://download.pytorch.org/whl/torch/");
        CHECK(files.size() == 18);
        CHECK(with_sha256(files) == 12);
        CHECK(files[0].filename == "torch-2.7.0+cu128-cp310-cp310-manylinux_2_28_aarch64.whl");
        CHECK(files[0].url == "https://download.pytorch.org/whl/cu128/torch-2.7.0%2Bcu128-cp310-cp310-manylinux_2_28_aarch64.whl");
        CHECK(files[0].hashes.empty());
        CHECK(files[0].metadata == "sha256=86107f52ff49e63a75c9d345374cac30140e053a12ffa728d676fee836e69022");
        CHECK(files[1].hashes.at("sha256") == "ac1849553ee673dfafb44c610c60cb60a2890f0e117f43599a526cf777eb8b8c");
        CHECK(files[13].filename == "torch-2.7.0+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl");
        CHECK(files[11].metadata == "sha256=5328f06cf7c42c53b380ab25403cb75bbdc4cce7c73229da2f02c9b68476807b");
        CHECK(count_if_files(files, [](const IndexFile& f) { return f.metadata.has_value(); }) == 18);
    }

    TEST_CASE("fixture download.pytorch.org mixed, nightly, jinja2") {
        auto mixed = html_files("pytorch-whl-torch-mixed-excerpt.html", "https://download.pytorch.org/whl/cu117");
        CHECK(mixed.size() == 5);
        CHECK(mixed[0].filename == "torch-1.13.0+cu117-cp310-cp310-win_amd64.whl");
        CHECK(mixed[3].url == "https://download.pytorch.org/whl/torch-2.0.1-cp38-cp38-manylinux2014_aarch64.whl");
        CHECK(mixed[3].hashes.at("sha256") == "0882243755ff28895e8e6dc6bc26ebcf5aa0911ed81b2a12f241fc4b09075b13");

        auto nightly = html_files("pytorch-whl-nightly-torch-excerpt.html", "https://download.pytorch.org/whl/nightly/torch/");
        CHECK(nightly.size() == 8);
        CHECK(with_sha256(nightly) == 0);
        CHECK(nightly[4].filename == "torch-2.0.0.dev20230206+rocm5.3-cp39-cp39-linux_x86_64.whl");
        CHECK(nightly[4].url == "https://download.pytorch.org/whl/nightly/rocm5.3/torch-2.0.0.dev20230206%2Brocm5.3-cp39-cp39-linux_x86_64.whl");

        auto jinja = html_files("pytorch-whl-jinja2.html", "https://download.pytorch.org/whl/jinja2/");
        REQUIRE(jinja.size() == 1);
        CHECK(jinja[0].filename == "Jinja2-3.1.2-py3-none-any.whl");
        CHECK(jinja[0].url == "https://download.pytorch.org/whl/Jinja2-3.1.2-py3-none-any.whl");
        CHECK(jinja[0].hashes.at("sha256") == "6088930bfe239f0e6710546ab9c19c9ef35e29792895fed6e6e31a023a182a61");
    }

    TEST_CASE("fixture PyPI iniconfig and qypi: &gt;= unescaped, metadata on wheels only") {
        auto ini = html_files("pypi-html-iniconfig.html", "https://example-index.org/simple/iniconfig/");
        CHECK(ini.size() == 16);
        CHECK(with_sha256(ini) == 16);
        CHECK(ini[0].filename == "iniconfig-0.1.tar.gz");
        CHECK_FALSE(ini[0].requires_python);
        CHECK_FALSE(ini[0].metadata);
        CHECK(ini[3].filename == "iniconfig-1.0.1-py3-none-any.whl");
        CHECK(ini[3].metadata == "sha256=27e5d42c8d881fda1137df4c60acda74d064ccf295136e46cf07e46087c34c00");
        CHECK(ini[8].filename == "iniconfig-2.0.0-py3-none-any.whl");
        CHECK(ini[8].requires_python == ">=3.7");
        CHECK(ini[15].filename == "iniconfig-2.3.0.tar.gz");
        CHECK(ini[15].requires_python == ">=3.10");
        CHECK(ini[15].url == "https://files.example-index.org/packages/72/34/14ca021ce8e5dfedc35312d08ba8bf51fdd999c576889fc2c24cb97f4f10/iniconfig-2.3.0.tar.gz");
        CHECK(count_if_files(ini, [](const IndexFile& f) { return f.requires_python.has_value(); }) == 8);
        CHECK(count_if_files(ini, [](const IndexFile& f) { return f.metadata.has_value(); }) == 6);

        auto qypi = html_files("pypi-html-qypi.html", "https://example-index.org/simple/qypi/");
        CHECK(qypi.size() == 12);
        CHECK(count_if_files(qypi, [](const IndexFile& f) { return f.requires_python == "~=3.4"; }) == 12);
        CHECK(qypi[0].hashes.at("sha256") == "da69d28dcd527c0e372b3fa7b92fc333b327f8470175f035abc4e351b539189f");
        CHECK(qypi.back().filename == "qypi-0.4.1.tar.gz");
    }

    TEST_CASE("fixture bandersnatch mirror and devpi: ../ relative hrefs") {
        auto torch = html_files("pypi-mirror-html-torch-2.0-excerpt.html", "https://pypi.tuna.tsinghua.edu.cn/simple/torch/");
        CHECK(torch.size() == 9);
        CHECK(torch[0].filename == "torch-2.0.0-1-cp310-cp310-manylinux2014_aarch64.whl");
        CHECK(torch[0].url == "https://pypi.tuna.tsinghua.edu.cn/packages/9f/cd/670e5e178db87065ee60f60fb35b040abbb819a1f686a91d9ff799fc5048/"
                              "torch-2.0.0-1-cp310-cp310-manylinux2014_aarch64.whl");
        CHECK(torch[0].hashes.at("sha256") == "c9090bda7d2eeeecd74f51b721420dbeb44f838d4536cc1b284e879417e3064a");
        CHECK(torch[0].requires_python == ">=3.8.0");

        // devpi serves this page WITHOUT a trailing '/': only then do its ../ hrefs reach /root/pypi/
        auto devpi = html_files("devpi-html-devpi.html", "https://m.devpi.net/fschulze/dev/+simple/devpi");
        CHECK(devpi.size() == 5);  // the <form> and the text outside anchors add nothing
        CHECK(devpi[0].url == "https://m.devpi.net/root/pypi/+f/159/5e5f095022ce7/devpi-2.2.0.tar.gz");
        CHECK(devpi[0].hashes.at("sha256") == "1595e5f095022ce7b569326ddceef5d638d936cfb79578d7fc472d46c556cd30");
        CHECK(devpi[2].url == "https://m.devpi.net/fschulze/dev/+f/197/3b59b5a67362a/devpi-2.0.3.tar.gz");
        auto slashed = html_files("devpi-html-devpi.html", "https://m.devpi.net/fschulze/dev/+simple/devpi/");
        CHECK(slashed[0].url == "https://m.devpi.net/fschulze/root/pypi/+f/159/5e5f095022ce7/devpi-2.2.0.tar.gz");
    }

    TEST_CASE("fixture PEP 691 JSON: argset, yanked, the spec's example") {
        auto argset = json_files("pypi-json-argset.json", "https://example-index.org/simple/argset/");
        REQUIRE(argset.size() == 2);
        CHECK(argset[0].filename == "argset-0.1.0-py3-none-any.whl");
        CHECK(argset[0].hashes.at("sha256") == "107a632c7112faceb9fd6e93658dd461154713db250f7ffde5bd473e17cf1db5");
        CHECK(argset[0].requires_python == "~=3.6");
        CHECK_FALSE(argset[0].yanked);
        CHECK_FALSE(argset[0].metadata);
        CHECK(argset[1].url == "https://files.example-index.org/packages/d0/ee/1c25e68d029e8daaf3228dababbf3261fa5d9569f6f705867b2ad4df9b6d/argset-0.1.0.tar.gz");

        auto yanked = json_files("pypi-json-yanked.json", "https://example-index.org/simple/yanked/");
        REQUIRE(yanked.size() == 2);
        CHECK(yanked[0].yanked);
        CHECK(yanked[0].yanked_reason == "");
        CHECK_FALSE(yanked[0].requires_python);  // PyPI's "" means no constraint
        CHECK(yanked[1].yanked);
        CHECK(yanked[1].yanked_reason == "not good");

        auto spec = json_files("pep691-spec-example-project.json", "https://example.com/simple/holygrail/");
        REQUIRE(spec.size() == 2);
        CHECK(spec[0].filename == "holygrail-1.0.tar.gz");
        CHECK(spec[0].yanked_reason == "Had a vulnerability");
        CHECK(spec[0].hashes == std::map<std::string, std::string>{{"blake2b", "..."}, {"sha256", "..."}});
        CHECK(spec[0].requires_python == ">=3.7");
        CHECK_FALSE(spec[0].metadata);
        CHECK(spec[1].metadata == "true");
        CHECK_FALSE(spec[1].yanked);
    }

    TEST_CASE("every fixture page parses through parse_page by its content type") {
        for (const auto& entry : std::filesystem::directory_iterator(stackup::testing::fixtures_dir() / "indexes")) {
            auto name = entry.path().filename().string();
            if (name == "SOURCES.md") {
                continue;
            }
            bool json = name.ends_with(".json");
            bool json_root = json && name.find("-root") != std::string::npos;
            INFO("fixture: ", name);
            auto text = read_fixture(name);
            auto type = json ? "application/vnd.pypi.simple.v1+json" : "text/html";
            // A JSON root has no "files" and a JSON project page no "projects"; HTML is both.
            CHECK(parse_page(text, type, "https://idx.example/simple/p/").error.has_value() == json_root);
            CHECK(parse_page(text, "", "https://idx.example/simple/p/").error.has_value() == json_root);  // sniffed
            CHECK(parse_root_page(text, type).error.has_value() == (json && !json_root));
        }
    }

    TEST_CASE("parse_page picks the parser by content type") {
        const std::string url = "https://idx.example/simple/p/";
        const std::string json = R"({"meta": {"api-version": "1.0"}, "files": [{"filename": "p-1.tar.gz", "url": "p-1.tar.gz"}]})";
        const std::string html = R"(<a href="p-1.tar.gz">p-1.tar.gz</a>)";
        CHECK(parse_page(json, "application/vnd.pypi.simple.v1+json", url).files.size() == 1);
        CHECK(parse_page(json, "Application/Vnd.Pypi.Simple.V1+JSON; charset=utf-8", url).files.size() == 1);
        CHECK(parse_page(html, "text/html; charset=utf-8", url).files.size() == 1);
        CHECK(parse_page(html, "application/vnd.pypi.simple.v1+html", url).files.size() == 1);
        CHECK(parse_page(html, "", url).files.size() == 1);
        CHECK(parse_page("  " + json, "", url).files.size() == 1);
        CHECK(parse_page(json, "text/html", url).files.empty());  // served as HTML: no anchors
        auto other = parse_page(json, "application/octet-stream", url);
        REQUIRE(other.error);
        CHECK(other.error->find("application/octet-stream") != std::string::npos);
        CHECK(parse_root_page(html, "application/json").error);
    }

    TEST_CASE("root listings: names normalized, duplicates dropped, href when the text is empty") {
        auto html = parse_root_page(R"(<a href="Foo_Bar/">Foo_Bar</a><a href="foo-bar/">foo-bar</a>
            <a href="/simple/sgl.kernel/"></a><a href="../">..</a><a href="x/"> -bad- </a><a href="torch/">torch</a>)",
                                    "text/html");
        REQUIRE_FALSE(html.error);
        CHECK(html.projects == std::vector<std::string>{"foo-bar", "sgl-kernel", "torch"});
        auto json = parse_root_page(R"({"meta": {"api-version": "1.0"}, "projects": [{"name": "Torch"}, {"name": "SGL_Kernel"}]})",
                                    "application/vnd.pypi.simple.v1+json");
        REQUIRE_FALSE(json.error);
        CHECK(json.projects == std::vector<std::string>{"torch", "sgl-kernel"});
        CHECK(parse_root_page(R"({"projects": [{"nom": "x"}]})", "application/vnd.pypi.simple.v1+json").error);
        CHECK(parse_root_page(R"({"projects": [], "meta": {"api-version": "3.0"}})", "application/vnd.pypi.simple.v1+json").error);
        CHECK(parse_root_page("", "text/html").projects.empty());
    }
}
