// Wheel and sdist file names: split on '-', then each part is checked by the
// parser that owns it (names, PEP 440 versions, PEP 425 tags).

#include "pep/wheel.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "base/text.hpp"
#include "pep/name.hpp"

namespace stackup::pep {

namespace {

template <typename T>
std::optional<T> fail(std::string* error, std::string what) {
    if (error) {
        *error = std::move(what);
    }
    return std::nullopt;
}


// PEP 427 escapes '-' in names as '_'; bytes >= 0x80 stand in for Unicode word characters.
bool is_wheel_name_char(char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || base::is_ascii_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

bool is_wheel_name(std::string_view name) {
    return !name.empty() && name.find("__") == std::string_view::npos &&
           std::all_of(name.begin(), name.end(), is_wheel_name_char);
}

std::vector<std::string_view> split_dashes(std::string_view text) {
    std::vector<std::string_view> parts;
    while (true) {
        auto at = text.find('-');
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) {
            return parts;
        }
        text.remove_prefix(at + 1);
    }
}

std::optional<BuildTag> parse_build_tag(std::string_view text) {
    auto end = std::find_if(text.begin(), text.end(), [](char c) { return !base::is_ascii_digit(c); });
    if (end == text.begin()) {
        return std::nullopt;  // a build tag starts with a digit
    }
    BuildTag tag;
    for (auto it = text.begin(); it != end; ++it) {
        auto digit = static_cast<std::uint64_t>(*it - '0');
        if (tag.number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
            return std::nullopt;
        }
        tag.number = tag.number * 10 + digit;
    }
    tag.suffix = std::string(end, text.end());
    return tag;
}

std::string quoted(std::string_view filename) { return "'" + std::string(filename) + "'"; }

}  // namespace

std::string BuildTag::str() const { return std::to_string(number) + suffix; }

std::optional<WheelFilename> parse_wheel_filename(std::string_view filename, TagSetOrder order, std::string* error) {
    using R = WheelFilename;
    if (!filename.ends_with(".whl")) {
        return fail<R>(error, "a wheel file name ends with .whl: " + quoted(filename));
    }
    auto parts = split_dashes(filename.substr(0, filename.size() - 4));
    if (parts.size() != 5 && parts.size() != 6) {
        return fail<R>(error, "a wheel file name has 5 or 6 '-'-separated parts: " + quoted(filename));
    }
    if (!is_wheel_name(parts[0])) {
        return fail<R>(error, "invalid project name in wheel file name " + quoted(filename));
    }
    auto version = Version::parse(parts[1]);
    if (!version) {
        return fail<R>(error,
                       "invalid version '" + std::string(parts[1]) + "' in wheel file name " + quoted(filename));
    }
    std::optional<BuildTag> build;
    if (parts.size() == 6 && !(build = parse_build_tag(parts[2]))) {
        return fail<R>(error, "invalid build tag '" + std::string(parts[2]) + "' in wheel file name " + quoted(filename));
    }
    std::string tag_text = std::string(parts[parts.size() - 3]) + "-" + std::string(parts[parts.size() - 2]) + "-" +
                           std::string(parts.back());
    std::string tag_error;
    auto tags = parse_tag(tag_text, order, &tag_error);
    if (!tags) {
        return fail<R>(error, tag_error + " in wheel file name " + quoted(filename));
    }
    return WheelFilename{normalize_name(parts[0]), *version, build, *tags};
}

std::optional<SdistFilename> parse_sdist_filename(std::string_view filename, std::string* error) {
    using R = SdistFilename;
    std::string_view stem;
    if (filename.ends_with(".tar.gz")) {
        stem = filename.substr(0, filename.size() - 7);
    } else if (filename.ends_with(".zip")) {
        stem = filename.substr(0, filename.size() - 4);
    } else {
        return fail<R>(error, "an sdist file name ends with .tar.gz or .zip: " + quoted(filename));
    }
    auto dash = stem.rfind('-');  // the version has no '-', the name may
    if (dash == std::string_view::npos || dash == 0) {
        return fail<R>(error, "an sdist file name is name-version: " + quoted(filename));
    }
    auto version = Version::parse(stem.substr(dash + 1));
    if (!version) {
        return fail<R>(error, "invalid version in sdist file name " + quoted(filename));
    }
    return SdistFilename{normalize_name(stem.substr(0, dash)), *version};
}

}  // namespace stackup::pep
