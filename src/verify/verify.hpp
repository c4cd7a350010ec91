#pragma once
// Pure judgement: expectations + facts -> mismatches, and the mixed-CUDA scan.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "venv/probe.hpp"
#include "verify/binaries.hpp"
#include "verify/cuda.hpp"
#include "verify/judgement.hpp"

namespace stackup::verify {

// The failed ones, as mismatches.
std::vector<Mismatch> failures(const std::vector<Judgement>& judgements);

// "step 'torch': torch: cuda: expected 13.1, found 13.0"
std::string describe(const Mismatch& m);

// An expectation with the step that set it.
struct ActiveExpectation {
    std::string step;
    manifest::Expectation expectation;
    friend bool operator==(const ActiveExpectation&, const ActiveExpectation&) = default;
};

// Every expectation in force after step `last` (0-based): this step's and all
// earlier ones, a later step's expectation replacing an earlier one for the same dist.
std::vector<ActiveExpectation> expectations_through(const manifest::Manifest& m, std::size_t last);

// What the probe must import to judge `active`.
std::vector<venv::ImportRequest> import_requests(const std::vector<ActiveExpectation>& active);

// Every check of every expectation: installed, version, local, import, __version__, cuda, attrs.
std::vector<Judgement> judge_expectations(const std::vector<ActiveExpectation>& active, const venv::Facts& facts);
std::vector<Mismatch> check_expectations(const std::vector<ActiveExpectation>& active, const venv::Facts& facts);

// The target CUDA: from cuda.toolkit, else from the expectations' `local`
// labels when they name one CUDA; nullopt when unknown.
std::optional<CudaTarget> target_cuda(const manifest::Manifest& m);
// Its label ("cu130").
std::optional<std::string> target_cuda_label(const manifest::Manifest& m);

// The CUDA builds among `dists` (verify/cuda.hpp's table) against `target`.
struct CudaScan {
    std::vector<Mismatch> mixed;                    // built for another CUDA than the target
    std::vector<std::string> allowed;               // "name version (CUDA 12)" that allow_mixed let pass
    std::map<int, std::vector<std::string>> seen;   // CUDA major -> "name version" of every CUDA-specific dist
};
// `allow_mixed` and `spared` (what a later step installs) are exempt; with no
// target nothing is mixed, but `seen` still says what is there. A dist's binaries, where
// `binaries` read any that need a CUDA library of one major, are the first evidence
// (binary_cuda_majors); its name and version label the fallback.
CudaScan scan_cuda(const std::vector<venv::Distribution>& dists, const std::optional<CudaTarget>& target,
                   const std::vector<std::string>& allow_mixed, const std::vector<std::string>& spared = {},
                   const venv::BinaryFacts* binaries = nullptr);
// The CUDA build of `d`: from its binaries where they say, else from its name and label.
std::optional<CudaFlavour> cuda_build(const venv::Distribution& d, const venv::BinaryFacts* binaries,
                                      const std::optional<CudaTarget>& target = std::nullopt);
// scan_cuda(...).mixed against the target label "cu130".
std::vector<Mismatch> scan_mixed_cuda(const std::vector<venv::Distribution>& dists, const std::string& target,
                                      const std::vector<std::string>& allow_mixed);
// "CUDA 12: nvidia-cuda-runtime-cu12 12.8.90; CUDA 13: cuda-bindings 13.0.1"
std::string describe_seen(const CudaScan& scan);

// What `inspect` shows of each dist with shared objects (summarize_binaries), with the CUDA
// build cuda_build reads for it.
std::vector<DistSummary> summarize_dists(const std::vector<venv::Distribution>& dists,
                                         const venv::BinaryFacts& binaries, const GpuTargets& targets);
// The scan as judgements: one per mixed dist, else one passing line that names
// what allow_mixed hid; with no target one passing "not judged" line with what was seen.
std::vector<Judgement> cuda_judgements(const CudaScan& scan, const std::optional<CudaTarget>& target);

// Every `remove:` of steps 0..last: a dist matching it fails ("removed",
// expected absent) unless a step from the removing one to `last` installs it
// again; a pattern matching nothing passes.
std::vector<Judgement> judge_removals(const manifest::Manifest& m, std::size_t last,
                                      const std::vector<venv::Distribution>& dists);

// What a round is judged against besides the manifest and the facts.
struct Context {
    const venv::Facts* before = nullptr;            // the venv before the run (apply), none for verify
    std::optional<venv::GpuFacts> gpus{};           // what nvidia-smi reported, when it was asked
};

// The whole round after a step: expectations, removals, the mixed-CUDA scan, the binaries'
// libraries and kernels; the scans spare the dists a later step will install (after the last step, none).
std::vector<Judgement> judge_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts,
                                 const Context& context = {});
// The failures of judge_all.
std::vector<Mismatch> check_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts,
                                const Context& context = {});

}  // namespace stackup::verify
