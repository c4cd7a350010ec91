// The unit test runner: doctest's main plus a listener that removes each
// test's temp dirs when it passes and keeps (and names) them when it fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "temp_dir.hpp"

namespace {

struct TempDirListener : public doctest::IReporter {
    explicit TempDirListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        stackup::testing::finish_temp_dirs(stats.testCaseSuccess);
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
    return context.run();
}
