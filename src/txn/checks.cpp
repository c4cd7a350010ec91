#include "txn/checks.hpp"

#include "venv/probe.hpp"

namespace stackup::txn {

CheckReport run_check(const manifest::Manifest&, const std::filesystem::path& venv, const base::Environment& env,
                      const manifest::Check& check) {
    auto r = base::run_process({{venv::python_of(venv).string(), "-I", "-B", "-c", check.python}, env, std::nullopt});
    CheckReport c{check.name, r.ok(), r.output};
    if (!r.ok()) {
        c.output = r.describe() + (r.output.empty() ? "" : ": " + r.output);
    }
    return c;
}

verify::Mismatch check_mismatch(const CheckReport& c) {
    std::string found = c.output;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) {
        found.pop_back();
    }
    return {"", "", "check '" + c.name + "'", "it passes", found};
}

}  // namespace stackup::txn
