#pragma once
// Wheel (PEP 427, binary distribution format spec) and sdist file names.

#include <compare>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "pep/tags.hpp"
#include "pep/version.hpp"

namespace stackup::pep {

// "1000abc": a number, then any text; ordered by number first, as installers sort them.
struct BuildTag {
    std::uint64_t number = 0;
    std::string suffix;

    std::string str() const;  // "1000abc"
    friend auto operator<=>(const BuildTag&, const BuildTag&) = default;
};

struct WheelFilename {
    std::string name;                // PEP 503 normalized ("sgl-kernel")
    Version version;
    std::optional<BuildTag> build;
    std::set<Tag> tags;              // the compressed tag set, expanded

    friend bool operator==(const WheelFilename&, const WheelFilename&) = default;
};

struct SdistFilename {
    std::string name;  // PEP 503 normalized
    Version version;

    friend bool operator==(const SdistFilename&, const SdistFilename&) = default;
};

// "torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"; the caller
// percent-decodes names taken from URLs first. nullopt and `*error` set when invalid.
std::optional<WheelFilename> parse_wheel_filename(std::string_view filename, TagSetOrder order = TagSetOrder::Any,
                                                  std::string* error = nullptr);
// "name-version.tar.gz" or "name-version.zip".
std::optional<SdistFilename> parse_sdist_filename(std::string_view filename, std::string* error = nullptr);

}  // namespace stackup::pep
