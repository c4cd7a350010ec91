#include "snapshot/reflink.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/fs.hpp"
#include "snapshot/file_data.hpp"
#include "snapshot/integrity.hpp"

namespace stackup::snapshot {

namespace {

// How many entries of the venv the probe looks at for a non-empty file.
constexpr int kProbeSearchLimit = 10'000;

struct FsName {
    unsigned long magic;
    const char* name;
};

// From linux/magic.h (and ZFS's own), spelled out: not every kernel header has all of them.
constexpr FsName kFsNames[] = {
    {0xEF53, "ext4"},       {0x9123683E, "btrfs"},     {0x58465342, "xfs"},   {0x01021994, "tmpfs"},
    {0x794c7630, "overlayfs"}, {0x6969, "nfs"},        {0x2fc12fc1, "zfs"},   {0xF2F52010, "f2fs"},
    {0xca451a4e, "bcachefs"}, {0x65735546, "fuse"},   {0x5346544e, "ntfs"},  {0x4d44, "vfat"},
};

// The first non-empty regular file below `venv`, without following symlinks.
std::optional<std::filesystem::path> probe_file(const std::filesystem::path& venv) {
    std::error_code ec;
    int seen = 0;
    for (std::filesystem::recursive_directory_iterator it(venv, ec), end; !ec && it != end && seen < kProbeSearchLimit;
         it.increment(ec), ++seen) {
        if (it->is_regular_file(ec) && !it->is_symlink(ec) && it->file_size(ec) > 0) {
            return it->path();
        }
    }
    return std::nullopt;
}

// A hidden temp file in `dir`, removed with this.
class ProbeTarget {
public:
    explicit ProbeTarget(const std::filesystem::path& dir) {
        std::string pattern = (dir / ".reflink-probe-XXXXXX").string();
        fd_.reset(::mkostemp(pattern.data(), O_CLOEXEC));
        if (!fd_) {
            throw base::errno_error(errno, "cannot create a probe file in " + dir.string());
        }
        path_ = pattern;
    }
    ~ProbeTarget() { ::unlink(path_.c_str()); }
    ProbeTarget(const ProbeTarget&) = delete;
    ProbeTarget& operator=(const ProbeTarget&) = delete;
    int fd() const { return fd_.get(); }

private:
    base::UniqueFd fd_;
    std::filesystem::path path_;
};

}  // namespace

std::string filesystem_name(const std::filesystem::path& path) {
    struct statfs fs {};
    if (::statfs(path.c_str(), &fs) != 0) {
        return "an unknown filesystem";
    }
    const auto magic = static_cast<unsigned long>(fs.f_type) & 0xffffffffUL;
    for (const auto& known : kFsNames) {
        if (known.magic == magic) {
            return known.name;
        }
    }
    return fmt::format("filesystem {:#x}", magic);
}

ReflinkProbe probe_reflink(const std::filesystem::path& venv, const std::filesystem::path& dir) {
    const auto file = probe_file(venv);
    if (!file) {
        return {false, "the venv " + venv.string() + " has no non-empty file to probe cloning with"};
    }
    const std::string where = file->string() + " (" + filesystem_name(*file) + ") into " + dir.string() + " (" +
                              filesystem_name(dir) + ")";
    base::UniqueFd in = base::open_file(*file, O_RDONLY | O_NOFOLLOW);
    ProbeTarget out(dir);
    const int err = clone_file(in.get(), out.fd());
    if (err == 0) {
        return {true, "cloning " + where + " worked"};
    }
    if (clone_unsupported(err)) {
        return {false, "cloning " + where + " failed: " + std::strerror(err)};
    }
    throw base::errno_error(err, "cannot probe reflinks by cloning " + where);
}

std::vector<std::string> check_clones(const TreeIndex& expected, const std::filesystem::path& tree) {
    const TreeIndex now = index_tree(tree, Contents::records);
    std::vector<std::string> out = diff(expected, now);
    for (const TreeEntry& e : expected.entries) {
        const TreeEntry* seen = e.type == EntryType::file ? now.find(e.path) : nullptr;
        if (seen == nullptr || seen->type != EntryType::file) {
            continue;  // diff said so
        }
        if (auto problem = judge_file(e, *seen, tree / e.path, e.sha256)) {
            out.push_back(std::move(*problem));
        }
    }
    return out;
}

}  // namespace stackup::snapshot
