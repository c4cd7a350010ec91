#pragma once
// Shared by the plan tests: a CPython 3.11 venv on x86_64 Linux, and a project page with one file.
#include <string>

#include "index/client.hpp"
#include "venv/probe.hpp"

namespace stackup::testing {

// Facts of a CPython 3.11.7 venv on x86_64 glibc Linux, with no distribution yet.
inline venv::Facts cpython311_facts() {
    venv::Facts f;
    f.interpreter = {"/v/bin/python", "3.11.7", 3, 11, "cpython", "cpython-311-x86_64-linux-gnu", "x86_64",
                     "glibc 2.36", true};
    f.markers = {{"python_version", "3.11"}, {"python_full_version", "3.11.7"}, {"sys_platform", "linux"},
                 {"os_name", "posix"},       {"platform_machine", "x86_64"},     {"platform_system", "Linux"},
                 {"implementation_name", "cpython"}};
    return f;
}

// The page of `project` on index `index` (root http://127.0.0.1:9/<index>/), answered 200 with `file`.
inline index::ProjectPage one_file_page(const std::string& index, const std::string& project, const std::string& file) {
    index::ProjectPage p;
    p.request = {index, "", project};
    p.outcome = base::HttpOutcome::ok;
    p.status = 200;
    index::IndexFile f;
    f.filename = file;
    f.url = "http://127.0.0.1:9/" + index + "/" + project + "/" + file;
    p.files.push_back(f);
    p.file_count = 1;
    return p;
}

}  // namespace stackup::testing
