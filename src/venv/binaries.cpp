#include "venv/binaries.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "base/fs.hpp"
#include "base/text.hpp"
#include "binary/cuda_libs.hpp"
#include "pep/name.hpp"

namespace stackup::venv {
namespace {

namespace fs = std::filesystem;

// A RECORD entry that may be a shared object: "x.so", "x.cpython-311-x86_64-linux-gnu.so", "libz.so.1.3".
bool may_be_shared_object(std::string_view path) {
    auto name = path.substr(path.rfind('/') + 1);
    return name.ends_with(".so") || name.find(".so.") != std::string_view::npos;
}

std::string file_name(std::string_view path) {
    return std::string(path.substr(path.rfind('/') + 1));
}

// The dist a .dist-info folder belongs to: "sgl_kernel-0.3.21.dist-info" -> "sgl-kernel".
std::string dist_of_folder(const std::string& folder) {
    auto stem = folder.substr(0, folder.size() - std::string_view(".dist-info").size());
    return pep::normalize_name(stem.substr(0, stem.find('-')));
}

binary::ElfInfo read_cached(const fs::path& file, BinaryCache& cache, std::size_t& files_read) {
    struct stat st{};
    if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};  // listed but gone, or a link: the file it names is listed too where it matters
    }
    BinaryKey key{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                  static_cast<std::int64_t>(st.st_size), base::to_ns(st.st_mtim)};
    auto it = cache.find(key);
    if (it != cache.end()) {
        return it->second;
    }
    ++files_read;
    return cache.emplace(key, binary::read_elf(file)).first->second;
}

// The system's library path: /etc/ld.so.conf (with its `include` globs), then the default dirs.
void read_ld_conf(const fs::path& conf, std::vector<fs::path>& dirs, int depth) {
    std::ifstream in(conf);
    for (std::string line; depth < 8 && std::getline(in, line);) {
        line = std::string(base::trim(line.substr(0, line.find('#'))));
        if (line.rfind("include ", 0) == 0) {
            glob_t found{};
            std::string pattern(base::trim(line.substr(8)));
            if (!pattern.starts_with("/")) {
                pattern = (conf.parent_path() / pattern).string();
            }
            if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
                for (std::size_t i = 0; i < found.gl_pathc; ++i) {
                    read_ld_conf(found.gl_pathv[i], dirs, depth + 1);
                }
            }
            ::globfree(&found);
        } else if (line.starts_with("/")) {
            dirs.emplace_back(line);
        }
    }
}

const std::vector<fs::path>& system_library_dirs() {
    static const std::vector<fs::path> dirs = [] {
        std::vector<fs::path> out;
        read_ld_conf("/etc/ld.so.conf", out, 0);
        for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                              "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}) {
            out.emplace_back(d);
        }
        return out;
    }();
    return dirs;
}

// "$ORIGIN/../lib" for a file in `origin` -> origin/../lib.
fs::path expand_origin(const std::string& dir, const fs::path& origin) {
    std::string out = dir;
    for (const std::string token : {"${ORIGIN}", "$ORIGIN"}) {
        for (auto at = out.find(token); at != std::string::npos; at = out.find(token)) {
            out.replace(at, token.size(), origin.string());
        }
    }
    return out;
}

// Where `library` is looked for, as binaries.hpp says; remembers what it asked the filesystem.
class Resolver {
public:
    Resolver(const BinaryFacts& facts, const base::Environment& env) : facts_(facts) {
        auto it = env.find("LD_LIBRARY_PATH");
        std::istringstream parts(it == env.end() ? "" : it->second);
        for (std::string dir; std::getline(parts, dir, ':');) {
            if (!dir.empty()) {
                env_dirs_.emplace_back(dir);
            }
        }
    }

    bool found(const std::string& library, const BinaryFile& file, const fs::path& site_packages) {
        if (facts_.providers.count(library)) {
            return true;
        }
        const fs::path origin = (site_packages / file.path).parent_path();
        for (const auto* list : {&file.elf.rpath, &file.elf.runpath}) {
            for (const auto& dir : *list) {
                if (exists(expand_origin(dir, origin) / library)) {
                    return true;
                }
            }
        }
        const std::vector<fs::path>* where[] = {&env_dirs_, &system_library_dirs()};
        for (const auto* dirs : where) {
            for (const auto& dir : *dirs) {
                if (exists(dir / library)) {
                    return true;
                }
            }
        }
        return false;
    }

private:
    bool exists(const fs::path& path) {
        auto [it, fresh] = seen_.try_emplace(path.lexically_normal().string(), false);
        if (fresh) {
            struct stat st{};
            it->second = ::stat(path.c_str(), &st) == 0;
        }
        return it->second;
    }

