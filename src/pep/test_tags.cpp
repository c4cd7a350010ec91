// PEP 425 tags against fixtures/wheels/ (packaging's test_tags.py tables, and
// the full supported-tag lists it computes for three real interpreters).

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "fixtures.hpp"
#include "pep/tags.hpp"
#include "pep/wheel.hpp"
#include "temp_dir.hpp"

using stackup::pep::abi_from_soabi;
using stackup::pep::compatible_tags;
using stackup::pep::cpython_tags;
using stackup::pep::Interpreter;
using stackup::pep::interpreter_arch;
using stackup::pep::LibcVersion;
using stackup::pep::linux_platforms;
using stackup::pep::LinuxTagPosition;
using stackup::pep::ManylinuxFloor;
using stackup::pep::parse_tag;
using stackup::pep::PlatformPolicy;
using stackup::pep::PythonVersion;
using stackup::pep::supported_tags;
using stackup::pep::sysconfig_platforms;
using stackup::pep::Tag;
using stackup::pep::TagRanking;
using stackup::pep::TagSetOrder;
using stackup::testing::Row;

namespace {

std::filesystem::path wheels(std::string_view file) { return stackup::testing::fixtures_dir() / "wheels" / file; }

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ",") + item;
    }
    return out;
}

std::string join(const std::vector<Tag>& tags) {
    std::vector<std::string> texts;
    for (const auto& tag : tags) {
        texts.push_back(tag.str());
    }
    return join(texts);
}

std::string sorted_join(const std::set<Tag>& tags) {
    std::vector<std::string> texts;
    for (const auto& tag : tags) {
        texts.push_back(tag.str());
    }
    std::sort(texts.begin(), texts.end());
    return join(texts);
}

// The quoted strings of a Python list literal that starts at `at` ("['a', 'b']").
std::vector<std::string> strings_in_list(std::string_view text, std::size_t at) {
    std::vector<std::string> out;
    auto end = text.find(']', at);
    REQUIRE(end != std::string_view::npos);
    for (auto open = text.find('\'', at); open < end; open = text.find('\'', open + 1)) {
        auto close = text.find('\'', open + 1);
        out.emplace_back(text.substr(open + 1, close - open - 1));
        open = close;
    }
    return out;
}

// Every Python list literal in `text`, in order.
std::vector<std::vector<std::string>> lists_in(std::string_view text) {
    std::vector<std::vector<std::string>> out;
    for (auto at = text.find('['); at != std::string_view::npos; at = text.find('[', at + 1)) {
        out.push_back(strings_in_list(text, at));
    }
    return out;
}

// The list after `'key': ` in a Python dict literal, or nullopt.
std::optional<std::vector<std::string>> keyword_list(std::string_view kwargs, std::string_view key) {
    auto at = kwargs.find("'" + std::string(key) + "': [");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    return strings_in_list(kwargs, kwargs.find('[', at));
}

// "((3, 11), ...)" or "((3,),)" -> the leading version tuple.
PythonVersion version_in(std::string_view args) {
    REQUIRE(args.starts_with("(("));
    auto inner = args.substr(2, args.find(')') - 2);
    PythonVersion v;
    v.major = std::stoi(std::string(inner));
    auto comma = inner.find(',');
    auto rest = comma == std::string_view::npos ? std::string_view{} : inner.substr(comma + 1);
    if (rest.find_first_of("0123456789") != std::string_view::npos) {
        v.minor = std::stoi(std::string(rest));
    }
    return v;
}

// The first quoted string outside any list ("'cp33'" in "((3, 3), 'cp33', [...])").
std::string bare_string_in(std::string_view args) {
    auto open = args.find('\'');
    auto list = args.find('[');
    REQUIRE(open < list);
    return std::string(args.substr(open + 1, args.find('\'', open + 1) - open - 1));
}

