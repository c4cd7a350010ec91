// Runs a fuzz target once over each file named (or each file in each folder named), without
// libFuzzer: the regression tests, and any compiler. Exit 0 when every input passed.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// The input being run, for the report of a crash (a trap, an abort, a sanitizer's exit).
char current[4096];

extern "C" void name_the_input(int signal) {
    const char prefix[] = "\nreplay: crashed on input: ";
    [[maybe_unused]] auto a = ::write(2, prefix, sizeof prefix - 1);
    [[maybe_unused]] auto b = ::write(2, current, std::strlen(current));
    [[maybe_unused]] auto c = ::write(2, "\n", 1);
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

void run_one(const std::filesystem::path& path) {
    std::snprintf(current, sizeof current, "%s", path.c_str());
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
    for (int signal : {SIGABRT, SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP}) {
        std::signal(signal, name_the_input);
    }
    std::size_t count = 0;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path arg = argv[i];
        if (std::filesystem::is_directory(arg)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
                if (entry.is_regular_file()) {
                    run_one(entry.path());
                    ++count;
                }
            }
        } else if (std::filesystem::exists(arg)) {
            run_one(arg);
            ++count;
        }
    }
    std::printf("replayed %zu inputs\n", count);
    return 0;
}
