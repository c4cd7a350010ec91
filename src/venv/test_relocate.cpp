#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "temp_dir.hpp"
#include "venv/relocate.hpp"

namespace fs = std::filesystem;
using namespace stackup::venv;
using stackup::base::read_file;
using stackup::base::sha256_record;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::uint64_t inode(const fs::path& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

TEST_SUITE("venv") {
    TEST_CASE("relocate rewrites what the build wrote naming its path, and the RECORD lines of those files") {
        stackup::testing::TempDir dir;
        const fs::path tree = dir.path() / "clone";
        const std::string from = tree.string();
        const std::string to = "/srv/venv";
        const auto site = tree / "lib/python3.12/site-packages";
        const std::string script = "#!" + from + "/bin/python\nfrom tool import main\nmain()\n";
        write(tree / "bin/tool", script);
        ::chmod((tree / "bin/tool").c_str(), 0755);
        write(tree / "bin/old", "#!" + from + "/bin/python\n");  // the live venv's own: never rewritten
        write(site / "tool-2.0.dist-info/RECORD",
              "tool/__init__.py,sha256=abc,3\n../../../bin/tool,sha256=stale,10\n\"tool-2.0.dist-info/RE,CORD\",,\n");
        write(site / "tool/__pycache__/x.cpython-312.pyc", std::string("\0\0", 2) + from + "/lib/tool/x.py");
        write(site / "tool/_native.so", std::string("ELF\0", 4) + from);
        write(site / "tool/plain.py", "print('no path here')\n");

        // bin/old is the live venv's own file: not a candidate.
        const std::vector<std::string> written{"bin/tool", "lib/python3.12/site-packages/tool-2.0.dist-info/RECORD",
                                               "lib/python3.12/site-packages/tool/__pycache__/x.cpython-312.pyc",
                                               "lib/python3.12/site-packages/tool/_native.so",
                                               "lib/python3.12/site-packages/tool/plain.py"};
        auto moved = relocate(tree, from, to, written);
        CHECK(moved.rewritten == std::vector<std::string>{"bin/tool"});
        CHECK(moved.removed == std::vector<std::string>{"lib/python3.12/site-packages/tool/__pycache__/x.cpython-312.pyc"});
        CHECK(moved.refused == std::vector<std::string>{"lib/python3.12/site-packages/tool/_native.so"});
        CHECK(moved.records == std::vector<std::string>{"lib/python3.12/site-packages/tool-2.0.dist-info/RECORD"});

        const std::string now = read_file(tree / "bin/tool");
        CHECK(now == "#!/srv/venv/bin/python\nfrom tool import main\nmain()\n");
        struct stat st {};
        REQUIRE(::stat((tree / "bin/tool").c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0755);
        CHECK(read_file(tree / "bin/old") == "#!" + from + "/bin/python\n");
        CHECK(!fs::exists(site / "tool/__pycache__/x.cpython-312.pyc"));
        CHECK(read_file(site / "tool-2.0.dist-info/RECORD") ==
              "tool/__init__.py,sha256=abc,3\n../../../bin/tool,sha256=" + sha256_record(now) + "," +
                  std::to_string(now.size()) + "\n\"tool-2.0.dist-info/RE,CORD\",,\n");
    }

    TEST_CASE("relocation candidates: scripts, RECORDs, and what no RECORD lists; never a wheel's other files") {
        stackup::testing::TempDir dir;
        const fs::path tree = dir.path() / "clone";
        const auto site = tree / "lib/python3.12/site-packages";
        write(site / "torch-2.11.0.dist-info/RECORD",
              "torch/__init__.py,sha256=a,1\ntorch/lib/libtorch_cuda.so,sha256=b,2\n"
              "\"torch/odd,name.py\",sha256=c,3\n../../../bin/torchrun,sha256=d,4\n"
              "torch-2.11.0.dist-info/RECORD,,\r\n");
        const std::vector<std::string> written{
            "bin/torchrun",                                          // a console script: its shebang
            "lib/python3.12/site-packages/torch-2.11.0.dist-info/RECORD",
            "lib/python3.12/site-packages/torch/__init__.py",        // verbatim from the wheel
            "lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
            "lib/python3.12/site-packages/torch/odd,name.py",
            "lib/python3.12/site-packages/torch/__pycache__/__init__.cpython-312.pyc",  // the probe's
            "lib/python3.12/site-packages/torch/_cache.txt",         // written by an import
            "share/jupyter/kernel.json",                             // listed by no written RECORD
        };
        CHECK(relocation_candidates(tree, written) ==
              std::vector<std::string>{"bin/torchrun", "lib/python3.12/site-packages/torch-2.11.0.dist-info/RECORD",
                                       "lib/python3.12/site-packages/torch/__pycache__/__init__.cpython-312.pyc",
                                       "lib/python3.12/site-packages/torch/_cache.txt", "share/jupyter/kernel.json"});
    }

    TEST_CASE("relocate changes nothing where nothing names the build path") {
        stackup::testing::TempDir dir;
        const fs::path tree = dir.path() / "clone";
        write(tree / "bin/tool", "#!/srv/venv/bin/python\n");
        const auto before = inode(tree / "bin/tool");
        auto moved = relocate(tree, tree.string(), "/srv/venv", {"bin/tool"});
        CHECK(moved.rewritten.empty());
        CHECK(moved.records.empty());
        CHECK(inode(tree / "bin/tool") == before);
    }

    TEST_CASE("relocate finds the build path anywhere in a big file, across its 1 MiB reads") {
        stackup::testing::TempDir dir;
        const fs::path tree = dir.path() / "clone";
        const std::string from = tree.string();
        const std::size_t mib = std::size_t(1) << 20;
        // A binary naming the path across the first read's end, one naming it at the very
        // end of a 3 MiB file, one that never does.
        std::string across(2 * mib, '\0');
        across.replace(mib - from.size() / 2, from.size(), from);
        write(tree / "lib/across.so", across);
        std::string at_end(3 * mib, '\0');
        at_end.replace(at_end.size() - from.size(), from.size(), from);
        write(tree / "lib/at_end.so", at_end);
        write(tree / "lib/clean.so", std::string(3 * mib, '\x7f'));
        auto moved = relocate(tree, from, "/srv/venv", {"lib/across.so", "lib/at_end.so", "lib/clean.so"});
        CHECK(moved.refused == std::vector<std::string>{"lib/across.so", "lib/at_end.so"});
        CHECK(moved.rewritten.empty());
    }

    TEST_CASE("sha256_record is RECORD's urlsafe base64 without padding") {
        // python3 -c "import hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(b'hello').digest()).rstrip(b'='))"
        CHECK(sha256_record("hello") == "LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ");
    }
}
