#pragma once
// Pure judgement of what the dists' shared objects say (venv/binaries.hpp): the CUDA major they
// were built for, the CUDA libraries they need that nothing provides, and whether their kernels
// run on the target GPUs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "venv/binaries.hpp"
#include "venv/probe.hpp"
#include "venv/driver.hpp"
#include "verify/judgement.hpp"

namespace stackup::verify {

// The CUDA majors a dist's binaries need, each with its first evidence
// ("sgl_kernel/common_ops.abi3.so needs libcudart.so.12"). A library the dist carries itself
// (triton's own libcupti) says nothing about the venv's CUDA and is left out; so are sonames that
// several majors share (libcurand.so.10, libcusparse.so.12).
std::map<int, std::string> binary_cuda_majors(const venv::DistBinaries& dist);

// The GPUs the kernels must run on: cuda.arch, else what nvidia-smi reported; `from` says which,
// or why there are none.
struct GpuTargets {
    std::vector<std::string> gpus;   // "9.0", "12.0"
    std::string from;
};
GpuTargets gpu_targets(const manifest::Manifest& m, const std::optional<venv::GpuFacts>& reported);

// Per dist with CUDA kernels: for each target GPU, is there a binary whose kernels run there?
// None: a failure ("no kernel for sm_100: SASS for 75, 80, 90a, no PTX"); only some binaries: a
// warning naming those without. `spared`: dists a later step installs again.
std::vector<Judgement> judge_kernels(const venv::BinaryFacts& binaries, const GpuTargets& targets,
                                     const std::vector<std::string>& spared);

// Every CUDA library a binary needs that nothing provides fails its dist, naming the library and,
// when a dist that had it is gone by a `remove:` of steps 0..last, that removal. A library that was
// already missing in `before` is said as a warning (the run did not break it); with no `before`
// (verify) it fails.
std::vector<Judgement> judge_libraries(const manifest::Manifest& m, std::size_t last, const venv::BinaryFacts& now,
                                       const venv::BinaryFacts* before, const std::vector<std::string>& spared);

// What `inspect` shows of one dist with shared objects.
struct DistSummary {
    std::string dist;                    // normalized
    std::string version;
    std::size_t files = 0;               // its ELF files
    std::string cuda;                    // "CUDA 12: sgl_kernel/x.so needs libcudart.so.12", "CUDA 13 (cu130)", "" when none says
                                         // (verify.hpp's summarize_dists says it; summarize_binaries leaves it "")
    std::vector<std::string> kernels;    // every kernel, spelled ("sm_90a", "compute_90"), sorted
    std::string kernels_text;            // "SASS for 80, 90a; PTX for 90" / "no kernels"
    std::vector<std::string> missing;    // "libcudart.so.12 (needed by x.so)"
    std::vector<std::string> no_kernel;  // per target GPU without a kernel: "sm_100" (any binary) or "sm_100 in 2 of 5"
    std::vector<std::string> unreadable; // "x.so: truncated section header table"
};
std::vector<DistSummary> summarize_binaries(const venv::BinaryFacts& binaries, const GpuTargets& targets);

// A shared object whose headers could not be read: a warning naming it and why, never a crash or a pass unsaid.
std::vector<Judgement> judge_unreadable(const venv::BinaryFacts& binaries);

// One passing line of what was read: "412 shared objects in 9 dists; kernels judged for 9.0, 12.0 (cuda.arch)".
Judgement binaries_summary(const venv::BinaryFacts& binaries, const GpuTargets& targets);

}  // namespace stackup::verify
