#pragma once
// Whole numbers out of JSON that stackup reads back (journal, snapshot metadata, the page
// cache's record line, the probe's answer). nlohmann converts a float to an integer type with
// a plain cast, which is undefined for 1e32 or for -1 into an unsigned, and it parses a number
// too big for 64 bits as a float: a damaged file must be refused, not read as garbage. Generic
// over the JSON type, so this header includes no JSON library (ARCHITECTURE.md).

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace stackup::base {

// `value` as T when it is a whole number in T's range, else nullopt.
template <typename T, typename Json>
std::optional<T> whole_number(const Json& value) {
    static_assert(std::is_integral_v<T>);
    using Limits = std::numeric_limits<T>;
    if (value.is_number_unsigned()) {
        auto v = value.template get<std::uint64_t>();
        if (v <= static_cast<std::uint64_t>(Limits::max())) {
            return static_cast<T>(v);
        }
    } else if (value.is_number_integer()) {
        auto v = value.template get<std::int64_t>();
        if (std::is_signed_v<T> && v >= static_cast<std::int64_t>(Limits::min()) &&
            v <= static_cast<std::int64_t>(Limits::max())) {
            return static_cast<T>(v);
        }
    }
    return std::nullopt;
}

// object[key] as T: `fallback` when the key is absent or null; throws std::runtime_error naming
// the key when it holds anything but a whole number in T's range.
template <typename T, typename Json>
T whole_number_field(const Json& object, const char* key, T fallback) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
        return fallback;
    }
    if (auto v = whole_number<T>(*it)) {
        return *v;
    }
    throw std::runtime_error(std::string("'") + key + "' is " + it->dump(-1).substr(0, 40) +
                             ", not a whole number in range");
}

// object[key] as T, which must be there; throws std::runtime_error naming the key otherwise.
template <typename T, typename Json>
T whole_number_field(const Json& object, const char* key) {
    if (object.find(key) == object.end()) {
        throw std::runtime_error(std::string("'") + key + "' is missing");
    }
    return whole_number_field<T>(object, key, T{});
}

}  // namespace stackup::base
