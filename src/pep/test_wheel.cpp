// Wheel and sdist file names against fixtures/wheels/ (packaging's test_utils.py
// tables, and every wheel linked from the stored real index pages).

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "fixtures.hpp"
#include "pep/tags.hpp"
#include "pep/wheel.hpp"
#include "temp_dir.hpp"

using stackup::pep::parse_sdist_filename;
using stackup::pep::parse_wheel_filename;
using stackup::pep::Tag;
using stackup::pep::TagSetOrder;
using stackup::pep::WheelFilename;
using stackup::testing::Row;

namespace {

std::vector<Row> wheels_tsv(std::string_view file) {
    return stackup::testing::read_tsv(stackup::testing::fixtures_dir() / "wheels" / file);
}

// The fixtures list tag sets as sorted, comma-joined strings.
std::string joined_tags(const std::set<Tag>& tags) {
    std::vector<std::string> texts;
    for (const auto& tag : tags) {
        texts.push_back(tag.str());
    }
    std::sort(texts.begin(), texts.end());
    std::string out;
    for (const auto& text : texts) {
        out += (out.empty() ? "" : ",") + text;
    }
    return out;
}

void check_parsed_as(const WheelFilename& wheel, const Row& row) {
    CHECK(wheel.name == row[1]);
    CHECK(wheel.version.str() == row[2]);
    CHECK((wheel.build ? wheel.build->str() : "") == row[3]);
    CHECK(joined_tags(wheel.tags) == row[4]);
}

}  // namespace

TEST_SUITE("pep") {
    TEST_CASE("wheel_filenames.tsv: name, version, build tag and tag set, or invalid") {
        auto rows = wheels_tsv("wheel_filenames.tsv");
        REQUIRE(rows.size() == 30);
        int valid = 0;
        for (const auto& row : rows) {
            INFO("file name: '", row[0], "'");
            std::string error;
            auto wheel = parse_wheel_filename(row[0], TagSetOrder::Any, &error);
            if (row[1] == "INVALID") {
                CHECK(!wheel);
                CHECK(!error.empty());
                continue;
            }
            REQUIRE(row.size() >= 5);
            REQUIRE_MESSAGE(wheel, error);
            check_parsed_as(*wheel, row);
            if (row.size() > 5 && row[5] == "INVALID_WITH_validate_order") {
                CHECK(!parse_wheel_filename(row[0], TagSetOrder::RequireSorted));
            }
            ++valid;
        }
        CHECK(valid == 15);
        // The sorted spelling of an unsorted row above passes the strict check.
        CHECK(parse_wheel_filename("pyvirtualcam-0.13.0-cp310-cp310-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
                                   TagSetOrder::RequireSorted));
    }

    TEST_CASE("sdist_filenames.tsv: name and version, or invalid") {
        auto rows = wheels_tsv("sdist_filenames.tsv");
        REQUIRE(rows.size() == 7);
        for (const auto& row : rows) {
            INFO("file name: '", row[0], "'");
            std::string error;
            auto sdist = parse_sdist_filename(row[0], &error);
            if (row[1] == "INVALID") {
                CHECK(!sdist);
                CHECK(!error.empty());
                continue;
            }
            REQUIRE_MESSAGE(sdist, error);
            CHECK(sdist->name == row[1]);
            CHECK(sdist->version.str() == row[2]);
        }
    }

    TEST_CASE("realworld wheels from the stored index pages parse as packaging parses them") {
        auto rows = wheels_tsv("realworld_wheels_cp312_glibc2.35_x86_64.tsv");
        REQUIRE(rows.size() == 304);
        for (const auto& row : rows) {
            INFO("file name: '", row[0], "'");
            REQUIRE(row.size() == 8);
            std::string error;
            auto wheel = parse_wheel_filename(row[0], TagSetOrder::Any, &error);
            REQUIRE_MESSAGE(wheel, error);
            check_parsed_as(*wheel, row);
        }
    }

    TEST_CASE("build tags order by number, then by suffix") {
        auto a = parse_wheel_filename("foo-1.0-2-py3-none-any.whl");
        auto b = parse_wheel_filename("foo-1.0-10-py3-none-any.whl");
        auto c = parse_wheel_filename("foo-1.0-10b-py3-none-any.whl");
        REQUIRE((a && b && c));
        CHECK(*a->build < *b->build);  // 2 < 10 numerically, not as text
        CHECK(*b->build < *c->build);
        CHECK(c->build->number == 10);
        CHECK(c->build->suffix == "b");
        CHECK(!parse_wheel_filename("foo-1.0-py3-none-any.whl")->build);
    }

    TEST_CASE("a wheel file name keeps a literal + in the version and rejects %2B") {
        auto wheel = parse_wheel_filename("torch-2.10.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl");
        REQUIRE(wheel);
        CHECK(wheel->version.local() == "cu128");
        CHECK(*wheel == *parse_wheel_filename("torch-2.10.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"));
        std::string error;
        CHECK(!parse_wheel_filename("torch-2.10.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl", TagSetOrder::Any,
                                    &error));
        CHECK(error.find("version") != std::string::npos);
    }
}
