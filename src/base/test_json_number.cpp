#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/json_number.hpp"

using nlohmann::json;
using stackup::base::whole_number;
using stackup::base::whole_number_field;

TEST_SUITE("base") {
    TEST_CASE("whole numbers from JSON: in range, or refused (a float cast to an integer is undefined)") {
        CHECK(whole_number<std::uint64_t>(json::parse("18446744073709551615")) == UINT64_MAX);
        CHECK(whole_number<long>(json::parse("-3")) == -3L);
        CHECK(whole_number<int>(json::parse("7")) == 7);
        // A number too big for 64 bits is parsed as a float (found by fuzz_journal: "n": 1e32).
        CHECK_FALSE(whole_number<std::uint64_t>(json::parse("100000000000000000000000000000000")));
        CHECK_FALSE(whole_number<std::uint64_t>(json::parse("1e32")));
        CHECK_FALSE(whole_number<std::uint64_t>(json::parse("1.5")));
        CHECK_FALSE(whole_number<std::uint64_t>(json::parse("-1")));
        CHECK_FALSE(whole_number<int>(json::parse("4294967296")));
        CHECK_FALSE(whole_number<int>(json::parse("\"7\"")));

        json j = json::parse(R"({"n": 3, "bad": 1e32, "null": null})");
        CHECK(whole_number_field<std::size_t>(j, "n", 0) == 3);
        CHECK(whole_number_field<std::size_t>(j, "absent", 9) == 9);
        CHECK(whole_number_field<std::size_t>(j, "null", 9) == 9);
        CHECK_THROWS_WITH_AS(whole_number_field<std::size_t>(j, "bad", 0), doctest::Contains("'bad' is"),
                             std::runtime_error);
        CHECK_THROWS_WITH_AS(whole_number_field<std::size_t>(j, "absent"), "'absent' is missing", std::runtime_error);
    }
}
