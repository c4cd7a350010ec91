#pragma once
// The bytes an ELF reader may see: a file read with pread(2), or a buffer in memory, behind one
// interface whose every read is range-checked against the size and counted. Any read out of
// range, short, or over the budget throws Damaged, which read_elf turns into ElfInfo::unreadable.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace stackup::binary {

// What reading one file cost: the calls and the bytes (the budget is on bytes).
struct ReadCost {
    std::size_t reads = 0;
    std::uint64_t bytes = 0;
};

// The input cannot be read as what it claims to be; the message says where and why.
class Damaged : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Source {
public:
    // Reads beyond this many bytes in all make the input unreadable: the headers of a real
    // shared object are a few hundred KiB; only a hostile file asks for more.
    static constexpr std::uint64_t budget = 32u << 20;

    explicit Source(std::uint64_t size) : size_(size) {}
    virtual ~Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;

    std::uint64_t size() const { return size_; }
    const ReadCost& cost() const { return cost_; }
    // True when [offset, offset + length) lies inside the input (no overflow).
    bool holds(std::uint64_t offset, std::uint64_t length) const {
        return offset <= size_ && length <= size_ - offset;
    }

    // Exactly `length` bytes at `offset`; `what` names them in the error.
    std::vector<unsigned char> read(std::uint64_t offset, std::size_t length, const char* what);

protected:
    // Fills `out` from `offset`, the range already checked; throws Damaged on an I/O error.
    virtual void fill(std::uint64_t offset, std::span<unsigned char> out) = 0;

private:
    std::uint64_t size_;
    ReadCost cost_;
};

// pread(2) on an open fd, never more than asked for.
class FileSource : public Source {
public:
    FileSource(int fd, std::uint64_t size) : Source(size), fd_(fd) {}

private:
    void fill(std::uint64_t offset, std::span<unsigned char> out) override;
    int fd_;
};

class MemorySource : public Source {
public:
    explicit MemorySource(std::span<const unsigned char> bytes) : Source(bytes.size()), bytes_(bytes) {}

private:
    void fill(std::uint64_t offset, std::span<unsigned char> out) override;
    std::span<const unsigned char> bytes_;
};

}  // namespace stackup::binary
