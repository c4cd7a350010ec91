// White space as Python's str.isspace() sees it, in UTF-8 text: what strip_whitespace and
// has_whitespace of version.hpp drop or find (a version or requirement may be padded with any).

#include "pep/version.hpp"

namespace stackup::pep {

namespace {

// Code points for which Python's str.isspace() is true.
bool is_space_code_point(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

// Length of the UTF-8 sequence starting with `lead`, 0 for a continuation or bad byte.
std::size_t utf8_length(unsigned char lead) {
    if (lead < 0x80) {
        return 1;
    }
    if ((lead & 0xe0) == 0xc0) {
        return 2;
    }
    if ((lead & 0xf0) == 0xe0) {
        return 3;
    }
    if ((lead & 0xf8) == 0xf0) {
        return 4;
    }
    return 0;
}

// Decodes the code point at `text[at]`; nullopt (and length 1) for malformed bytes.
std::optional<char32_t> decode_at(std::string_view text, std::size_t at, std::size_t& length) {
    length = utf8_length(static_cast<unsigned char>(text[at]));
    if (length == 0 || at + length > text.size()) {
        length = 1;
        return std::nullopt;
    }
    char32_t cp = length == 1 ? static_cast<unsigned char>(text[at])
                              : static_cast<unsigned char>(text[at]) & (0x7f >> length);
    for (std::size_t i = 1; i < length; ++i) {
        cp = (cp << 6) | (static_cast<unsigned char>(text[at + i]) & 0x3f);
    }
    return cp;
}

// Byte length of the white space code point ending at text[end - 1], 0 if none.
std::size_t trailing_space_length(std::string_view text, std::size_t end) {
    std::size_t start = end;
    while (start > 0 && end - start < 4) {
        --start;
        if ((static_cast<unsigned char>(text[start]) & 0xc0) != 0x80) {
            break;
        }
    }
    std::size_t length = 0;
    auto cp = decode_at(text, start, length);
    return cp && start + length == end && is_space_code_point(*cp) ? length : 0;
}

}  // namespace

std::string_view strip_whitespace(std::string_view text) {
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t length = 0;
        auto cp = decode_at(text, begin, length);
        if (!cp || !is_space_code_point(*cp)) {
            break;
        }
        begin += length;
    }
    std::size_t end = text.size();
    while (end > begin) {
        std::size_t length = trailing_space_length(text, end);
        if (length == 0) {
            break;
        }
        end -= length;
    }
    return text.substr(begin, end - begin);
}

bool has_whitespace(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t length = 0;
        auto cp = decode_at(text, at, length);
        if (cp && is_space_code_point(*cp)) {
            return true;
        }
        at += length;
    }
    return false;
}

}  // namespace stackup::pep
