#pragma once
// Readers for the shared test fixtures (see fixtures/*/SOURCES.md): lines that
// start with '#' are comments, TSV fields are TAB separated, and fields carry
// backslash escapes (\\ \t \n \r \uXXXX) that are decoded here. A missing
// file or a bad escape throws, so a test fails loudly instead of seeing no rows.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::testing {

using Row = std::vector<std::string>;

// Rows that follow one run of comment lines; `title` is the last comment of the run.
struct Section {
    std::string title;
    std::vector<Row> rows;
};

inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

inline std::uint32_t hex_code_point(std::string_view hex) {
    std::uint32_t cp = 0;
    for (char c : hex) {
        if (hex_digit(c) < 0) {
            throw std::runtime_error("fixture: bad \\u escape: " + std::string(hex));
        }
        cp = cp * 16 + static_cast<std::uint32_t>(hex_digit(c));
    }
    return cp;
}

inline std::string decode_escapes(std::string_view field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] != '\\') {
            out += field[i];
            continue;
        }
        char kind = i + 1 < field.size() ? field[i + 1] : '\0';
        ++i;
        switch (kind) {
            case '\\': out += '\\'; break;
            case 't': out += '\t'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 'u': {
                if (i + 4 >= field.size()) {
                    throw std::runtime_error("fixture: truncated \\u escape in: " + std::string(field));
                }
                append_utf8(out, hex_code_point(field.substr(i + 1, 4)));
                i += 4;
                break;
            }
            default:
                throw std::runtime_error("fixture: unknown escape in: " + std::string(field));
        }
    }
    return out;
}

// Every line as stored (a trailing CR dropped), comments included, nothing decoded.
inline std::vector<std::string> read_raw_lines(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("fixture not found: " + path.string());
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        lines.push_back(line);
    }
    return lines;
}

inline bool is_comment(const std::string& line) { return line.starts_with("#"); }

inline Row split_tsv(std::string_view line) {
    Row fields;
    std::size_t start = 0;
    while (true) {
        std::size_t tab = line.find('\t', start);
        fields.push_back(decode_escapes(line.substr(start, tab == std::string_view::npos ? tab : tab - start)));
        if (tab == std::string_view::npos) {
            return fields;
        }
        start = tab + 1;
    }
}

// Data lines of a .txt fixture, decoded; comments and empty lines skipped.
inline std::vector<std::string> read_lines(const std::filesystem::path& path) {
    std::vector<std::string> out;
    for (const auto& line : read_raw_lines(path)) {
        if (!line.empty() && !is_comment(line)) {
            out.push_back(decode_escapes(line));
        }
    }
    return out;
}

// Data rows of a .tsv fixture (a header row, where the file has one, included).
inline std::vector<Row> read_tsv(const std::filesystem::path& path) {
    std::vector<Row> rows;
    for (const auto& line : read_raw_lines(path)) {
        if (!line.empty() && !is_comment(line)) {
            rows.push_back(split_tsv(line));
        }
    }
    return rows;
}

// Rows grouped by the comment run before them; a trailing run with no rows is dropped.
inline std::vector<Section> read_tsv_sections(const std::filesystem::path& path) {
    std::vector<Section> sections;
    std::string title;
    bool in_comments = false;
    for (const auto& line : read_raw_lines(path)) {
        if (line.empty()) {
            continue;
        }
        if (is_comment(line)) {
            title = line;
            in_comments = true;
            continue;
        }
        if (in_comments || sections.empty()) {
            sections.push_back(Section{title, {}});
            in_comments = false;
        }
        sections.back().rows.push_back(split_tsv(line));
    }
    return sections;
}

}  // namespace stackup::testing
