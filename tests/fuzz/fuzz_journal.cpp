// The journal reader: JSON lines; a torn last line is dropped, anything else bad throws
// std::runtime_error naming the file.
#include "fuzz.hpp"
#include "txn/journal.hpp"

namespace {

std::string write(const std::vector<stackup::txn::Record>& records) {
    std::string text;
    for (std::size_t i = 0; i < records.size(); ++i) {
        text += stackup::txn::record_to_line(records[i], i == 0);
    }
    return text;
}

}  // namespace

STACKUP_FUZZ_TARGET {
    auto text = stackup::fuzz::text_of(data, size);
    stackup::fuzz::expecting_runtime_errors([&] {
        auto written = write(stackup::txn::parse_journal(text, "/fuzz/journal"));
        // What the reader accepted, written back, reads back as the same journal (each kind
        // carries exactly its fields; those an older writer may leave out read as empty).
        stackup::fuzz::check(write(stackup::txn::parse_journal(written, "/fuzz/again")) == written);
    });
    return 0;
}
