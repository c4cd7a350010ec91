// skip.hpp's guard: skip() in a case that is not tagged conditional fails it, as CTest would
// count its skip as a pass. The CTest test unit.skip_guard runs it alone and expects the failure.
#include <doctest/doctest.h>

#include "skip.hpp"

TEST_CASE("skip() in a test case not tagged conditional fails it" * doctest::test_suite("skip guard")) {
    stackup::testing::skip("this case is not tagged conditional");
}