    const BinaryFacts& facts_;
    std::vector<fs::path> env_dirs_;
    std::map<std::string, bool> seen_;
};

}  // namespace

std::string record_path(const std::string& line) {
    if (line.empty() || line.front() != '"') {
        return line.substr(0, line.find(','));
    }
    std::string out;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
                out += '"';
                ++i;
                continue;
            }
            break;
        }
        out += line[i];
    }
    return out;
}

BinaryCache& process_binary_cache() {
    static BinaryCache cache;
    return cache;
}

namespace {

// The RECORD file of each .dist-info folder in site-packages, sorted.
std::vector<fs::path> record_files(fs::directory_iterator& folders) {
    std::vector<fs::path> records;
    for (const auto& entry : folders) {
        const std::string folder = entry.path().filename().string();
        if (folder.ends_with(".dist-info")) {
            records.push_back(entry.path() / "RECORD");
        }
    }
    std::sort(records.begin(), records.end());
    return records;
}

// The shared objects one dist's RECORD lists; counts its files and names their providers in `facts`.
DistBinaries read_record(const fs::path& record, DistBinaries found, const fs::path& site_packages,
                         BinaryCache& cache, BinaryFacts& facts) {
    std::ifstream in(record);
    for (std::string line; std::getline(in, line);) {
        std::string path = record_path(line);
        if (path.empty()) {
            continue;
        }
        ++facts.files_listed;
        facts.providers.try_emplace(file_name(path), found.dist);
        if (!may_be_shared_object(path)) {
            continue;
        }
        auto elf = read_cached(site_packages / path, cache, facts.files_read);
        if (!elf.elf) {
            continue;
        }
        if (!elf.soname.empty()) {
            facts.providers.try_emplace(elf.soname, found.dist);
        }
        found.files.push_back({path, std::move(elf)});
    }
    return found;
}

// The CUDA libraries the dists' shared objects need that nothing provides (the driver's only with `driver`).
void find_missing(BinaryFacts& facts, const base::Environment& env, bool driver, const fs::path& site_packages) {
    Resolver resolver(facts, env);
    for (const auto& d : facts.dists) {
        for (const auto& f : d.files) {
            for (const auto& library : f.elf.needed) {
                auto known = binary::cuda_library(library);
                if (!known || (known->driver && !driver)) {
                    continue;
                }
                if (!resolver.found(library, f, site_packages)) {
                    facts.missing.push_back({d.dist, f.path, library});
                }
            }
        }
    }
}

}  // namespace

BinaryFacts scan_binaries(const fs::path& site_packages, const std::vector<InstalledDist>& dists,
                          const base::Environment& env, bool driver, BinaryCache& cache) {
    const auto started = std::chrono::steady_clock::now();
    BinaryFacts facts;
    std::error_code ec;
    fs::directory_iterator folders(site_packages, ec);
    if (ec) {
        facts.why_not = "cannot read " + site_packages.string() + ": " + ec.message();
        return facts;
    }
    std::map<std::string, std::string> versions;
    for (const auto& d : dists) {
        versions[d.normalized] = d.version;
    }
    for (const auto& record : record_files(folders)) {
        const std::string dist = dist_of_folder(record.parent_path().filename().string());
        if (!versions.count(dist)) {
            continue;  // a stray .dist-info the probe does not count as installed
        }
        DistBinaries found = read_record(record, DistBinaries{dist, versions[dist], {}}, site_packages, cache, facts);
        if (!found.files.empty()) {
            facts.dists.push_back(std::move(found));
        }
    }
    std::sort(facts.dists.begin(), facts.dists.end(),
              [](const DistBinaries& a, const DistBinaries& b) { return a.dist < b.dist; });
    find_missing(facts, env, driver, site_packages);
    facts.scanned = true;
    facts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return facts;
}

}  // namespace stackup::venv
