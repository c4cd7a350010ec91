#pragma once
// SHA-256 digests (OpenSSL's libcrypto), as lowercase hex.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace stackup::base {

// Incremental hasher: feed bytes, then take the hex digest once.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(const void* data, std::size_t size);
    void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
    std::string hex_digest();  // finishes the hasher

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::string_view bytes);
// The digest as a wheel's RECORD writes it: URL-safe base64 without padding (PEP 376, PEP 427).
std::string sha256_record(std::string_view bytes);
// Throws std::system_error when the file cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace stackup::base
