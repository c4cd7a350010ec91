// PEP 503 names against fixtures/wheels/name_normalization.tsv (packaging's test_utils.py).

#include <doctest/doctest.h>

#include "fixtures.hpp"
#include "pep/name.hpp"
#include "temp_dir.hpp"

using stackup::pep::is_normalized_name;
using stackup::pep::is_valid_name;
using stackup::pep::normalize_name;

TEST_SUITE("pep") {
    TEST_CASE("name_normalization.tsv: normalized form, validity, is_normalized_name") {
        auto rows = stackup::testing::read_tsv(stackup::testing::fixtures_dir() / "wheels" / "name_normalization.tsv");
        CHECK(rows.size() == 29 + 5);  // packaging's rows, then the COMPUTED CUDA-stack names
        for (const auto& row : rows) {
            REQUIRE(row.size() == 3);
            REQUIRE((row[2] == "valid" || row[2] == "INVALID"));
            INFO("name: '", row[0], "'");
            bool valid = row[2] == "valid";
            CHECK(normalize_name(row[0]) == row[1]);
            CHECK(is_valid_name(row[0]) == valid);
            CHECK(is_normalized_name(row[0]) == (valid && row[0] == row[1]));
            if (valid) {
                CHECK(is_normalized_name(row[1]));
            }
        }
    }

    TEST_CASE("names: the CUDA stack's spellings meet in one form") {
        CHECK(normalize_name("Sgl_Kernel") == "sgl-kernel");
        CHECK(normalize_name("flashinfer_python") == normalize_name("FlashInfer-Python"));
        CHECK(normalize_name("nvidia-cuda-runtime-cu12") == "nvidia-cuda-runtime-cu12");
        CHECK(is_valid_name("a"));
        CHECK(is_valid_name("torch2"));
        CHECK_FALSE(is_valid_name(""));
        CHECK_FALSE(is_valid_name("torch-"));
        CHECK_FALSE(is_valid_name("-torch"));
        CHECK_FALSE(is_valid_name("torch vision"));
        CHECK_FALSE(is_valid_name("t\u00f6rch"));
        CHECK_FALSE(is_normalized_name("sgl_kernel"));
        CHECK_FALSE(is_normalized_name("a--b"));
    }
}
