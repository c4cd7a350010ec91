#pragma once
// Diagnostic logging to stderr (and optionally a file). spdlog lives behind
// this header only; human output and JSON are the CLI's job, not the log's.

#include <filesystem>
#include <string_view>

namespace stackup::base::log {

enum class Level { debug, info, warn, error, off };

void set_level(Level level);
Level level();
// Also writes every message (at debug level) to `path`, appending.
void add_file(const std::filesystem::path& path);

void debug(std::string_view message);
void info(std::string_view message);
void warn(std::string_view message);
void error(std::string_view message);

}  // namespace stackup::base::log
