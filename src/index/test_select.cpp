#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "index/select.hpp"
#include "temp_dir.hpp"

using namespace stackup;

namespace {

std::vector<index::IndexFile> fixture_page(const std::string& file, const std::string& url) {
    std::ifstream in(testing::fixtures_dir() / "indexes" / file);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = index::parse_html_page(text.str(), url);
    REQUIRE_FALSE(parsed.error);
    return parsed.files;
}

pep::TagRanking linux_tags(int minor) {
    pep::Interpreter i;
    i.minor = minor;
    i.abi = "cp3" + std::to_string(minor);
    i.glibc = pep::LibcVersion{2, 35};
    i.arch = "x86_64";
    return pep::TagRanking(pep::supported_tags(i));
}

index::SelectRequest request(const std::string& req, int minor, std::optional<std::string> local = std::nullopt,
                             bool prerelease = false) {
    return {*pep::parse_requirement(req), prerelease, std::move(local),
            *pep::Version::parse("3." + std::to_string(minor) + ".7"), "cp3" + std::to_string(minor)};
}

index::IndexFile file(const std::string& name, std::optional<std::string> requires_python = std::nullopt,
                      bool yanked = false) {
    index::IndexFile f;
    f.filename = name;
    f.url = "http://127.0.0.1/x/" + name;
    f.requires_python = std::move(requires_python);
    f.yanked = yanked;
    return f;
}

}  // namespace

TEST_SUITE("index") {
    TEST_CASE("SGLang's cu130 sgl-kernel page: the newest cu130 build for this interpreter") {
        auto files = fixture_page("sglang-cu130-sgl-kernel.html", "https://docs.sglang.ai/whl/cu130/sgl-kernel/");
        auto cp312 = index::select_wheel(files, request("sgl-kernel", 12, "cu130"), linux_tags(12));
        REQUIRE(cp312.chosen);
        CHECK(cp312.chosen->file.filename == "sgl_kernel-0.3.21+cu130-cp312-abi3-manylinux2014_x86_64.whl");
        CHECK(cp312.chosen->wheel.version.str() == "0.3.21+cu130");
        // The page lists that name several times with different hashes: said, not hidden.
        REQUIRE_FALSE(cp312.chosen->warnings.empty());
        CHECK(cp312.chosen->warnings[0].find("different sha256") != std::string::npos);

        auto cp311 = index::select_wheel(files, request("sgl-kernel", 11, "cu130"), linux_tags(11));
        REQUIRE(cp311.chosen);
        CHECK(cp311.chosen->file.filename == "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl");

        auto pinned = index::select_wheel(files, request("sgl-kernel==0.3.19", 12), linux_tags(12));
        REQUIRE(pinned.chosen);
        CHECK(pinned.chosen->wheel.version.public_str() == "0.3.19");
    }

    TEST_CASE("near misses say exactly why nothing fits") {
        auto files = fixture_page("sglang-cu130-sgl-kernel.html", "https://docs.sglang.ai/whl/cu130/sgl-kernel/");
        auto too_new = index::select_wheel(files, request("sgl-kernel>=0.4", 12, "cu130"), linux_tags(12));
        CHECK_FALSE(too_new.chosen);
        CHECK(too_new.why_none.find("no sgl-kernel satisfies >=0.4") != std::string::npos);

        auto label = index::select_wheel(files, request("sgl-kernel", 12, "cu128"), linux_tags(12));
        CHECK_FALSE(label.chosen);
        CHECK(label.why_none.find("with local label cu128") != std::string::npos);
        CHECK(label.why_none.find("cu130") != std::string::npos);

        auto absent = index::select_wheel(files, request("torch", 12), linux_tags(12));
        CHECK(absent.why_none == "no files for torch on this index");

        // PyTorch's old nightly excerpt holds cp37..cp310 builds only.
        auto nightly = fixture_page("pytorch-whl-nightly-torch-excerpt.html", "https://download.pytorch.org/whl/nightly/torch/");
        auto cp311 = index::select_wheel(nightly, request("torch", 11, std::nullopt, true), linux_tags(11));
        CHECK_FALSE(cp311.chosen);
        CHECK(cp311.why_none.find("exists only for") != std::string::npos);
        CHECK(cp311.why_none.find("cp310") != std::string::npos);
        CHECK(cp311.why_none.find("this venv is cp311") != std::string::npos);
        auto cp310 = index::select_wheel(nightly, request("torch", 10, std::nullopt, true), linux_tags(10));
        REQUIRE(cp310.chosen);
        CHECK(cp310.chosen->wheel.version.str() == "2.0.0.dev20230207+rocm5.3");
    }

    TEST_CASE("pre-releases: only when asked, named, or nothing else exists") {
        std::vector<index::IndexFile> files{file("torch-2.10.0+cu130-py3-none-any.whl"),
                                            file("torch-2.11.0.dev20251230+cu130-py3-none-any.whl")};
        auto plain = index::select_wheel(files, request("torch", 12), linux_tags(12));
        CHECK(plain.chosen->wheel.version.str() == "2.10.0+cu130");
        auto asked = index::select_wheel(files, request("torch", 12, std::nullopt, true), linux_tags(12));
        CHECK(asked.chosen->wheel.version.str() == "2.11.0.dev20251230+cu130");
        auto named = index::select_wheel(files, request("torch>=2.11.0.dev0", 12), linux_tags(12));
        CHECK(named.chosen->wheel.version.str() == "2.11.0.dev20251230+cu130");
        files.erase(files.begin());
        auto only = index::select_wheel(files, request("torch", 12), linux_tags(12));
        CHECK(only.chosen->wheel.version.str() == "2.11.0.dev20251230+cu130");
    }

    TEST_CASE("requires-python, yanked files, the best tag and the build tag") {
        std::vector<index::IndexFile> files{file("pkg-2.0-py3-none-any.whl", ">=3.12"),
                                            file("pkg-1.5-py3-none-any.whl", std::nullopt, true),
                                            file("pkg-1.0-py3-none-any.whl"),
                                            file("pkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"),
                                            file("pkg-1.0-1-cp311-cp311-manylinux_2_28_x86_64.whl"),
                                            file("pkg-1.0.tar.gz")};
        auto r = index::select_wheel(files, request("pkg", 11), linux_tags(11));
        REQUIRE(r.chosen);
        CHECK(r.chosen->file.filename == "pkg-1.0-1-cp311-cp311-manylinux_2_28_x86_64.whl");
        auto yanked = index::select_wheel(files, request("pkg==1.5", 11), linux_tags(11));
        REQUIRE(yanked.chosen);  // an exact pin may take a yanked file
        CHECK(yanked.chosen->wheel.version.str() == "1.5");
        auto py = index::select_wheel(files, request("pkg>=2", 11), linux_tags(11));
        CHECK_FALSE(py.chosen);
        CHECK(py.why_none == "pkg 2.0 requires python >=3.12; this venv has 3.11.7");
        auto src = index::select_wheel({file("other-1.0.tar.gz")}, request("other", 11), linux_tags(11));
        CHECK(src.why_none == "other has only source distributions here, no wheels");
    }
}
