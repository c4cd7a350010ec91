// PEP 440 versions against pypa/packaging's own test tables (fixtures/pep440/),
// plus hand-written CUDA-stack cases.

#include <doctest/doctest.h>

#include <algorithm>

#include "fixtures.hpp"
#include "pep/version.hpp"
#include "temp_dir.hpp"

using stackup::pep::canonicalize_version;
using stackup::pep::LocalSegment;
using stackup::pep::PreRelease;
using stackup::pep::Version;
using stackup::testing::Row;

namespace {

std::filesystem::path pep440(std::string_view file) { return stackup::testing::fixtures_dir() / "pep440" / file; }

std::string pre_text(const Version& v) {
    if (!v.pre()) {
        return "None";
    }
    constexpr std::string_view names[] = {"a", "b", "rc"};
    return std::string(names[static_cast<int>(v.pre()->kind)]) + std::to_string(v.pre()->number);
}

std::string number_text(const std::optional<std::uint64_t>& n, std::string_view none) {
    return n ? std::to_string(*n) : std::string(none);
}

std::string release_text(const Version& v) {
    std::string out;
    for (auto part : v.release()) {
        out += (out.empty() ? "" : ".") + std::to_string(part);
    }
    return out;
}

std::string bool_text(bool b) { return b ? "true" : "false"; }

// Drops the header row of a table whose first column is named `first`.
std::vector<Row> body_of(std::vector<Row> rows, std::string_view first) {
    REQUIRE(!rows.empty());
    REQUIRE(rows.front().front() == first);
    rows.erase(rows.begin());
    return rows;
}

// The six comparison operators all agree with the expected order of a and b.
bool compares_as(const Version& a, const Version& b, std::strong_ordering expected) {
    return (a < b) == (expected < 0) && (a <= b) == (expected <= 0) && (a == b) == (expected == 0) &&
           (a != b) == (expected != 0) && (a >= b) == (expected >= 0) && (a > b) == (expected > 0);
}

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("versions_valid.txt: every version parses, and its normal form parses to itself") {
        auto lines = stackup::testing::read_lines(pep440("versions_valid.txt"));
        CHECK(lines.size() == 270);
        for (const auto& text : lines) {
            INFO("version: ", text);
            auto v = Version::parse(text);
            REQUIRE(v);
            auto again = Version::parse(v->str());
            REQUIRE(again);
            CHECK(again->str() == v->str());
            CHECK(*again == *v);
        }
    }

    TEST_CASE("versions_invalid.txt: every version is rejected") {
        auto lines = stackup::testing::read_lines(pep440("versions_invalid.txt"));
        CHECK(lines.size() == 21);
        for (const auto& text : lines) {
            INFO("version: ", text);
            CHECK_FALSE(Version::parse(text));
        }
    }

    TEST_CASE("version_order.txt: all 92x92 pairs compare as their positions") {
        auto lines = stackup::testing::read_lines(pep440("version_order.txt"));
        CHECK(lines.size() == 92);
        std::vector<Version> versions;
        for (const auto& text : lines) {
            auto v = Version::parse(text);
            REQUIRE_MESSAGE(v, text);
            versions.push_back(*v);
        }
        for (std::size_t i = 0; i < versions.size(); ++i) {
            for (std::size_t j = 0; j < versions.size(); ++j) {
                INFO(lines[i], " vs ", lines[j]);
                CHECK(compares_as(versions[i], versions[j], i <=> j));
            }
        }
    }

    TEST_CASE("normalization.tsv: str(Version(input))") {
        auto rows = stackup::testing::read_tsv(pep440("normalization.tsv"));
        CHECK(rows.size() == 149);
        for (const auto& row : rows) {
            REQUIRE(row.size() == 2);
            INFO("input: ", row[0]);
            auto v = Version::parse(row[0]);
            REQUIRE(v);
            CHECK(v->str() == row[1]);
        }
    }

    TEST_CASE("version_components.tsv: each asserted component") {
        auto rows = body_of(stackup::testing::read_tsv(pep440("version_components.tsv")), "version");
        CHECK(rows.size() == 50);
        for (const auto& row : rows) {
            REQUIRE(row.size() == 12);
            INFO("version: ", row[0]);
            auto v = Version::parse(row[0]);
            REQUIRE(v);
            const std::string actual[] = {
                std::to_string(v->epoch()),
                release_text(*v),
                pre_text(*v),
                number_text(v->post(), "None"),
                number_text(v->dev(), "None"),
                v->local().empty() ? "None" : v->local(),
                v->public_str(),
                v->base_version(),
                bool_text(v->is_prerelease()),
                bool_text(v->is_devrelease()),
                bool_text(v->is_postrelease()),
            };
            for (std::size_t col = 1; col < row.size(); ++col) {
                if (!row[col].empty()) {  // an empty cell is not asserted by packaging's tests
                    INFO("column ", col);
                    CHECK(actual[col - 1] == row[col]);
                }
            }
        }
    }

    TEST_CASE("canonicalize_version.tsv") {
        auto rows = stackup::testing::read_tsv(pep440("canonicalize_version.tsv"));
        CHECK(rows.size() == 15);
        for (const auto& row : rows) {
            REQUIRE(row.size() >= 2);
            bool strip = row.size() < 3 || row[2] != "strip_trailing_zero=false";
            INFO("input: ", row[0], " strip: ", strip);
            CHECK(canonicalize_version(row[0], strip) == row[1]);
        }
    }

