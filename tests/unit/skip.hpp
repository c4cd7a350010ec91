#pragma once
// Loud skips. A test case that needs what a machine may lack (root, nvcc, python3, reflinks) is
// tagged `* doctest::test_suite("conditional")`: the `unit` CTest test leaves it out, and
// tests/unit/conditional_tests.cmake gives it a CTest test of its own. When it calls skip(),
// doctest_main.cpp exits 125 (nothing having failed), which CTest reports as skipped, not passed.

#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace stackup::testing {

inline constexpr const char* kConditionalSuite = "conditional";

// The test case now running; doctest_main.cpp's listener sets it.
inline const doctest::TestCaseData*& current_test_case() {
    static const doctest::TestCaseData* current = nullptr;
    return current;
}

// "<test case>: <reason>" for each skip() so far.
inline std::vector<std::string>& recorded_skips() {
    static std::vector<std::string> skips;
    return skips;
}

// Says, on stderr, why this test case cannot run here; the caller returns at once. In a case not
// tagged conditional it fails instead: run inside `unit`, its skip would read as a pass.
inline void skip(const std::string& reason) {
    const doctest::TestCaseData* test = current_test_case();
    const std::string name = test != nullptr ? test->m_name : "(no test case)";
    if (test == nullptr || std::strcmp(test->m_test_suite, kConditionalSuite) != 0) {
        FAIL_CHECK("skip() in a test case not tagged * doctest::test_suite(\"conditional\"), so CTest would "
                   "count it as passed: tag it (tests/unit/skip.hpp); the reason given: "
                   << reason);
        return;
    }
    std::cerr << "SKIP: " << name << ": " << reason << std::endl;
    recorded_skips().push_back(name + ": " + reason);
}

}  // namespace stackup::testing
