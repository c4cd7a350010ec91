#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "index/page.hpp"
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
            *pep::Version::parse("3." + std::to_string(minor) + ".7"), "cp3" + std::to_string(minor), "x86_64",
            "glibc 2.35"};
}

// The venv and the host as the probe reports them; linux_tags() and request() are the default one.
struct Host {
    int minor = 11;
    std::string machine = "x86_64";
    std::string libc = "glibc 2.35";  // or "musl 1.2", or "" when unknown
};

std::optional<pep::LibcVersion> libc_version(const std::string& libc, const char* format) {
    pep::LibcVersion v;
    if (std::sscanf(libc.c_str(), format, &v.major, &v.minor) == 2) {
        return v;
    }
    return std::nullopt;
}

index::Selection select_on(const std::vector<index::IndexFile>& files, const std::string& req, const Host& host,
                           bool prerelease = false) {
    pep::Interpreter i;
    i.minor = host.minor;
    i.abi = "cp3" + std::to_string(host.minor);
    i.glibc = libc_version(host.libc, "glibc %d.%d");
    i.musl = libc_version(host.libc, "musl %d.%d");
    i.arch = host.machine;
    auto r = request(req, host.minor, std::nullopt, prerelease);
    r.machine = host.machine;
    r.libc = host.libc;
    return index::select_wheel(files, r, pep::TagRanking(pep::supported_tags(i)));
}

