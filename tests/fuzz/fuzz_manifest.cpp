// The manifest loader: YAML text -> Manifest, or Error(usage) with file:line:col.
#include "fuzz.hpp"
#include "manifest/manifest.hpp"

STACKUP_FUZZ_TARGET {
    std::string text(stackup::fuzz::text_of(data, size));
    stackup::manifest::ParseOptions options;
    options.env = [](const std::string& name) -> std::optional<std::string> {
        if (name == "HOME") {
            return "/home/fuzz";
        }
        return std::nullopt;
    };
    try {
        stackup::manifest::parse(text, "/fuzz/stackup.yaml", options);
    } catch (const stackup::Error& error) {
        stackup::fuzz::check(error.code() == stackup::ExitCode::usage);
    }
    return 0;
}
