#include "verify/binaries.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "base/text.hpp"
#include "binary/arch.hpp"
#include "binary/cuda_libs.hpp"
#include "verify/judgement.hpp"

namespace stackup::verify {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string file_name(const std::string& path) {
    return path.substr(path.rfind('/') + 1);
}

// The dist's files that carry kernels.
std::vector<const venv::BinaryFile*> kernel_files(const venv::DistBinaries& d) {
    std::vector<const venv::BinaryFile*> out;
    for (const auto& f : d.files) {
        if (!f.elf.kernels.empty()) {
            out.push_back(&f);
        }
    }
    return out;
}

// A file that is one of NVIDIA's CUDA libraries (its SONAME, else its name, is in the table):
// those load kernels kept in their own formats, so their .nv_fatbin does not say which GPUs
// they run on (cuFFT 11.3's holds one sm_52 cubin, and cuobjdump -all finds no other, yet it
// runs on every GPU CUDA 12 supports). They are judged by their CUDA major instead.
bool is_cuda_library(const venv::BinaryFile& f) {
    return binary::cuda_library(f.elf.soname.empty() ? file_name(f.path) : f.elf.soname).has_value();
}

// The files whose .nv_fatbin is judged against the GPUs: those with kernels, NVIDIA's own
// libraries left out.
std::vector<const venv::BinaryFile*> judged_kernel_files(const venv::DistBinaries& d) {
    auto out = kernel_files(d);
    out.erase(std::remove_if(out.begin(), out.end(), [](const auto* f) { return is_cuda_library(*f); }), out.end());
    return out;
}

// The oldest GPU a CUDA major's libraries support: CUDA 12.0 removed Kepler (sm_35, sm_37), so
// 5.0; CUDA 13.0 removed Maxwell, Pascal and Volta (sm_50 to sm_72), so 7.5 (the CUDA Toolkit
// release notes, 12.0 and 13.0, "Deprecated or Dropped Features"). nullopt: a major not known here.
std::optional<binary::Gpu> oldest_gpu_of(int cuda_major) {
    switch (cuda_major) {
        case 12: return binary::Gpu{5, 0};
        case 13: return binary::Gpu{7, 5};
        default: return std::nullopt;
    }
}

// NVIDIA's libraries in the dist that do not support `gpu`, by their CUDA major: "libcublas.so.13
// (CUDA 13: 7.5 and newer)".
std::vector<std::string> libraries_without(const venv::DistBinaries& d, const binary::Gpu& gpu) {
    std::vector<std::string> out;
    for (const auto& f : d.files) {
        const std::string soname = f.elf.soname.empty() ? file_name(f.path) : f.elf.soname;
        auto major = is_cuda_library(f) ? binary::cuda_major_of(soname) : std::nullopt;
        auto oldest = major ? oldest_gpu_of(*major) : std::nullopt;
        if (oldest && gpu < *oldest) {
            out.push_back(soname + " (CUDA " + std::to_string(*major) + ": " + std::to_string(oldest->major) + "." +
                          std::to_string(oldest->minor) + " and newer)");
        }
    }
    return out;
}

bool runs_on(const venv::BinaryFile& f, const binary::Gpu& gpu) {
    return std::any_of(f.elf.kernels.begin(), f.elf.kernels.end(),
                       [&](const binary::Kernel& k) { return binary::runs_on(k, gpu); });
}

// How one dist's binaries fare on one GPU: what judge_kernels judges and summarize_binaries says.
struct GpuFit {
    std::vector<std::string> old_libraries;          // NVIDIA's libraries too new for it (libraries_without)
    std::vector<const venv::BinaryFile*> without;    // judged files with no kernel that runs on it
    std::size_t judged = 0;                          // judged files (judged_kernel_files)

