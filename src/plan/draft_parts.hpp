#pragma once
// What the two drafts of draft.hpp share: draft.cpp writes the baseline, draft_upgrade.cpp the
// upgrade to a target CUDA. Internal to plan/.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plan/draft_input.hpp"
#include "verify/cuda.hpp"

namespace stackup::plan::detail {

// Where the GPU stack's dists come from in an upgrade draft: the step (and index) they go in.
enum class Group { torch, sglang, with_torch, note };

struct Known {
    std::string_view name;
    Group group;
    std::string_view note;   // for Group::note: why it is not listed as a package
};

// The GPU stack's entry for `normalized`, nullptr when it is not one of its dists.
const Known* known(const std::string& normalized);

// One installed dist that the manifest speaks about.
struct Tracked {
    const venv::Distribution* dist;
    std::optional<verify::CudaFlavour> flavour;
    std::string local;   // its local version label, "" when none
};

// "CUDA 12 (rule)" or verify's description of the flavour; "" for none.
std::string describe_flavour(const std::optional<verify::CudaFlavour>& f);

// The installed dists built for a CUDA or belonging to the GPU stack, in the venv's order.
std::vector<Tracked> tracked_dists(const DraftInput& in);

// `text` padded with spaces to `width` (at least one space after it), then `comment`.
std::string with_comment(const std::string& text, std::size_t width, const std::string& comment);

// Every installed dist with its version and CUDA, as comment lines.
std::string installed_block(const DraftInput& in);

// version, name, venv, python (and the toolkit for a baseline): the manifest's head.
std::string head(const DraftInput& in, const std::string& name);

// "{version: \"==2.10.0+cu128\", local: cu128}"
std::string inline_map(const std::vector<std::pair<std::string, std::string>>& fields);

// "[a, b]"
std::string inline_list(const std::vector<std::string>& items);

}  // namespace stackup::plan::detail
