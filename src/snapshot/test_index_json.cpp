#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "snapshot/store_json.hpp"

using namespace stackup::snapshot;
using namespace stackup::snapshot::json_format;

namespace {

TreeIndex every_kind() {
    TreeIndex index;
    index.entries = {
        {".", EntryType::dir, 0750, 0, -1'000'000'001, "", ""},
        {"bin/python", EntryType::symlink, 0777, 7, 200, "python3", ""},
        {"caf\xe9.txt", EntryType::file, 0644, 3, 300, "", std::string(64, 'a')},
        {"link\xff", EntryType::symlink, 0777, 8, 400, "caf\xe9.txt", ""},
        {"lib/a \"quoted\"\n.so", EntryType::file, 04755, 1ull << 40, 500, "", ""},
    };
    index.entries[4].inode = 18'446'744'073'709'551'000ull;
    index.entries[4].ctime_ns = 1'764'691'501'123'456'789;
    return index;
}

std::string error_reading(const std::string& text) {
    try {
        (void)index_from_json(text, "/s/index.json");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_SUITE("snapshot") {
    TEST_CASE("index.json round-trips every field, names that are not UTF-8 and negative times") {
        const TreeIndex index = every_kind();
        const std::string text = index_to_json(index);
        CHECK(index_from_json(text, "/s/index.json") == index);
        const auto doc = nlohmann::json::parse(text);  // plain JSON, one entry per line
        CHECK(doc.at("format") == 1);
        CHECK(doc.at("entries")[2].at("path_hex") == "636166e92e747874");
        CHECK(doc.at("entries")[3].at("target_hex") == "636166e92e747874");
        CHECK(doc.at("entries")[4].at("ino") == 18'446'744'073'709'551'000ull);
        CHECK(std::count(text.begin(), text.end(), '\n') == 7);
    }

    TEST_CASE("index.json written by the DOM writer of earlier versions still reads") {
        const std::string older =
            "{\"format\": 1, \"entries\": [\n"
            "{\"mode\":\"0755\",\"mtime_ns\":100,\"path\":\".\",\"size\":0,\"type\":\"dir\"},\n"
            "{\"ctime_ns\":7,\"ino\":42,\"mode\":\"0644\",\"mtime_ns\":300,\"path\":\"a\",\"size\":3,"
            "\"type\":\"file\"}\n"
            "]}\n";
        const TreeIndex index = index_from_json(older, "/s/index.json");
        REQUIRE(index.entries.size() == 2);
        CHECK(index.entries[1].inode == 42);
        CHECK(index.entries[1].ctime_ns == 7);
        CHECK(index.entries[1].mode == 0644);
    }

    TEST_CASE("index.json errors name the file and what is wrong") {
        CHECK(error_reading("{\"format\": 2, \"entries\": []}").find("unsupported format 2") != std::string::npos);
        CHECK(error_reading("{\"entries\": []}").find("format") != std::string::npos);
        CHECK(error_reading("{\"format\": 1, \"entries\": [{\"path\": \"a\"}]}").find("entry 0 lacks") !=
              std::string::npos);
        CHECK(error_reading("{\"format\": 1, \"entries\": [1]}").find("non-object") != std::string::npos);
        CHECK(error_reading("{\"format\": 1, \"entries\": [{\"path\": \"l\", \"type\": \"symlink\", \"mode\": "
                            "\"0777\", \"size\": 1, \"mtime_ns\": 1}]}")
                  .find("no target") != std::string::npos);
        CHECK(error_reading("{\"format\": 1, \"entries\": [").find("/s/index.json") != std::string::npos);
        CHECK(error_reading("{\"format\": 1, \"entries\": [{\"path\": \"a\", \"type\": \"file\", \"mode\": "
                            "\"17777\", \"size\": 1, \"mtime_ns\": 1}]}")
                  .find("bad mode") != std::string::npos);
    }
}