    bool no_kernel() const { return judged > 0 && without.size() == judged; }   // none of them runs
    bool some_without() const { return !without.empty() && without.size() < judged; }
};

GpuFit fit_on(const venv::DistBinaries& d, const std::vector<const venv::BinaryFile*>& judged, const binary::Gpu& gpu) {
    GpuFit fit;
    fit.old_libraries = libraries_without(d, gpu);
    fit.judged = judged.size();
    for (const auto* f : judged) {
        if (!runs_on(*f, gpu)) {
            fit.without.push_back(f);
        }
    }
    return fit;
}

// Every kernel of `files`, each once, for "SASS for 75, 80, 90a, no PTX".
std::vector<binary::Kernel> all_kernels(const std::vector<const venv::BinaryFile*>& files) {
    std::vector<binary::Kernel> out;
    for (const auto* f : files) {
        for (const auto& k : f->elf.kernels) {
            if (std::find(out.begin(), out.end(), k) == out.end()) {
                out.push_back(k);
            }
        }
    }
    return out;
}

// Which dist had `library` before, and the `remove:` of steps 0..last that matches it.
std::string removal_of(const manifest::Manifest& m, std::size_t last, const std::string& library,
                       const venv::BinaryFacts* before) {
    if (!before) {
        return "";
    }
    auto it = before->providers.find(library);
    if (it == before->providers.end()) {
        return "";
    }
    for (std::size_t s = 0; s <= last && s < m.steps.size(); ++s) {
        for (const auto& pattern : m.steps[s].remove) {
            if (manifest::removal_matches(pattern, it->second)) {
                return "; " + it->second + " had it, and step '" + m.steps[s].name + "' removed it (remove: " +
                       pattern + ")";
            }
        }
    }
    return "; " + it->second + " had it before this run";
}

}  // namespace

std::map<int, std::string> binary_cuda_majors(const venv::DistBinaries& dist) {
    std::set<std::string> own;
    for (const auto& f : dist.files) {
        own.insert(file_name(f.path));
        if (!f.elf.soname.empty()) {
            own.insert(f.elf.soname);
        }
    }
    std::map<int, std::string> majors;
    for (const auto& f : dist.files) {
        for (const auto& library : f.elf.needed) {
            auto major = own.count(library) ? std::nullopt : binary::cuda_major_of(library);
            if (major) {
                majors.try_emplace(*major, f.path + " needs " + library);
            }
        }
    }
    return majors;
}

GpuTargets gpu_targets(const manifest::Manifest& m, const std::optional<venv::GpuFacts>& reported) {
    if (m.cuda && !m.cuda->arch.empty()) {
        return {m.cuda->arch, "cuda.arch"};
    }
    if (!reported) {
        return {{}, "no cuda.arch, and the GPUs were not asked"};
    }
    if (reported->compute_caps.empty()) {
        return {{}, "no cuda.arch, and no GPU seen (" + reported->source + ")"};
    }
    return {reported->compute_caps, reported->source};
}

std::vector<Judgement> judge_kernels(const venv::BinaryFacts& binaries, const GpuTargets& targets,
                                     const std::vector<std::string>& spared) {
    std::vector<Judgement> out;
    for (const auto& d : binaries.dists) {
        auto files = judged_kernel_files(d);
        if (targets.gpus.empty() || listed(spared, d.dist)) {
            continue;
        }
        std::vector<std::string> failed, warned, passed;
        for (const auto& text : targets.gpus) {
            auto gpu = binary::parse_gpu(text);
            if (!gpu) {
                continue;
            }
            const GpuFit fit = fit_on(d, files, *gpu);
            const std::string sm = binary::sm_of(*gpu);
            if (!fit.old_libraries.empty()) {
                failed.push_back("no support for " + sm + ": " + base::join(fit.old_libraries));
            } else if (fit.no_kernel()) {
                failed.push_back("no kernel for " + sm + ": " + binary::summarize(all_kernels(files)));
            } else if (fit.some_without()) {
                std::vector<std::string> without;
                for (const auto* f : fit.without) {
                    without.push_back(f->path + " (" + binary::summarize(f->elf.kernels) + ")");
                }
                warned.push_back("no kernel for " + sm + " in " + std::to_string(without.size()) + " of " +
                                 std::to_string(fit.judged) + " binaries: " + base::join(without));
            } else if (fit.judged > 0) {
                passed.push_back(sm);
            }
        }
        const std::string expected = "a kernel for " + base::join(targets.gpus) + " (" + targets.from + ")";
        for (const auto& f : failed) {
            out.push_back({"", d.dist, "kernels", expected, f, false});
        }
        for (const auto& w : warned) {
            Judgement j{"", d.dist, "kernels", expected, w, true};
            j.warning = true;
            out.push_back(j);
        }
        if (failed.empty() && warned.empty() && !passed.empty()) {
            out.push_back({"", d.dist, "kernels", expected, "runs on " + base::join(passed), true});
        }
    }
    return out;
}

