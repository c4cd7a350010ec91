#pragma once
// The venv's interpreter as the tag rules see it (PEP 425 / 600), from the probe's facts.

#include <optional>

#include "pep/tags.hpp"
#include "venv/probe.hpp"

namespace stackup::venv {

// "glibc 2.36" -> {2, 36}; nullopt for anything else.
std::optional<pep::LibcVersion> parse_glibc(const std::string& libc);

pep::Interpreter tag_interpreter(const Interpreter& interpreter);

}  // namespace stackup::venv
