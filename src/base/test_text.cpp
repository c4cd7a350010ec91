#include <doctest/doctest.h>

#include "base/text.hpp"

using namespace stackup;

TEST_SUITE("base") {
    TEST_CASE("join, trim and ASCII digits") {
        CHECK(base::join({}) == "");
        CHECK(base::join({"a"}) == "a");
        CHECK(base::join({"a", "b", "c"}) == "a, b, c");
        CHECK(base::join({"a", "b"}, "; ") == "a; b");
        CHECK(base::trim("  x y \t\r\n") == "x y");
        CHECK(base::trim(" \n ") == "");
        CHECK(base::trim("") == "");
        CHECK(base::is_ascii_digit('0'));
        CHECK(base::is_ascii_digit('9'));
        CHECK_FALSE(base::is_ascii_digit('a'));
        CHECK_FALSE(base::is_ascii_digit('\xd9'));
    }
}
