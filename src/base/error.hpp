#pragma once
// The one error type for "this command cannot go on": it carries the exit
// code the CLI will return and, for manifests, where in the file it happened.

#include <optional>
#include <stdexcept>
#include <string>

namespace stackup {

// The CLI contract's exit codes (PRODUCT.md).
enum class ExitCode : int {
    ok = 0,
    verification_failed = 1,
    usage = 2,
    preflight_failed = 3,
    installer_failed = 4,
    rollback_failed = 5,
    locked = 6,
    interrupted = 7,
    running = 8,  // processes use the venv: the verified generation is staged, not switched in
    not_finished = 9,  // stackup itself could not finish (clone, relocation, the live venv's check,
                       // switch): the venv left as it was
};

struct SourceLocation {
    std::string file;
    int line = 0;    // 1-based
    int column = 0;  // 1-based
    friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

class Error : public std::runtime_error {
public:
    Error(ExitCode code, std::string message)
        : std::runtime_error(std::move(message)), code_(code) {}
    Error(ExitCode code, SourceLocation where, std::string message)
        : std::runtime_error(std::move(message)), code_(code), where_(std::move(where)) {}

    ExitCode code() const { return code_; }
    const std::optional<SourceLocation>& where() const { return where_; }
    // "file:line:col: message" when there is a location, the message otherwise.
    std::string describe() const {
        if (!where_) {
            return what();
        }
        return where_->file + ":" + std::to_string(where_->line) + ":" +
               std::to_string(where_->column) + ": " + what();
    }

private:
    ExitCode code_;
    std::optional<SourceLocation> where_;
};

}  // namespace stackup
