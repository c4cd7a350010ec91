// What other programs and files say, read by regexes and numbers: nvidia-smi's answer, the
// driver's /proc file, nvcc --version, a glibc version, the lock file's holder line.
#include <string>

#include "base/lock.hpp"
#include "fuzz.hpp"
#include "venv/driver.hpp"
#include "venv/platform.hpp"
#include "venv/toolkit.hpp"

STACKUP_FUZZ_TARGET {
    auto text = stackup::fuzz::text_of(data, size);
    if (auto v = stackup::venv::parse_nvidia_smi(text)) {
        stackup::fuzz::check(!v->empty());
    }
    stackup::venv::parse_proc_driver_version(text);
    stackup::venv::parse_nvcc_release(text);
    std::string line(text);
    stackup::venv::parse_glibc(line);
    stackup::base::parse_holder(line.substr(0, line.find('\n')));
    return 0;
}
