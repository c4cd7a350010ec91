#include "venv/platform.hpp"

#include <cstdio>

namespace stackup::venv {

std::optional<pep::LibcVersion> parse_glibc(const std::string& libc) {
    pep::LibcVersion v;
    char rest = 0;
    if (std::sscanf(libc.c_str(), "glibc %d.%d%c", &v.major, &v.minor, &rest) == 2) {
        return v;
    }
    return std::nullopt;
}

pep::Interpreter tag_interpreter(const Interpreter& interpreter) {
    pep::Interpreter out;
    out.implementation = interpreter.implementation;
    out.major = interpreter.major;
    out.minor = interpreter.minor;
    out.abi = pep::abi_from_soabi(interpreter.soabi);
    out.glibc = parse_glibc(interpreter.libc);
    out.arch = interpreter.machine;
    return out;
}

}  // namespace stackup::venv
