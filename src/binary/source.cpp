#include "binary/source.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stackup::binary {

std::vector<unsigned char> Source::read(std::uint64_t offset, std::size_t length, const char* what) {
    if (!holds(offset, length)) {
        throw Damaged("past the end of the file: " + std::string(what) + " (" + std::to_string(length) +
                      " bytes at offset " + std::to_string(offset) + ", file size " + std::to_string(size_) + ")");
    }
    if (length > budget - std::min(cost_.bytes, budget)) {
        throw Damaged(std::string(what) + " would take the headers read past " +
                      std::to_string(budget >> 20) + " MiB");
    }
    std::vector<unsigned char> out(length);
    ++cost_.reads;
    cost_.bytes += length;
    if (length > 0) {
        fill(offset, out);
    }
    return out;
}

void FileSource::fill(std::uint64_t offset, std::span<unsigned char> out) {
    std::size_t done = 0;
    while (done < out.size()) {
        auto n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw Damaged(std::string("read: ") + std::strerror(errno));
        }
        if (n == 0) {
            throw Damaged("the file shrank while it was read");
        }
        done += static_cast<std::size_t>(n);
    }
}

void MemorySource::fill(std::uint64_t offset, std::span<unsigned char> out) {
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
}

}  // namespace stackup::binary