    TEST_CASE("cuda_stack_versions.tsv: components and the ascending order in its comments") {
        auto path = pep440("cuda_stack_versions.tsv");
        auto rows = body_of(stackup::testing::read_tsv(path), "version");
        CHECK(rows.size() == 15);
        std::vector<Version> parsed;
        for (const auto& row : rows) {
            REQUIRE(row.size() == 10);
            INFO("version: ", row[0]);
            auto v = Version::parse(row[0]);
            REQUIRE(v);
            parsed.push_back(*v);
            CHECK(v->str() == row[1]);
            CHECK(v->public_str() == row[2]);
            CHECK(v->base_version() == row[3]);
            CHECK(release_text(*v) == row[4]);
            CHECK((v->pre() ? pre_text(*v) : "-") == row[5]);
            CHECK(number_text(v->post(), "-") == row[6]);
            CHECK(number_text(v->dev(), "-") == row[7]);
            CHECK((v->local().empty() ? "-" : v->local()) == row[8]);
            CHECK(bool_text(v->is_prerelease()) == row[9]);
        }
        std::vector<std::string> expected;
        bool in_order_block = false;
        for (const auto& line : stackup::testing::read_raw_lines(path)) {
            if (in_order_block && line.starts_with("# ")) {
                expected.push_back(line.substr(2));
            }
            in_order_block = in_order_block || line.starts_with("# ascending order");
        }
        CHECK(expected.size() == 15);
        std::sort(parsed.begin(), parsed.end());
        std::vector<std::string> sorted;
        for (const auto& v : parsed) {
            sorted.push_back(v.str());
        }
        CHECK(sorted == expected);
    }

    TEST_CASE("CUDA stack: local labels, nightlies and their order") {
        auto nightly = Version::parse("2.11.0.dev20251230+cu130");
        REQUIRE(nightly);
        CHECK(nightly->local() == "cu130");
        CHECK(nightly->public_str() == "2.11.0.dev20251230");
        CHECK(nightly->is_prerelease());
        CHECK(nightly->is_devrelease());
        CHECK(nightly->dev() == 20251230u);
        CHECK(nightly->without_local().str() == "2.11.0.dev20251230");
        CHECK(nightly->local_segments() == std::vector<LocalSegment>{std::string("cu130")});

        auto upper = Version::parse("2.10.0+CU128");
        REQUIRE(upper);
        CHECK(upper->local() == "cu128");
        CHECK(upper->str() == "2.10.0+cu128");
        CHECK_FALSE(upper->is_prerelease());

        // A nightly of 2.11 sorts above every 2.10 build and below 2.11 itself.
        CHECK(*Version::parse("2.10.0+cu130") < *nightly);
        CHECK(*nightly < *Version::parse("2.11.0"));
        CHECK(*Version::parse("2.11.0.dev20251230+cu129") < *nightly);
        CHECK(*Version::parse("2.10.0") < *Version::parse("2.10.0+cu128"));
        CHECK(*Version::parse("2.10") == *Version::parse("2.10.0"));
        CHECK(*Version::parse("13.0.88") > *Version::parse("12.8.4.1"));
    }

    TEST_CASE("local segments: numbers above words, numbers compared as numbers") {
        auto v = Version::parse("1.0+Ubuntu-1.007_x");
        REQUIRE(v);
        CHECK(v->local() == "ubuntu.1.7.x");
        CHECK(v->local_segments() ==
              std::vector<LocalSegment>{std::string("ubuntu"), std::uint64_t{1}, std::uint64_t{7}, std::string("x")});
        CHECK(*Version::parse("1.0+abc") < *Version::parse("1.0+1"));
        CHECK(*Version::parse("1.0+9") < *Version::parse("1.0+10"));
        CHECK(*Version::parse("1.0+a") < *Version::parse("1.0+a.0"));
        CHECK(*Version::parse("1.0+cu130.00") == *Version::parse("1.0+cu130.0"));
    }

    TEST_CASE("parts and pre-release kinds") {
        auto v = Version::parse("v3!1.2.3.preview4-7.dev8");
        REQUIRE(v);
        CHECK(v->epoch() == 3u);
        CHECK(v->release() == std::vector<std::uint64_t>{1, 2, 3});
        CHECK(v->pre() == PreRelease{PreRelease::Kind::rc, 4});
        CHECK(v->post() == 7u);
        CHECK(v->dev() == 8u);
        CHECK(v->str() == "3!1.2.3rc4.post7.dev8");
        CHECK(v->base_version() == "3!1.2.3");
        auto built = Version::from_parts(3, {1, 2, 3}, PreRelease{PreRelease::Kind::rc, 4}, 7, 8);
        CHECK(built.str() == v->str());
        CHECK(built == *v);
    }

    TEST_CASE("numbers beyond 64 bits are rejected, not wrapped") {
        CHECK(Version::parse("18446744073709551615"));
        CHECK_FALSE(Version::parse("18446744073709551616"));
        CHECK_FALSE(Version::parse("1.0.dev99999999999999999999"));
        CHECK_FALSE(Version::parse("1.0+99999999999999999999"));
        CHECK_FALSE(Version::parse(""));
        CHECK_FALSE(Version::parse("v"));
        CHECK_FALSE(Version::parse("1.0-"));
    }

    TEST_CASE("strip_whitespace and has_whitespace know Python's white space") {
        using stackup::pep::has_whitespace;
        using stackup::pep::strip_whitespace;
        CHECK(strip_whitespace(" \t1.0\n") == "1.0");
        CHECK(strip_whitespace("\u202f1.0\u2029\u3000") == "1.0");
        CHECK(strip_whitespace("\u00e91.0") == "\u00e91.0");  // é is no white space
        CHECK(strip_whitespace("   ").empty());
        CHECK(has_whitespace("1.0\u00a0a"));
        CHECK_FALSE(has_whitespace("1.0a\u00e9"));
    }
}