std::optional<LibcVersion> libc_in(std::string_view text) {
    auto dot = text.find('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    return LibcVersion{std::stoi(std::string(text.substr(0, dot))), std::stoi(std::string(text.substr(dot + 1)))};
}

// "musl_version=_MuslVersion(major=1, minor=2)" in the test params column.
std::optional<LibcVersion> musl_in(std::string_view params) {
    auto at = params.find("_MuslVersion(major=");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto major = std::stoi(std::string(params.substr(at + 19)));
    auto minor = std::stoi(std::string(params.substr(params.find("minor=", at) + 6)));
    return LibcVersion{major, minor};
}

// The glibc version a manylinux platform tag needs, or nullopt for other tags.
std::optional<LibcVersion> manylinux_glibc(std::string_view platform) {
    if (platform.starts_with("manylinux2014_")) {
        return LibcVersion{2, 17};
    }
    if (platform.starts_with("manylinux2010_")) {
        return LibcVersion{2, 12};
    }
    if (platform.starts_with("manylinux1_")) {
        return LibcVersion{2, 5};
    }
    if (!platform.starts_with("manylinux_")) {
        return std::nullopt;
    }
    auto rest = platform.substr(10);
    auto underscore = rest.find('_');
    return LibcVersion{std::stoi(std::string(rest)), std::stoi(std::string(rest.substr(underscore + 1)))};
}

// packaging's tests patch _is_compatible; the same predicate, applied to our list.
std::function<bool(LibcVersion)> patched_compatibility(std::string_view patches) {
    if (patches.find("always False") != std::string_view::npos ||
        patches.find("_is_compatible False") != std::string_view::npos ||
        patches.find("platform_tags patched to ()") != std::string_view::npos) {
        return [](LibcVersion) { return false; };
    }
    if (patches.find("only glibc 2.5") != std::string_view::npos) {
        return [](LibcVersion v) { return v == LibcVersion{2, 5}; };
    }
    if (patches.find("only") != std::string_view::npos && patches.find("2.17") != std::string_view::npos) {
        return [](LibcVersion v) { return v == LibcVersion{2, 17}; };
    }
    return [](LibcVersion) { return true; };
}

std::vector<std::string> without_incompatible(std::vector<std::string> platforms,
                                              const std::function<bool(LibcVersion)>& compatible) {
    std::erase_if(platforms, [&](const std::string& p) {
        auto glibc = manylinux_glibc(p);
        return glibc && !compatible(*glibc);
    });
    return platforms;
}

Interpreter cpython(int minor, std::optional<LibcVersion> glibc, std::string arch) {
    return Interpreter{"cpython", 3, minor, "cp3" + std::to_string(minor), glibc, std::nullopt, std::move(arch)};
}

std::vector<std::string> tag_texts(const std::vector<Tag>& tags) {
    std::vector<std::string> out;
    for (const auto& tag : tags) {
        out.push_back(tag.str());
    }
    return out;
}

// Element by element, so a failure names the first position that differs.
void check_same_list(const std::vector<std::string>& ours, const std::vector<std::string>& expected) {
    REQUIRE(!expected.empty());
    CHECK(ours.size() == expected.size());
    for (std::size_t i = 0; i < std::min(ours.size(), expected.size()); ++i) {
        INFO("position ", i);
        REQUIRE(ours[i] == expected[i]);
    }
}

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("parse_tag.tsv: compressed tag sets expand, or are invalid") {
        auto rows = stackup::testing::read_tsv(wheels("parse_tag.tsv"));
        REQUIRE(rows.size() == 21);
        for (const auto& row : rows) {
            INFO("tag: '", row[0], "'");
            std::string error;
            auto tags = parse_tag(row[0], TagSetOrder::Any, &error);
            if (row[1] == "INVALID") {
                CHECK(!tags);
                CHECK(!error.empty());
                continue;
            }
            REQUIRE_MESSAGE(tags, error);
            CHECK(sorted_join(*tags) == row[1]);
            if (row.size() > 2 && row[2].find("UnsortedTagsError") != std::string::npos) {
                CHECK(!parse_tag(row[0], TagSetOrder::RequireSorted));
            }
        }
        CHECK(parse_tag("py2.py3-none-any", TagSetOrder::RequireSorted));
    }

    TEST_CASE("cpython_tags.tsv: cpXY tags for given abis and platforms, in priority order") {
        auto rows = stackup::testing::read_tsv(wheels("cpython_tags.tsv"));
        REQUIRE(rows.size() == 19);
        for (const auto& row : rows) {
            INFO(row[0], " ", row[1], " ", row[2]);
            REQUIRE(row.size() == 4);
            auto positional = lists_in(row[1]);
            auto abis = positional.size() > 0 ? positional[0] : keyword_list(row[2], "abis").value();
            auto platforms = positional.size() > 1 ? positional[1] : keyword_list(row[2], "platforms").value();
            CHECK(join(cpython_tags(version_in(row[1]), abis, platforms)) == row[3]);
        }
    }

    TEST_CASE("compatible_tags.tsv: pyXY and interpreter-none-any tags, in priority order") {
        auto rows = stackup::testing::read_tsv(wheels("compatible_tags.tsv"));
        REQUIRE(rows.size() == 4);
        for (const auto& row : rows) {
            INFO(row[0], " ", row[1]);
            auto lists = lists_in(row[1]);
            REQUIRE(lists.size() == 1);
            CHECK(join(compatible_tags(version_in(row[1]), bare_string_in(row[1]), lists[0])) == row[3]);
        }
    }

    TEST_CASE("linux_platforms.tsv: manylinux, musllinux and linux_<arch>, in packaging >= 26.3 order") {
        auto rows = stackup::testing::read_tsv(wheels("linux_platforms.tsv"));
        REQUIRE(rows.size() == 25);
        const PlatformPolicy packaging_26_3{LinuxTagPosition::First, ManylinuxFloor::PerArch};
        for (const auto& row : rows) {
            INFO(row[0], " ", row[1], " 32-bit=", row[2], " glibc=", row[3], " ", row[4], " (", row[5], ")");
            REQUIRE(row.size() == 7);
            auto platforms =
                sysconfig_platforms(row[1], row[2] == "True", libc_in(row[3]), musl_in(row[4]), packaging_26_3);
            CHECK(join(without_incompatible(platforms, patched_compatibility(row[5]))) == row[6]);
        }
    }

    TEST_CASE("supported_tags_*.txt: the whole ordered list, element by element") {
        struct Case {
            std::string file;
            Interpreter interpreter;
            PlatformPolicy policy;
        };
        const std::vector<Case> cases{
            {"supported_tags_cp312_glibc2.35_x86_64.txt", cpython(12, LibcVersion{2, 35}, "x86_64"), {}},
            {"supported_tags_cp311_glibc2.36_x86_64.txt", cpython(11, LibcVersion{2, 36}, "x86_64"), {}},
            // This list was computed with manylinux down to 2_5 on every arch (SOURCES.md).
            {"supported_tags_cp312_glibc2.28_aarch64.txt", cpython(12, LibcVersion{2, 28}, "aarch64"),
             {LinuxTagPosition::Last, ManylinuxFloor::Glibc2_5}},
        };
        for (const auto& c : cases) {
            INFO(c.file);
            check_same_list(tag_texts(supported_tags(c.interpreter, c.policy)),
                            stackup::testing::read_lines(wheels(c.file)));
        }
    }

    TEST_CASE("aarch64 by default stops manylinux at 2_17, as pip does") {
        auto expected = stackup::testing::read_lines(wheels("supported_tags_cp312_glibc2.28_aarch64.txt"));
        std::erase_if(expected, [](const std::string& tag) {
            auto platform = tag.substr(tag.rfind('-') + 1);
            auto glibc = manylinux_glibc(platform);
            return glibc && *glibc < LibcVersion{2, 17};
        });
        REQUIRE(expected.size() == 717 - 27 * 12);
        check_same_list(tag_texts(supported_tags(cpython(12, LibcVersion{2, 28}, "aarch64"))), expected);
    }

    TEST_CASE("realworld wheels: installable on cp312 / glibc 2.35 / x86_64, and the best tag") {
        auto rows = stackup::testing::read_tsv(wheels("realworld_wheels_cp312_glibc2.35_x86_64.tsv"));
        REQUIRE(rows.size() == 304);
        const TagRanking ranking(supported_tags(cpython(12, LibcVersion{2, 35}, "x86_64")));
        int installable = 0;
        for (const auto& row : rows) {
            INFO("file name: '", row[0], "'");
            REQUIRE(row.size() == 8);
            auto wheel = stackup::pep::parse_wheel_filename(row[0]);
            REQUIRE(wheel);
            auto rank = ranking.rank(wheel->tags);
            CHECK(rank.has_value() == (row[5] == "true"));
            CHECK((rank ? ranking.tags()[*rank].str() : "") == row[6]);
            installable += rank ? 1 : 0;
        }
        CHECK(installable == 121);
    }

    TEST_CASE("ranking prefers the interpreter's own ABI, then abi3, then pure Python") {
        const TagRanking ranking(supported_tags(cpython(12, LibcVersion{2, 35}, "x86_64")));
        auto rank_of = [&](std::string_view tag) { return ranking.rank(parse_tag(tag).value()); };
        auto own = rank_of("cp312-cp312-manylinux_2_28_x86_64");
        auto stable = rank_of("cp39-abi3-manylinux_2_28_x86_64");
        auto pure = rank_of("py3-none-any");
        REQUIRE((own && stable && pure));
        CHECK(*own < *stable);
        CHECK(*stable < *pure);
        CHECK(*rank_of("cp312-cp312-manylinux_2_35_x86_64") < *own);  // the newest glibc first
        CHECK(!rank_of("cp312-cp312-manylinux_2_36_x86_64"));          // needs a newer glibc
        CHECK(!rank_of("cp311-cp311-manylinux_2_28_x86_64"));
        CHECK(!rank_of("cp313-abi3-manylinux_2_28_x86_64"));
        CHECK(!rank_of("cp312-cp312-manylinux_2_28_aarch64"));
        CHECK(!rank_of("cp312-cp312-musllinux_1_2_x86_64"));
        CHECK(*rank_of("cp310-abi3-manylinux2014_x86_64") == *rank_of("cp310-abi3-manylinux_2_17_x86_64") + 1);
        CHECK(ranking.rank({}) == std::nullopt);
    }

    TEST_CASE("musllinux interpreters get musllinux tags and no manylinux ones") {
        Interpreter alpine{"cpython", 3, 12, "cp312", std::nullopt, LibcVersion{1, 2}, "x86_64"};
        auto platforms = linux_platforms(alpine.arch, alpine.glibc, alpine.musl);
        CHECK(join(platforms) == "musllinux_1_2_x86_64,musllinux_1_1_x86_64,musllinux_1_0_x86_64,linux_x86_64");
        CHECK(supported_tags(alpine).front().str() == "cp312-cp312-musllinux_1_2_x86_64");
    }

    TEST_CASE("interpreter facts: ABI from SOABI, arch from the sysconfig platform") {
        CHECK(abi_from_soabi("cpython-312-x86_64-linux-gnu") == "cp312");
        CHECK(abi_from_soabi("cpython-313t-aarch64-linux-gnu") == "cp313t");
        CHECK(abi_from_soabi("pypy310-pp73-x86_64-linux-gnu").empty());
        CHECK(interpreter_arch("linux-x86_64", false) == "x86_64");
        CHECK(interpreter_arch("linux-x86_64", true) == "i686");
        CHECK(interpreter_arch("linux-aarch64", true) == "armv8l");
        CHECK(Tag{"py3", "none", "any"} == *parse_tag("PY3-None-Any").value().begin());
    }
}
