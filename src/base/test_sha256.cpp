#include <doctest/doctest.h>

#include "base/sha256.hpp"
#include "temp_dir.hpp"

TEST_SUITE("base") {
    TEST_CASE("sha256 of known strings") {
        CHECK(stackup::base::sha256_hex("") ==
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        CHECK(stackup::base::sha256_hex("abc") ==
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    TEST_CASE("sha256 of a file equals sha256 of its bytes") {
        stackup::testing::TempDir dir;
        std::string content(200000, 'x');
        auto path = dir.write("f.bin", content);
        CHECK(stackup::base::sha256_file(path) == stackup::base::sha256_hex(content));
        CHECK_THROWS_AS(stackup::base::sha256_file(dir / "missing"), std::system_error);
    }
}