std::vector<Judgement> judge_libraries(const manifest::Manifest& m, std::size_t last, const venv::BinaryFacts& now,
                                       const venv::BinaryFacts* before, const std::vector<std::string>& spared) {
    auto was_missing = [&](const venv::MissingLibrary& x) {
        return before && std::any_of(before->missing.begin(), before->missing.end(), [&](const venv::MissingLibrary& b) {
                   return b.dist == x.dist && b.file == x.file && b.library == x.library;
               });
    };
    std::vector<Judgement> out;
    for (const auto& x : now.missing) {
        if (listed(spared, x.dist)) {
            continue;
        }
        Judgement j{"", x.dist, "library", x.library + " in reach",
                    "nowhere: " + x.file + " needs it" + removal_of(m, last, x.library, before), false};
        if (was_missing(x)) {
            j.ok = true;
            j.warning = true;
            j.found += " (missing before this run too)";
        }
        out.push_back(j);
    }
    return out;
}

std::vector<DistSummary> summarize_binaries(const venv::BinaryFacts& binaries, const GpuTargets& targets) {
    std::vector<DistSummary> out;
    for (const auto& d : binaries.dists) {
        DistSummary s;
        s.dist = d.dist;
        s.version = d.version;
        s.files = d.files.size();
        auto files = kernel_files(d);
        auto kernels = all_kernels(files);
        std::sort(kernels.begin(), kernels.end(), [](const binary::Kernel& a, const binary::Kernel& b) {
            return std::tie(a.sm, a.kind, a.variant) < std::tie(b.sm, b.kind, b.variant);
        });
        for (const auto& k : kernels) {
            auto text = binary::spelled(k);
            if (std::find(s.kernels.begin(), s.kernels.end(), text) == s.kernels.end()) {
                s.kernels.push_back(text);
            }
        }
        s.kernels_text = binary::summarize(kernels);
        for (const auto& x : binaries.missing) {
            if (x.dist == d.dist) {
                s.missing.push_back(x.library + " (needed by " + x.file + ")");
            }
        }
        const auto judged = judged_kernel_files(d);
        for (const auto& text : targets.gpus) {
            auto gpu = binary::parse_gpu(text);
            if (!gpu) {
                continue;
            }
            const GpuFit fit = fit_on(d, judged, *gpu);
            if (!fit.old_libraries.empty()) {
                s.no_kernel.push_back(binary::sm_of(*gpu) + " (CUDA libraries too new for it)");
            } else if (fit.no_kernel()) {
                s.no_kernel.push_back(binary::sm_of(*gpu));
            } else if (fit.some_without()) {
                s.no_kernel.push_back(binary::sm_of(*gpu) + " in " + std::to_string(fit.without.size()) + " of " +
                                      std::to_string(fit.judged) + " binaries");
            }
        }
        for (const auto& f : d.files) {
            if (!f.elf.unreadable.empty()) {
                s.unreadable.push_back(f.path + ": " + f.elf.unreadable);
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<Judgement> judge_unreadable(const venv::BinaryFacts& binaries) {
    std::vector<Judgement> out;
    for (const auto& d : binaries.dists) {
        for (const auto& f : d.files) {
            if (!f.elf.unreadable.empty()) {
                Judgement j{"", d.dist, "binary", f.path + " readable", "unreadable: " + f.path + ": " + f.elf.unreadable, true};
                j.warning = true;
                out.push_back(j);
            }
        }
    }
    return out;
}

Judgement binaries_summary(const venv::BinaryFacts& binaries, const GpuTargets& targets) {
    if (!binaries.scanned) {
        return {"", "", "binaries", "the dists' shared objects read", "not read: " + binaries.why_not, true};
    }
    std::size_t files = 0, with_kernels = 0, unreadable = 0;
    for (const auto& d : binaries.dists) {
        files += d.files.size();
        with_kernels += kernel_files(d).empty() ? 0 : 1;
        for (const auto& f : d.files) {
            unreadable += f.elf.unreadable.empty() ? 0 : 1;
        }
    }
    std::string found = std::to_string(files) + " shared object(s) in " + std::to_string(binaries.dists.size()) +
                        " dist(s), " + std::to_string(with_kernels) + " with CUDA kernels";
    if (unreadable) {
        found += ", " + std::to_string(unreadable) + " unreadable";
    }
    found += targets.gpus.empty() ? "; kernels not judged: " + targets.from
                                  : "; kernels judged for " + base::join(targets.gpus) + " (" + targets.from + ")";
    return {"", "", "binaries", "the dists' shared objects read", found, true};
}

}  // namespace stackup::verify
