#include <doctest/doctest.h>

#include "installer/summary.hpp"

using namespace stackup::installer;

TEST_SUITE("installer") {
    TEST_CASE("an upgrade: counts and the - / + lines") {
        auto s = parse_uv_output(
            "Using Python 3.11.7 environment at: v1\n"
            "Resolved 1 package in 1ms\n"
            "Prepared 1 package in 2ms\n"
            "Uninstalled 1 package in 153ms\n"
            "Installed 1 package in 0.51ms\n"
            " - torch==2.10.0+cu128\n"
            " + torch==2.11.0.dev20251230+cu130\n");
        CHECK(s.resolved == 1);
        CHECK(s.prepared == 1);
        CHECK(s.uninstalled == 1);
        CHECK(s.installed == 1);
        CHECK_FALSE(s.checked);
        REQUIRE(s.changes.size() == 2);
        CHECK(s.changes[0] == PackageChange{PackageChange::Kind::removed, "torch", "2.10.0+cu128"});
        const PackageChange* torch = s.change_of("torch");
        REQUIRE(torch != nullptr);
        CHECK(torch->kind == PackageChange::Kind::added);
        CHECK(torch->version == "2.11.0.dev20251230+cu130");
        CHECK_FALSE(s.no_op());
    }

    TEST_CASE("a step's uninstall and install add up") {
        auto s = parse_uv_output("Uninstalled 2 packages in 3ms\n - nvidia-cublas-cu12==12.8.4.1\n"
                                 " - nvidia-cuda-runtime-cu12==12.8.90\n");
        s.merge(parse_uv_output("Resolved 1 package in 1ms\nUninstalled 1 package in 1ms\nInstalled 1 package in 1ms\n"
                                " + nvidia-cuda-runtime==13.0.96\n"));
        CHECK(s.uninstalled == 3);
        CHECK(s.installed == 1);
        CHECK(s.resolved == 1);
        REQUIRE(s.changes.size() == 3);
        CHECK(s.change_of("nvidia-cuda-runtime-cu12")->kind == PackageChange::Kind::removed);
        CHECK(s.change_of("nvidia-cuda-runtime")->kind == PackageChange::Kind::added);
    }

    TEST_CASE("a forced reinstall of the same version is a ~ line") {
        auto s = parse_uv_output("Installed 1 package in 0.70ms\n ~ torch==2.11.0.dev20251230+cu130\n");
        REQUIRE(s.change_of("torch") != nullptr);
        CHECK(s.change_of("torch")->kind == PackageChange::Kind::reinstalled);
        CHECK_FALSE(s.no_op());
    }

    TEST_CASE("the no-op line: 'Audited' before uv 0.10.10, 'Checked' since") {
        for (const char* line : {"Audited 3 packages in 29ms", "Checked 3 packages in 29ms"}) {
            CAPTURE(line);
            auto s = parse_uv_output(line);
            CHECK(s.checked == 3);
            CHECK(s.no_op());
        }
    }

    TEST_CASE("with nothing to install uv says 'Checked in' without a count") {
        auto s = parse_uv_output("Using Python 3.11.7 environment at: v\nChecked in 0.05ms\n");
        CHECK(s.checked == 0);
        CHECK(s.no_op());
    }

    TEST_CASE("names are normalized and trailing notes dropped") {
        auto s = parse_uv_output(" + Sgl_Kernel==0.3.16+cu130 (from file:///x)\r\n");
        REQUIRE(s.changes.size() == 1);
        CHECK(s.changes[0].name == "sgl-kernel");
        CHECK(s.changes[0].version == "0.3.16+cu130");
    }

    TEST_CASE("lines that only look like summary lines are ignored") {
        auto s = parse_uv_output(
            "Resolved many packages\n"
            "Installed\n"
            " + not-a-pin\n"
            "error: Installed 3 packages in 2ms\n"
            "Downloading torch (514.2MiB)\n");
        CHECK_FALSE(s.resolved);
        CHECK_FALSE(s.installed);
        CHECK(s.changes.empty());
    }

    TEST_CASE("singular and plural counts") {
        auto s = parse_uv_output("Resolved 29 packages in 380ms\nPrepared 1 package in 5ms\n");
        CHECK(s.resolved == 29);
        CHECK(s.prepared == 1);
    }
}
