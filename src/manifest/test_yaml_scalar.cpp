// manifest::yaml_scalar: what stackup writes into a manifest reads back as the same string.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <string>
#include <vector>

#include "manifest/yaml_scalar.hpp"

namespace m = stackup::manifest;

namespace {

// The value of `key: <scalar>` as yaml-cpp reads it, and whether its tag says a string:
// a plain scalar has tag "?" (its type left to the reader), a quoted one "!".
std::pair<std::string, bool> read_back(const std::string& scalar) {
    auto doc = YAML::Load("key: " + scalar + "\n");
    return {doc["key"].as<std::string>(), doc["key"].Tag() == "!"};
}

}  // namespace

TEST_SUITE("manifest") {
    TEST_CASE("yaml_scalar: names and paths stay plain, the rest is quoted") {
        CHECK(m::yaml_scalar("torch") == "torch");
        CHECK(m::yaml_scalar("/srv/env") == "/srv/env");
        CHECK(m::yaml_scalar("torch-2.0+cu128") == "torch-2.0+cu128");
        CHECK(m::yaml_scalar("yes") == "\"yes\"");
        CHECK(m::yaml_scalar("On") == "\"On\"");
        CHECK(m::yaml_scalar("3.12") == "\"3.12\"");
        CHECK(m::yaml_scalar("12.8") == "\"12.8\"");
        CHECK(m::yaml_scalar("==1.0") == "\"==1.0\"");
        CHECK(m::yaml_scalar("") == "\"\"");
        CHECK(m::yaml_scalar("a \"b\" \\ #c") == "\"a \\\"b\\\" \\\\ #c\"");
        CHECK(m::yaml_scalar("a\tb\x7f") == "\"a\\x09b\\x7f\"");
    }

    TEST_CASE("yaml_scalar: every string reads back the same, and none that YAML 1.1 would type stays plain") {
        const std::vector<std::string> texts{
            "torch", "/srv/a \"q\" #x: y", "yes", "no", "Off", "null", "~", "3.12", "13.0", "0x1f", "-1",
            "a: b", "- x", "[x]", "{x}", "&a", "*a", "!t", "%x", "@x", "`x", "'x'", "x #y", "x\ny",
            "\x01\x1f\x7f", "héllo wörld", " lead", "trail ", "", "?x", "|x", ">x"};
        for (const auto& text : texts) {
            CAPTURE(text);
            auto [value, quoted] = read_back(m::yaml_scalar(text));
            CHECK(value == text);
            bool plain_is_safe = !text.empty() && std::isalpha(static_cast<unsigned char>(text[0])) &&
                                 text != "yes" && text != "no" && text != "Off" && text != "null";
            if (!plain_is_safe) {
                CHECK(quoted);
            }
        }
    }

    TEST_CASE("yaml_scalar: why not yaml-cpp's emitter (0.7 writes these so that YAML 1.1 types them or refuses them)") {
        // If a later yaml-cpp quotes them, its emitter can replace yaml_scalar.
        auto emitted = [](const std::string& text) {
            YAML::Emitter out;
            out << text;
            return std::string(out.c_str());
        };
        CHECK(emitted("yes") == "yes");    // a bool to PyYAML
        CHECK(emitted("12.8") == "12.8");  // a float to PyYAML: a toolkit release would fail the schema
        YAML::Emitter quoted;
        quoted << YAML::DoubleQuoted << "a\x7f";
        CHECK(std::string(quoted.c_str()) == "\"a\x7f\"");  // DEL raw: PyYAML refuses the document
    }
}
