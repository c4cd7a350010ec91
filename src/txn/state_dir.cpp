#include "txn/state_dir.hpp"

#include <string>

#include "base/sha256.hpp"

namespace stackup::txn {

std::filesystem::path state_dir_for(const std::filesystem::path& venv, const std::filesystem::path& root) {
    auto absolute = std::filesystem::absolute(venv).lexically_normal();
    if (!absolute.has_filename()) {
        absolute = absolute.parent_path();
    }
    auto base = root.empty() ? absolute.parent_path() / ".stackup" : root;
    return base / (absolute.filename().string() + "-" + base::sha256_hex(absolute.string()).substr(0, 8));
}

std::filesystem::path requirements_file(const std::filesystem::path& state_dir, std::size_t index) {
    return state_dir / "requirements" / ("step-" + std::to_string(index + 1) + ".txt");
}

}  // namespace stackup::txn
