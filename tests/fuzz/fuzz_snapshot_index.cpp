// A snapshot's index.tsv: read, and what was read writes back and reads back the same.
#include "fuzz.hpp"
#include "snapshot/index_tsv.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::snapshot::tsv_format;
    std::string text(stackup::fuzz::text_of(data, size));
    stackup::fuzz::expecting_runtime_errors([&] {
        auto index = index_from_tsv(text, "/fuzz/index.tsv");
        auto again = index_from_tsv(index_to_tsv(index), "/fuzz/again.tsv");
        stackup::fuzz::check(index_to_tsv(again) == index_to_tsv(index));
    });
    return 0;
}
