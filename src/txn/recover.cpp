#include "txn/recover.hpp"

#include <sys/stat.h>

namespace stackup::txn {

namespace {

std::uint64_t root_inode(const std::filesystem::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

}  // namespace

bool switched_in(const OpenTransaction& open, const std::filesystem::path& venv) {
    const auto root = root_inode(venv);
    return open.switching && root != 0 && root == open.clone_inode;
}

record::Switching switching_record(const std::string& generation, const std::filesystem::path& clone,
                                   const std::filesystem::path& venv) {
    return {generation, root_inode(clone), root_inode(venv)};
}

std::optional<std::string> discard_staged(snapshot::Store& store, const std::filesystem::path& state_dir,
                                          const std::string& why) {
    std::optional<StagedGeneration> staged;
    try {
        staged = staged_generation(state_dir);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    if (!staged) {
        return std::nullopt;
    }
    std::string left;
    try {
        (void)store.remove(staged->generation_id);
    } catch (const std::exception& e) {
        left = " (its folder could not be removed: " + std::string(e.what()) + ")";
    }
    clear_staged(state_dir);
    return "discarded the staged generation " + staged->generation_id + " (" + staged->manifest + ", staged " +
           staged->created + ")" + left + ": " + why;
}

std::string blue_green_state(const OpenTransaction& open, const std::filesystem::path& venv) {
    if (switched_in(open, venv)) {
        return "the venv is the verified new generation " + open.generation + " (it was switched in before the run died)";
    }
    return "nothing was changed in " + venv.string() + " (the run died before its switch)";
}

std::string resolve_blue_green(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, const OpenTransaction& open) {
    const std::string who = "an earlier apply of " + open.manifest + " (pid " + std::to_string(open.pid) + ")";
    auto journal = Journal::reopen(state_dir);
    if (switched_in(open, venv)) {
        journal.close(Ending::committed, "completed by a later run: generation " + open.generation +
                                                 " had been switched in before the run died");
        return who + " died right after its switch: " + venv.string() + " is its verified generation " +
               open.generation + "; its journal is closed as committed";
    }
    if (!open.generation.empty()) {
        try {
            (void)store.remove(open.generation);  // recorded, never switched in: its tree is a discarded clone
        } catch (const std::exception&) {
        }
    }
    journal.close(Ending::discarded, "closed by a later run: the run died before its switch; nothing was changed");
    std::string left;
    try {
        for (const auto& id : store.cleanup_incomplete()) {
            left += (left.empty() ? "; removed its incomplete snapshot " : ", ") + id;
        }
    } catch (const std::exception&) {
    }
    return who + " died before its switch: nothing was changed in " + venv.string() +
           "; its clone is discarded and its journal closed" + left;
}

}  // namespace stackup::txn
