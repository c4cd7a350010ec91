#include "base/argv.hpp"

#include "base/url.hpp"

namespace stackup::base {

std::string render_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) {
            out += ' ';
        }
        bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`<>|;&*?[]{}()!#~") == std::string::npos;
        if (plain) {
            out += arg;
        } else {
            std::string quoted = "'";
            for (char c : arg) {
                quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
            }
            out += quoted + "'";
        }
    }
    return base::redact(out);
}

}  // namespace stackup::base
