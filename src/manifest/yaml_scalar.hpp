#pragma once
// Writing YAML where it is read (manifest/): one scalar of a manifest that stackup writes
// (`init`'s drafts), so that yaml-cpp here and any YAML 1.1 reader (PyYAML, the schema check)
// read back the same string.
//
// Not yaml-cpp's emitter: 0.7's writes "yes", "on" and "3.12" plain, which YAML 1.1 reads as a
// bool and a float (a toolkit "12.8" would fail the schema), and writes DEL (0x7f) raw inside
// double quotes, which PyYAML refuses ("unacceptable character #x007f"); test_yaml_scalar pins both.

#include <string>
#include <string_view>

namespace stackup::manifest {

// Plain when that is safe (a name, a path, nothing YAML 1.1 reads as a bool or null), else
// double-quoted with `"` and `\` escaped and control characters as \xNN.
[[nodiscard]] std::string yaml_scalar(std::string_view text);

}  // namespace stackup::manifest
