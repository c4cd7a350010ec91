#include <doctest/doctest.h>

#include <algorithm>

#include "snapshot/index_tsv.hpp"

using namespace stackup::snapshot;
using namespace stackup::snapshot::tsv_format;

namespace {

TreeIndex every_kind() {
    TreeIndex index;
    index.entries = {
        {".", EntryType::dir, 0750, 0, -1'000'000'001, "", ""},
        {"back\\slash", EntryType::file, 0644, 0, 1, "", ""},
        {"bin/python", EntryType::symlink, 0777, 7, 200, "python3", ""},
        {"caf\xe9.txt", EntryType::file, 0644, 3, 300, "", std::string(64, 'a')},
        {"lib/a \"quoted\"\n.so", EntryType::file, 04755, 1ull << 40, 500, "", ""},
        {"link\xff", EntryType::symlink, 0777, 8, 400, "caf\xe9.txt", ""},
        {"tab\there", EntryType::symlink, 0777, 4, 600, "a\tb", ""},
    };
    index.entries[4].inode = 18'446'744'073'709'551'000ull;
    index.entries[4].ctime_ns = 1'764'691'501'123'456'789;
    return index;
}

std::string error_reading(const std::string& text) {
    try {
        (void)index_from_tsv(text, "/s/index.tsv");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}

const std::string kHeader = "stackup snapshot index 2\n";

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("index.tsv round-trips every field, any byte in names and negative times") {
        const TreeIndex index = every_kind();
        const std::string text = index_to_tsv(index);
        CHECK(index_from_tsv(text, "/s/index.tsv") == index);
        CHECK(std::count(text.begin(), text.end(), '\n') == 8);  // the header and one line per entry
        CHECK(text.find("d\t750\t0\t-1000000001\t0\t0\t-\t.\n") != std::string::npos);
        CHECK(text.find("f\t4755\t1099511627776\t500\t18446744073709551000\t1764691501123456789\t-\t\\") !=
              std::string::npos);                                   // the newline in its name: hex
        CHECK(text.find("\tcaf\xe9.txt\n") != std::string::npos);  // other bytes as they are
        CHECK(text.find("\t\\6261636b5c736c617368\n") != std::string::npos);  // a backslash: hex
    }

    TEST_CASE("index.tsv errors name the file, the line and what is wrong") {
        CHECK(error_reading("").find("/s/index.tsv: line 1: not \"stackup snapshot index 2\"") !=
              std::string::npos);
        CHECK(error_reading(kHeader + "x\t755\t0\t1\t0\t0\t-\t.\n").find("line 2: unknown type \"x\"") !=
              std::string::npos);
        CHECK(error_reading(kHeader + "d\t17777\t0\t1\t0\t0\t-\t.\n").find("line 2: bad mode") != std::string::npos);
        CHECK(error_reading(kHeader + "d\t755\t0\t1\t0\t0\t-\t.\nf\t644\t-3\t1\t0\t0\t-\ta\n")
                  .find("line 3: bad size \"-3\"") != std::string::npos);
        CHECK(error_reading(kHeader + "f\t644\t3\t1\t0\t0\tABC\ta\n").find("bad sha256") != std::string::npos);
        CHECK(error_reading(kHeader + "l\t777\t3\t1\t0\t0\t-\tlink\n").find("line 2: no target") !=
              std::string::npos);
        CHECK(error_reading(kHeader + "f\t644\t3\t1\t0\t0\t-\ta\textra\n").find("more fields") != std::string::npos);
        CHECK(error_reading(kHeader + "f\t644\t3\t1\t0\t0\t-\t\\zz\n").find("bad path") != std::string::npos);
        CHECK(error_reading(kHeader + "f\t644\t3\t1\t0\t0\t-\ta").find("line 2: no newline") != std::string::npos);
        CHECK(error_reading(kHeader + "f\t644\t3\t1\t0\t0\t-\t\n").find("empty path") != std::string::npos);
    }
}
