// The unit test runner: doctest's main plus a listener that removes each
// test's temp dirs when it passes and keeps (and names) them when it fails,
// and tells skip() which test case is running. Exit 125 (CTest's skip) when
// a test case skipped and none failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "skip.hpp"
#include "temp_dir.hpp"

namespace {

struct TempDirListener : public doctest::IReporter {
    explicit TempDirListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& test) override { stackup::testing::current_test_case() = &test; }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        stackup::testing::finish_temp_dirs(stats.testCaseSuccess);
        stackup::testing::current_test_case() = nullptr;
    }
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("temp_dirs", 1, TempDirListener);

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int rc = context.run();
    const auto& skips = stackup::testing::recorded_skips();
    if (rc != 0 || skips.empty()) {
        return rc;
    }
    std::cerr << "SKIP: " << skips.size() << " test case(s) did not run here:\n";
    for (const auto& skip : skips) {
        std::cerr << "  " << skip << "\n";
    }
    return 125;  // CTest's SKIP_RETURN_CODE
}
