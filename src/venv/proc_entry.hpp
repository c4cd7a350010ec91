#pragma once
// Reading one /proc/PID entry relative to its directory's fd, for processes.cpp. Internal to venv/.

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::venv::detail {

// Every entry of one /proc/PID is read relative to its directory's fd: the pid is looked up
// once, not once per file (that lookup was most of a scan's time).
std::optional<std::string> link_at(int dir, const char* name, int& error);

// One read(2), again after EINTR: bytes read, 0 at the end, -1 with `error` set.
ssize_t read_block(int fd, char* buf, std::size_t size, int& error);

// Reads `name` under `dir` up to `cap` bytes; over it, a placeholder. nullopt with `error` set
// when it cannot be opened or read.
std::optional<std::string> read_at(int dir, const char* name, std::size_t cap, int& error);

// Whether `path` is `root` or below it.
bool under(std::string_view path, std::string_view root);

struct Stat {
    int ppid = 0;
    unsigned long long start_ticks = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22) ..."; comm may hold spaces and ')'.
std::optional<Stat> read_stat(int dir);

// The first mapped file under each of `roots` in /proc/PID/maps ("addr perms off dev inode
// path"; "" for none), in their order, read once in blocks (a torch process maps thousands of
// files), at most 2^20 lines.
std::vector<std::string> mapped_under(int dir, const std::vector<std::string>& roots, int& error);

// The first file under each of `roots` that the process holds open (/proc/PID/fd), at most
// 65,536 fds looked at.
std::vector<std::string> open_file_under(int dir, const std::vector<std::string>& roots, int& error);

}  // namespace stackup::venv::detail
