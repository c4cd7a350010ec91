#pragma once
// PEP 425 compatibility tags: parsing compressed tag sets, the ordered list of
// tags an interpreter supports (CPython on Linux, as pip orders them), and
// ranking a wheel's tags against that list.

#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::pep {

struct Tag {
    std::string interpreter;  // "cp312", "py3"
    std::string abi;          // "cp312", "abi3", "none"
    std::string platform;     // "manylinux_2_28_x86_64", "any"

    std::string str() const;  // "cp312-cp312-manylinux_2_28_x86_64"
    friend auto operator<=>(const Tag&, const Tag&) = default;
};

// Whether each "."-joined value list of a compressed tag set must be sorted.
enum class TagSetOrder { Any, RequireSorted };

// "py2.py3-none-any" -> {py2-none-any, py3-none-any}, lower-cased; nullopt and
// `*error` set when a component is empty, the interpreter is not an
// identifier, or there are not exactly three fields.
std::optional<std::set<Tag>> parse_tag(std::string_view text, TagSetOrder order = TagSetOrder::Any,
                                       std::string* error = nullptr);

// A glibc or musl version ("2.35" -> {2, 35}).
struct LibcVersion {
    int major = 0;
    int minor = 0;
    friend auto operator<=>(const LibcVersion&, const LibcVersion&) = default;
};

// "3.12" or "3": a Python version as packaging's tag functions take it.
struct PythonVersion {
    int major = 3;
    std::optional<int> minor;
    friend bool operator==(const PythonVersion&, const PythonVersion&) = default;
};

// The facts about a venv's interpreter that decide which wheels it can load.
struct Interpreter {
    std::string implementation = "cpython";
    int major = 3;
    int minor = 0;
    std::string abi;                   // "cp312", from abi_from_soabi()
    std::optional<LibcVersion> glibc;  // none on musl or when unknown
    std::optional<LibcVersion> musl;
    std::string arch;                  // "x86_64", "aarch64"; see interpreter_arch()
    friend bool operator==(const Interpreter&, const Interpreter&) = default;
};

// pip (and packaging < 26.3) list linux_<arch> last; packaging >= 26.3 lists it first.
enum class LinuxTagPosition { Last, First };
// pip stops manylinux at 2_17 except on x86_64/i686 (2_5); some tools go to 2_5 everywhere.
enum class ManylinuxFloor { PerArch, Glibc2_5 };

struct PlatformPolicy {
    LinuxTagPosition linux_tag = LinuxTagPosition::Last;
    ManylinuxFloor floor = ManylinuxFloor::PerArch;
};

// "cpython-312-x86_64-linux-gnu" -> "cp312", "cpython-313t-..." -> "cp313t"; "" if not CPython.
std::string abi_from_soabi(std::string_view soabi);
// sysconfig.get_platform() and pointer width -> the arch tags are built for
// ("linux-x86_64", 32-bit -> "i686"; "linux-aarch64", 32-bit -> "armv8l").
std::string interpreter_arch(std::string_view sysconfig_platform, bool is_32bit);

// Platform tags in preference order: manylinux (PEP 600 and legacy aliases), musllinux, linux_<arch>.
std::vector<std::string> linux_platforms(std::string_view arch, std::optional<LibcVersion> glibc,
                                         std::optional<LibcVersion> musl, PlatformPolicy policy = {});
// The same from sysconfig.get_platform(); a platform that is not linux_* is its own only tag.
std::vector<std::string> sysconfig_platforms(std::string_view sysconfig_platform, bool is_32bit,
                                             std::optional<LibcVersion> glibc, std::optional<LibcVersion> musl,
                                             PlatformPolicy policy = {});

// cpXY-<abi>-<plat>, cpXY-abi3-<plat>, cpXY-none-<plat>, then older cpXY-abi3 down to cp32.
std::vector<Tag> cpython_tags(PythonVersion version, const std::vector<std::string>& abis,
                              const std::vector<std::string>& platforms);
// pyXY-none-<plat> ..., then <interpreter>-none-any and pyXY-none-any ...; `interpreter` may be "".
std::vector<Tag> compatible_tags(PythonVersion version, std::string_view interpreter,
                                 const std::vector<std::string>& platforms);
// Every tag the interpreter supports, most preferred first (packaging's sys_tags()).
std::vector<Tag> supported_tags(const Interpreter& interpreter, PlatformPolicy policy = {});

// The supported tags with a fast lookup; rank 0 is the most preferred.
class TagRanking {
public:
    explicit TagRanking(std::vector<Tag> supported);
    // Index of the best supported tag among `wheel_tags`; nullopt when none is supported.
    std::optional<std::size_t> rank(const std::set<Tag>& wheel_tags) const;
    const std::vector<Tag>& tags() const { return tags_; }

private:
    std::vector<Tag> tags_;
    std::map<Tag, std::size_t> index_;
};

}  // namespace stackup::pep
