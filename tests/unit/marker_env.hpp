#pragma once
// The marker environment of a Linux x86_64 CPython 3.12 host, shared by the tests that evaluate markers.

#include "pep/marker.hpp"

namespace stackup::testing {

inline pep::MarkerEnvironment linux_cpython312() {
    return {
        {"implementation_name", "cpython"},
        {"implementation_version", "3.12.3"},
        {"os_name", "posix"},
        {"platform_machine", "x86_64"},
        {"platform_release", "6.8.0"},
        {"platform_system", "Linux"},
        {"platform_version", "#1 SMP PREEMPT_DYNAMIC"},
        {"python_full_version", "3.12.3"},
        {"platform_python_implementation", "CPython"},
        {"python_version", "3.12"},
        {"sys_platform", "linux"},
        {"extra", ""},
    };
}

}  // namespace stackup::testing
