#pragma once
// PEP 440 versions: parse, normalize, order.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stackup::pep {

// One segment of a local version label ("cu130", "7" in "+cu130.7").
// Numeric segments sort above alphanumeric ones, as PEP 440 says.
using LocalSegment = std::variant<std::uint64_t, std::string>;

struct PreRelease {
    enum class Kind { a, b, rc };
    Kind kind;
    std::uint64_t number;
    friend auto operator<=>(const PreRelease&, const PreRelease&) = default;
};

class Version {
public:
    // nullopt when `text` is not a valid PEP 440 version.
    static std::optional<Version> parse(std::string_view text);
    // A version from its parts, as parse() would store them (numbers already normalized).
    static Version from_parts(std::uint64_t epoch, std::vector<std::uint64_t> release,
                              std::optional<PreRelease> pre = std::nullopt,
                              std::optional<std::uint64_t> post = std::nullopt,
                              std::optional<std::uint64_t> dev = std::nullopt,
                              std::vector<LocalSegment> local = {});

    std::uint64_t epoch() const { return epoch_; }
    const std::vector<std::uint64_t>& release() const { return release_; }
    const std::optional<PreRelease>& pre() const { return pre_; }
    const std::optional<std::uint64_t>& post() const { return post_; }
    const std::optional<std::uint64_t>& dev() const { return dev_; }
    const std::vector<LocalSegment>& local_segments() const { return local_; }

    // Normalized local label, "" when there is none ("cu130" for "2.11.0+CU130").
    std::string local() const;
    bool is_prerelease() const;  // pre or dev
    bool is_devrelease() const { return dev_.has_value(); }
    bool is_postrelease() const { return post_.has_value(); }

    std::string str() const;            // normalized form, as packaging's str(Version)
    std::string public_str() const;     // without the local label
    std::string base_version() const;   // epoch and release only
    Version without_local() const;

    friend std::strong_ordering operator<=>(const Version&, const Version&);
    friend bool operator==(const Version& a, const Version& b) {
        return (a <=> b) == std::strong_ordering::equal;
    }

private:
    std::uint64_t epoch_ = 0;
    std::vector<std::uint64_t> release_;
    std::optional<PreRelease> pre_;
    std::optional<std::uint64_t> post_;
    std::optional<std::uint64_t> dev_;
    std::vector<LocalSegment> local_;
};

// Python's str.strip(): drops ASCII and Unicode white space (UTF-8) at both ends.
std::string_view strip_whitespace(std::string_view text);
// True when `text` holds any character that str.isspace() calls white space.
bool has_whitespace(std::string_view text);

// packaging.utils.canonicalize_version; invalid versions come back unchanged.
std::string canonicalize_version(std::string_view text, bool strip_trailing_zero = true);

}  // namespace stackup::pep