std::vector<index::IndexFile> fixture_json(const std::string& file, const std::string& url) {
    std::ifstream in(testing::fixtures_dir() / "indexes" / file);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = index::parse_json_page(text.str(), url);
    REQUIRE_FALSE(parsed.error);
    return parsed.files;
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

index::IndexFile yanked(const std::string& name, const std::string& reason) {
    auto f = file(name, std::nullopt, true);
    f.yanked_reason = reason;
    return f;
}

std::vector<index::IndexFile> files_of(const std::vector<std::string>& names) {
    std::vector<index::IndexFile> out;
    for (const auto& n : names) {
        out.push_back(file(n));
    }
    return out;
}

// One near miss: these files, this request on this host, exactly this message.
struct Miss {
    const char* what;
    std::vector<index::IndexFile> files;
    std::string req;
    Host host;
    std::string why_none;
};

void check_misses(const std::vector<Miss>& misses) {
    for (const auto& m : misses) {
        INFO(m.what);
        auto r = select_on(m.files, m.req, m.host);
        CHECK_FALSE(r.chosen);
        CHECK(r.why_none == m.why_none);
    }
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
        CHECK(yanked.chosen->warnings ==
              std::vector<std::string>{"pkg 1.5 was yanked: (no reason given); chosen anyway because the requirement pins ==1.5"});
        CHECK(r.chosen->warnings.empty());  // a yanked file that was not chosen is no warning
        auto py = index::select_wheel(files, request("pkg>=2", 11), linux_tags(11));
        CHECK_FALSE(py.chosen);
        CHECK(py.why_none == "pkg 2.0 requires python >=3.12; this venv has 3.11.7");
        auto src = index::select_wheel({file("other-1.0.tar.gz")}, request("other", 11), linux_tags(11));
        CHECK(src.why_none == "other has only source distributions here, no wheels (1.0); stackup installs wheels only");
    }

    TEST_CASE("tags are read newest release first: the newest release with a fitting wheel wins, its best tag") {
        // 3.0 fits nothing here; 2.0 fits twice (the better tag wins, and the chosen wheel carries
        // its tags); 1.0's better tag never matters, and equal versions keep page order.
        auto r = select_on(files_of({"pkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "pkg-3.0-cp311-cp311-win_amd64.whl",
                                     "pkg-2.0-py3-none-any.whl", "pkg-2.0-cp311-cp311-manylinux_2_17_x86_64.whl",
                                     "pkg-2.0.0-cp311-cp311-manylinux_2_17_x86_64.whl"}),
                           "pkg", Host{});
        REQUIRE(r.chosen);
        CHECK(r.chosen->file.filename == "pkg-2.0-cp311-cp311-manylinux_2_17_x86_64.whl");
        CHECK(r.chosen->wheel.tags.size() == 1);
        CHECK(r.chosen->wheel.tags.begin()->platform == "manylinux_2_17_x86_64");
        // Nothing fits at all: the near miss still sees every release's tags.
        auto none = select_on(files_of({"pkg-3.0-cp311-cp311-win_amd64.whl", "pkg-2.0-cp311-cp311-macosx_11_0_arm64.whl"}),
                              "pkg", Host{});
        CHECK_FALSE(none.chosen);
        CHECK(none.why_none.find("win_amd64") != std::string::npos);
    }

    TEST_CASE("yanked (PEP 592): a range whose only matches are yanked names the yank and its reason") {
        check_misses({
            {"one yanked match, with its reason",
             {yanked("numpy-2.4.0-py3-none-any.whl", "broken ABI"), file("numpy-2.3.0-py3-none-any.whl")}, "numpy>=2.4", {},
             "numpy 2.4.0 was yanked: broken ABI; no other numpy wheel satisfies >=2.4"},
            {"yanked without a reason",
             {yanked("numpy-2.4.0-py3-none-any.whl", ""), file("numpy-2.3.0-py3-none-any.whl")}, "numpy>=2.4", {},
             "numpy 2.4.0 was yanked: (no reason given); no other numpy wheel satisfies >=2.4"},
            {"the newest yanked match with its reason, the older ones named",
             {yanked("numpy-2.4.1-py3-none-any.whl", "bad wheel"), yanked("numpy-2.4.0-py3-none-any.whl", "x"),
              yanked("numpy-2.3.9-py3-none-any.whl", "y"), file("numpy-2.3.0-py3-none-any.whl")},
             "numpy>2.3.0", {}, "numpy 2.4.1 was yanked: bad wheel; so were 2.3.9 and 2.4.0; no other numpy wheel satisfies >2.3.0"},
            {"a yanked match and a newer source-only release",
             {yanked("numpy-2.4.0-cp311-cp311-manylinux_2_17_x86_64.whl", "r"), file("numpy-2.5.0.tar.gz")},
             "numpy>=2.4", {},
             "numpy 2.4.0 was yanked: r; numpy 2.5.0 is source-only; stackup installs wheels only; "
             "no other numpy wheel satisfies >=2.4"},
        });
        // A range that nothing matches, yanked or not, keeps the plain message.
        auto none = select_on({yanked("numpy-2.4.0-py3-none-any.whl", "r")}, "numpy>=3", {});
        CHECK(none.why_none == "no numpy satisfies >=3 (pre-releases not admitted); newest here is 2.4.0");
    }

    TEST_CASE("yanked: real PEP 691 pages, a range and an exact pin") {
        auto files = fixture_json("pypi-json-yanked.json", "https://example-index.org/simple/yanked/");
        auto any = select_on(files, "yanked", {});
        CHECK_FALSE(any.chosen);
        CHECK(any.why_none == "yanked 0.0.0 was yanked: (no reason given); no other yanked wheel satisfies any version");
        auto pinned = select_on(files, "yanked==0.0.0", {});
        REQUIRE(pinned.chosen);  // as uv does: an exact pin takes the yanked file, and says so
        CHECK(pinned.chosen->file.filename == "yanked-0.0.0-py3-none-any.whl");
        CHECK(pinned.chosen->warnings == std::vector<std::string>{"yanked 0.0.0 was yanked: (no reason given); chosen anyway "
                                                                  "because the requirement pins ==0.0.0"});
        // The spec's example: only the sdist is yanked ("Had a vulnerability"); the wheel is fine.
        auto spec = fixture_json("pep691-spec-example-project.json", "https://example.com/simple/holygrail/");
        auto grail = select_on(spec, "holygrail", {});
        REQUIRE(grail.chosen);
        CHECK(grail.chosen->warnings.empty());
        auto reason = select_on({yanked("holygrail-1.0-py3-none-any.whl", spec[0].yanked_reason)}, "holygrail==1.0", {});
        REQUIRE(reason.chosen);
        CHECK(reason.chosen->warnings[0].find("was yanked: Had a vulnerability") != std::string::npos);
    }

    TEST_CASE("the right interpreter on the wrong platform: glibc, machine or OS, not 'this venv is cp311'") {
        const Host glibc_2_36{11, "x86_64", "glibc 2.36"};
        check_misses({
            {"a newer glibc",
             files_of({"numpy-2.4.0-cp311-cp311-manylinux_2_39_x86_64.whl", "numpy-2.4.0-cp311-cp311-win_amd64.whl"}),
             "numpy", glibc_2_36, "numpy 2.4.0 for cp311 needs glibc 2.39 (manylinux_2_39_x86_64); this host has glibc 2.36"},
            {"abi3 fits too", files_of({"numpy-2.4.0-cp39-abi3-manylinux_2_39_x86_64.whl"}), "numpy", glibc_2_36,
             "numpy 2.4.0 for cp311 needs glibc 2.39 (manylinux_2_39_x86_64); this host has glibc 2.36"},
            {"py3 fits too", files_of({"numpy-2.4.0-py3-none-manylinux_2_39_x86_64.whl"}), "numpy", glibc_2_36,
             "numpy 2.4.0 for cp311 needs glibc 2.39 (manylinux_2_39_x86_64); this host has glibc 2.36"},
            {"the least glibc that would do",
             files_of({"numpy-2.4.0-cp311-cp311-manylinux_2_39_x86_64.whl",
                       "numpy-2.4.0-cp311-cp311-manylinux_2_38_x86_64.whl"}),
             "numpy", glibc_2_36, "numpy 2.4.0 for cp311 needs glibc 2.38 (manylinux_2_38_x86_64); this host has glibc 2.36"},
            {"manylinux2014 is glibc 2.17", files_of({"numpy-2.4.0-cp311-cp311-manylinux2014_x86_64.whl"}), "numpy",
             {11, "x86_64", "glibc 2.12"},
             "numpy 2.4.0 for cp311 needs glibc 2.17 (manylinux2014_x86_64); this host has glibc 2.12"},
            {"manylinux2010 is glibc 2.12", files_of({"numpy-2.4.0-cp311-cp311-manylinux2010_x86_64.whl"}), "numpy",
             {11, "x86_64", "glibc 2.11"},
             "numpy 2.4.0 for cp311 needs glibc 2.12 (manylinux2010_x86_64); this host has glibc 2.11"},
            {"manylinux1 is glibc 2.5", files_of({"numpy-2.4.0-cp311-cp311-manylinux1_x86_64.whl"}), "numpy",
             {11, "x86_64", "glibc 2.4"}, "numpy 2.4.0 for cp311 needs glibc 2.5 (manylinux1_x86_64); this host has glibc 2.4"},
            {"a musl host", files_of({"numpy-2.4.0-cp311-cp311-manylinux_2_17_x86_64.whl"}), "numpy",
             {11, "x86_64", "musl 1.2"}, "numpy 2.4.0 for cp311 needs glibc 2.17 (manylinux_2_17_x86_64); this host has musl 1.2"},
            {"an unknown libc", files_of({"numpy-2.4.0-cp311-cp311-manylinux_2_17_x86_64.whl"}), "numpy",
             {11, "x86_64", ""}, "numpy 2.4.0 for cp311 needs glibc 2.17 (manylinux_2_17_x86_64); this host's libc is unknown"},
            {"another OS and machine",
             files_of({"numpy-2.4.0-cp311-cp311-win_amd64.whl", "numpy-2.4.0-cp311-cp311-macosx_11_0_arm64.whl"}), "numpy",
             glibc_2_36, "numpy 2.4.0 for cp311 exists only for macosx_11_0_arm64 and win_amd64; this host is x86_64 with glibc 2.36"},
            {"another machine", files_of({"numpy-2.4.0-cp311-cp311-manylinux_2_28_aarch64.whl"}), "numpy", glibc_2_36,
             "numpy 2.4.0 for cp311 exists only for manylinux_2_28_aarch64; this host is x86_64 with glibc 2.36"},
            {"musllinux on a glibc host", files_of({"numpy-2.4.0-cp311-cp311-musllinux_1_2_x86_64.whl"}), "numpy",
             glibc_2_36, "numpy 2.4.0 for cp311 exists only for musllinux_1_2_x86_64; this host is x86_64 with glibc 2.36"},
            {"the newest release this interpreter loads, not a newer one for another",
             files_of({"numpy-2.5.0-cp313-cp313-manylinux_2_17_x86_64.whl",
                       "numpy-2.4.0-cp311-cp311-manylinux_2_39_x86_64.whl"}),
             "numpy", glibc_2_36, "numpy 2.4.0 for cp311 needs glibc 2.39 (manylinux_2_39_x86_64); this host has glibc 2.36"},
        });
    }

    TEST_CASE("the wrong platform on real pages: PyTorch's cu128 wheels and a PyPI mirror") {
        auto cu128 = fixture_page("pytorch-whl-torch-cu128-2.7.0-excerpt.html", "https://download.pytorch.org/whl/torch/");
        auto old_glibc = select_on(cu128, "torch", {12, "x86_64", "glibc 2.27"});
        CHECK(old_glibc.why_none ==
              "torch 2.7.0+cu128 for cp312 needs glibc 2.28 (manylinux_2_28_x86_64); this host has glibc 2.27");
        auto arm = select_on(cu128, "torch", {12, "aarch64", "glibc 2.17"});
        CHECK(arm.why_none == "torch 2.7.0+cu128 for cp312 needs glibc 2.28 (manylinux_2_28_aarch64); this host has glibc 2.17");
        auto fits = select_on(cu128, "torch", {12, "aarch64", "glibc 2.28"});
        REQUIRE(fits.chosen);
        CHECK(fits.chosen->file.filename == "torch-2.7.0+cu128-cp312-cp312-manylinux_2_28_aarch64.whl");

        // cp311 is there only as build 1 for aarch64.
        auto mirror = fixture_page("pypi-mirror-html-torch-2.0-excerpt.html", "https://pypi.tuna.tsinghua.edu.cn/simple/torch/");
        auto cp311 = select_on(mirror, "torch", {11, "x86_64", "glibc 2.35"});
        CHECK(cp311.why_none == "torch 2.0.0 for cp311 exists only for manylinux2014_aarch64; this host is x86_64 with glibc 2.35");
        auto cp310 = select_on(mirror, "torch<2.0.1", {10, "x86_64", "glibc 2.4"});
        CHECK(cp310.why_none == "torch 2.0.0 for cp310 needs glibc 2.5 (manylinux1_x86_64); this host has glibc 2.4");
    }

    TEST_CASE("tag lists: this OS and machine only, newest interpreter first, a few, then how many more") {
        auto cu128 = fixture_page("pytorch-whl-torch-cu128-2.7.0-excerpt.html", "https://download.pytorch.org/whl/torch/");
        auto cp314 = select_on(cu128, "torch", {14, "x86_64", "glibc 2.35"});
        CHECK(cp314.why_none ==
              "torch 2.7.0+cu128 exists only for cp313-cp313-manylinux_2_28_x86_64, cp313-cp313t-manylinux_2_28_x86_64, "
              "cp312-cp312-manylinux_2_28_x86_64, cp311-cp311-manylinux_2_28_x86_64, cp310-cp310-manylinux_2_28_x86_64 "
              "and 1 more; this venv is cp314");
        auto arm = select_on(cu128, "torch", {14, "aarch64", "glibc 2.35"});
        CHECK(arm.why_none.find("cp39-cp39-manylinux_2_28_x86_64") == std::string::npos);
        CHECK(arm.why_none.find("and 1 more; this venv is cp314") != std::string::npos);

        auto nightly = fixture_page("pytorch-whl-nightly-torch-excerpt.html", "https://download.pytorch.org/whl/nightly/torch/");
        auto cp311 = select_on(nightly, "torch", {11, "x86_64", "glibc 2.35"}, true);
        CHECK(cp311.why_none == "torch 2.0.0.dev20230207+rocm5.3 exists only for cp310-cp310-linux_x86_64, "
                                "cp39-cp39-linux_x86_64 and cp38-cp38-linux_x86_64; this venv is cp311");

        // Nothing for this OS and machine at all: the platforms that exist.
        auto mixed = fixture_page("pytorch-whl-torch-mixed-excerpt.html", "https://download.pytorch.org/whl/cu117/torch/");
        auto x86 = select_on(mixed, "torch", {11, "x86_64", "glibc 2.35"});
        CHECK(x86.why_none == "torch 2.0.1 exists only for manylinux2014_aarch64; this host is x86_64 with glibc 2.35");
        check_misses({
            {"other OSes only",
             files_of({"numpy-2.4.0-cp313-cp313-win_amd64.whl", "numpy-2.4.0-cp313-cp313-macosx_11_0_arm64.whl"}), "numpy",
             {}, "numpy 2.4.0 exists only for macosx_11_0_arm64 and win_amd64; this host is x86_64 with glibc 2.35"},
            {"any is listed", files_of({"pkg-1.0-py2-none-any.whl", "pkg-1.0-cp27-cp27m-win32.whl"}), "pkg", {},
             "pkg 1.0 exists only for py2-none-any; this venv is cp311"},
        });
    }

    TEST_CASE("source-only releases: warned about when newer than the choice, named when nothing else fits") {
        struct Row {
            const char* what;
            std::vector<std::string> names;
            std::string req;
            bool prerelease;
            std::string chosen;
            std::vector<std::string> warnings;
        };
        const std::vector<Row> rows{
            {"two newer sdists", {"pkg-0.16-py3-none-any.whl", "pkg-0.17.tar.gz", "pkg-0.18.tar.gz"}, "pkg", false, "0.16",
             {"pkg 0.17 and 0.18 are source-only; stackup installs wheels only, so 0.16 was chosen"}},
            {"many newer sdists",
             {"pkg-0.16-py3-none-any.whl", "pkg-0.17.tar.gz", "pkg-0.18.tar.gz", "pkg-0.19.tar.gz", "pkg-0.20.tar.gz",
              "pkg-0.21.tar.gz", "pkg-0.22.tar.gz"},
             "pkg", false, "0.16",
             {"pkg 0.17, 0.18, 0.19 and 3 more up to 0.22 are source-only; stackup installs wheels only, so 0.16 was chosen"}},
            {"outside the range", {"pkg-0.16-py3-none-any.whl", "pkg-0.17.tar.gz"}, "pkg<0.17", false, "0.16", {}},
            {"an older sdist", {"pkg-0.16-py3-none-any.whl", "pkg-0.15.tar.gz", "pkg-0.16.tar.gz"}, "pkg", false, "0.16", {}},
            {"the newest release has wheels (for another OS)",
             {"pkg-0.16-py3-none-any.whl", "pkg-0.17.tar.gz", "pkg-0.18-cp311-cp311-win_amd64.whl"}, "pkg", false, "0.16", {}},
            {"a pre-release sdist, not asked for", {"pkg-0.16-py3-none-any.whl", "pkg-0.17rc1.tar.gz"}, "pkg", false, "0.16", {}},
            {"a pre-release sdist, asked for", {"pkg-0.16-py3-none-any.whl", "pkg-0.17rc1.tar.gz"}, "pkg", true, "0.16",
             {"pkg 0.17rc1 is source-only; stackup installs wheels only, so 0.16 was chosen"}},
        };
        for (const auto& row : rows) {
            INFO(row.what);
            auto r = select_on(files_of(row.names), row.req, {}, row.prerelease);
            REQUIRE(r.chosen);
            CHECK(r.chosen->wheel.version.str() == row.chosen);
            CHECK(r.chosen->warnings == row.warnings);
        }
        auto newer_python = select_on({file("pkg-0.16-py3-none-any.whl"), file("pkg-0.17.tar.gz", ">=3.12")}, "pkg", {});
        CHECK(newer_python.chosen->warnings.empty());  // not for this interpreter anyway

        check_misses({
            {"only sdists match", files_of({"pkg-0.16-py3-none-any.whl", "pkg-0.17.tar.gz", "pkg-0.18.tar.gz"}), "pkg>=0.17",
             {}, "pkg 0.17 and 0.18 are source-only; stackup installs wheels only; no other pkg wheel satisfies >=0.17"},
            {"no wheels at all", files_of({"pkg-0.17.tar.gz", "pkg-0.18.tar.gz"}), "pkg", {},
             "pkg has only source distributions here, no wheels (0.17 and 0.18); stackup installs wheels only"},
        });
    }

    TEST_CASE("source-only releases on PyPI's iniconfig page") {
        auto files = fixture_page("pypi-html-iniconfig.html", "https://example-index.org/simple/iniconfig/");
        auto newest = select_on(files, "iniconfig", {});
        REQUIRE(newest.chosen);
        CHECK(newest.chosen->wheel.version.str() == "2.3.0");
        CHECK(newest.chosen->warnings.empty());  // 1.1.0 is source-only, but older
        auto old = select_on(files, "iniconfig<1.1.1", {});
        REQUIRE(old.chosen);
        CHECK(old.chosen->wheel.version.str() == "1.0.1");
        CHECK(old.chosen->warnings ==
              std::vector<std::string>{"iniconfig 1.1.0 is source-only; stackup installs wheels only, so 1.0.1 was chosen"});
        auto oldest = select_on(files, "iniconfig<1.0.1", {});
        CHECK(oldest.why_none ==
              "iniconfig 0.1 and 1.0.0 are source-only; stackup installs wheels only; no other iniconfig wheel satisfies <1.0.1");
    }
}
