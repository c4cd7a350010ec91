#pragma once
// `stackup init`'s pure part: facts about a venv in, manifest text (schema 1) out.
// The baseline describes the venv as it is (`verify` passes on it at once); the
// upgrade draft moves its CUDA-flavoured dists to a target CUDA, for review.

#include <string>
#include <string_view>

#include "plan/draft_input.hpp"

namespace stackup::plan {

// Is `normalized` one of the GPU stack's own dists, pinned even without a CUDA marker
// (torch family, triton, flash-attn, xformers, flashinfer, sgl-kernel)?
bool is_gpu_stack(const std::string& normalized);

// The baseline manifest. Throws Error(usage) when the venv holds nothing CUDA-flavoured
// and nothing of the GPU stack (the baseline would check nothing).
std::string draft_baseline(const DraftInput& in);

// The draft of the upgrade to `toolkit` ("13.0"). Throws Error(usage) when `toolkit` is
// not a CUDA version, or when nothing in the venv is built for another CUDA.
std::string draft_upgrade(const DraftInput& in, const std::string& toolkit);

}  // namespace stackup::plan
