#pragma once
// The shared objects each distribution installed, as its RECORD lists them, read for what they
// link and which CUDA kernels they carry (binary/elf.hpp), and the CUDA libraries they need that
// nothing in their reach provides.
//
// Where a library is looked for (the rule the README states), most lenient first, so that the
// real layouts never read as broken: a file of that name or SONAME that any distribution of the
// venv installs (torch reaches nvidia/*/lib through DT_RPATH $ORIGIN/../../nvidia/..., onnxruntime
// preloads them from site-packages/nvidia/*/lib; either way the venv holds them), the needing
// file's own DT_RPATH / DT_RUNPATH ($ORIGIN expanded), LD_LIBRARY_PATH of the child environment,
// and the system's library path (/etc/ld.so.conf and its includes, then the default dirs).
// Only CUDA libraries are judged (binary/cuda_libs.hpp): libtorch.so, which torch's import loads
// before any kernel package, is not; the driver's own (libcuda.so.1) only when a driver is present.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/process.hpp"
#include "binary/elf.hpp"

namespace stackup::venv {

struct BinaryFile {
    std::string path;            // as its RECORD names it, relative to site-packages
    binary::ElfInfo elf;
};

struct DistBinaries {
    std::string dist;            // normalized
    std::string version;
    std::vector<BinaryFile> files;   // the dist's ELF files, readable or not, in RECORD order
};

// A CUDA library that a binary needs and nothing provides.
struct MissingLibrary {
    std::string dist;            // normalized
    std::string file;            // the needing file, as in BinaryFile::path
    std::string library;         // its DT_NEEDED entry, "libcudart.so.12"
};

struct BinaryFacts {
    bool scanned = false;                          // false: why_not says why nothing was read
    std::string why_not;
    std::vector<DistBinaries> dists;               // the dists with at least one ELF file, by name
    std::map<std::string, std::string> providers;  // file name or SONAME -> the dist installing it
    std::vector<MissingLibrary> missing;
    std::size_t files_read = 0;                    // ELF headers read in this scan (the rest came from the cache)
    std::size_t files_listed = 0;                  // RECORD lines of the scanned dists
    double seconds = 0;                            // the scan's wall time
};

// What one file's headers said, kept while the file is the same: device, inode, size, mtime (ns).
using BinaryKey = std::tuple<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t>;
using BinaryCache = std::map<BinaryKey, binary::ElfInfo>;

// The dists to scan: normalized name and version, as the probe found them.
struct InstalledDist {
    std::string normalized;
    std::string version;
};

// Reads the RECORD of every dist in `site_packages` and the headers of every shared object listed
// (a file the cache knows under the same key is not read again). `driver`: a GPU driver is present,
// so libcuda.so.1 and its kin are judged too.
BinaryFacts scan_binaries(const std::filesystem::path& site_packages, const std::vector<InstalledDist>& dists,
                          const base::Environment& env, bool driver, BinaryCache& cache);

// The process's own cache, shared by every scan of one run: a step's scan reads only what it wrote.
BinaryCache& process_binary_cache();

// RECORD's first column, CSV-unquoted: "a/b.so,sha256=...,12" -> "a/b.so".
std::string record_path(const std::string& line);

}  // namespace stackup::venv
