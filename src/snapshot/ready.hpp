#pragma once
// The ready tree of a hard-link snapshot (<snapshot>/ready): the venv as it
// was snapshotted, as a full tree whose files are links to the snapshot's
// inodes. A restore checks it, brings it up to date and exchanges it with the
// venv in one rename; the replaced venv then lands where the ready tree was
// and is brought back to the snapshot by the same function, so the next
// restore finds a ready tree again and no tree is ever deleted whole. (Each
// new inode costs ext4 a scan past recently freed ones: deleting 20,000 files
// makes every mkdir of the next minutes slower, see tests/bench/README.md.)
//
// The ready tree is a cache: what is in it is never trusted, only compared.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "snapshot/link.hpp"
#include "snapshot/tree.hpp"

namespace stackup::snapshot {

struct Convergence {
    std::vector<std::string> damage;  // the snapshot's own files that fail their integrity record; nothing changed then
    std::uint64_t changes = 0;        // entries created, removed or given their recorded mode/mtime
};

// Makes the tree at `target` (absent, a ready tree, a replaced venv, or junk)
// equal to `expected`: entries of the wrong type, symlink target or inode are
// replaced, missing ones made (files linked from the object store `objects`, link.hpp), extra
// ones removed, modes and mtimes set from the index; unchanged entries cost
// one lstat. Every file it keeps or links is first judged by its integrity
// record (integrity.hpp): when any fails, `damage` says which and nothing is
// changed. Throws std::system_error when the file system refuses a change.
// `known`: records of files just walked elsewhere, for the walk of `target` to reuse (index_tree).
[[nodiscard]] Convergence converge_links(const TreeIndex& expected, const std::filesystem::path& objects,
                                         const std::filesystem::path& target, const FileRecords* known = nullptr);

}  // namespace stackup::snapshot
