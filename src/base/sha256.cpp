#include "base/sha256.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <openssl/evp.h>

namespace stackup::base {

struct Sha256::Impl {
    struct Free {
        void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
    };
    std::unique_ptr<EVP_MD_CTX, Free> ctx{EVP_MD_CTX_new()};
    bool finished = false;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
    if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx.get(), EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("cannot initialise SHA-256");
    }
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
    if (impl_->finished) {
        throw std::logic_error("Sha256::update after hex_digest");
    }
    EVP_DigestUpdate(impl_->ctx.get(), data, size);
}

std::string Sha256::hex_digest() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(impl_->ctx.get(), md.data(), &len);
    impl_->finished = true;
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(len * 2);
    for (unsigned int i = 0; i < len; ++i) {
        out.push_back(hex[md[i] >> 4]);
        out.push_back(hex[md[i] & 0xf]);
    }
    return out;
}

std::string sha256_hex(std::string_view bytes) {
    Sha256 h;
    h.update(bytes);
    return h.hex_digest();
}

std::string sha256_record(std::string_view bytes) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("cannot compute SHA-256");
    }
    std::array<unsigned char, 4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1> b64{};
    const int n = EVP_EncodeBlock(b64.data(), md.data(), static_cast<int>(len));
    std::string out(reinterpret_cast<const char*>(b64.data()), static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '=') {
        out.pop_back();
    }
    for (char& c : out) {
        c = c == '+' ? '-' : c == '/' ? '_' : c;
    }
    return out;
}

std::string sha256_file(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw std::system_error(errno, std::generic_category(), "cannot read " + path.string());
    }
    Sha256 h;
    std::array<char, 1 << 16> buf{};
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int err = errno;
            ::close(fd);
            throw std::system_error(err, std::generic_category(), "cannot read " + path.string());
        }
        if (n == 0) {
            break;
        }
        h.update(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return h.hex_digest();
}

}  // namespace stackup::base
