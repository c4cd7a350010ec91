"""Installer runs are hermetic: the caller's UV_* and PIP_* settings (a wrong index, find-links,
a uv.toml) do not change what gets installed; the manifest's own env: does reach uv.
The right (cu130) files are installed anyway, and uv's cache is where the manifest says.
"""
import harness
from harness import check, check_module, check_rc, child_env, find_stackup, run
from wheels import TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    wrong = server.url("cu128")
    uv_toml = t.tmp / "uv.toml"
    uv_toml.write_text(f'index-url = "{wrong}"\nno-deps = true\n')
    cache = t.tmp / "manifest-cache"
    doc = t.upgrade_doc(server, venv)
    doc["env"] = {"UV_CACHE_DIR": str(cache), **harness.OFFLINE_ENV}
    manifest = t.manifest(doc)

    poison = {"UV_INDEX_URL": wrong, "UV_DEFAULT_INDEX": wrong, "UV_INDEX": wrong,
              "UV_EXTRA_INDEX_URL": wrong, "PIP_INDEX_URL": wrong, "PIP_EXTRA_INDEX_URL": wrong,
              "PIP_FIND_LINKS": str(t.tmp / "indexes" / "cu128" / "torch"), "UV_FIND_LINKS": wrong,
              "UV_CONFIG_FILE": str(uv_toml), "UV_PRERELEASE": "disallow", "UV_NO_DEPS": "1",
              "UV_CACHE_DIR": str(t.tmp / "callers-cache"), "STACKUP_UV": t.uv_path}
    asked_before = len(server.requests("/cu128/"))  # the venv's own set-up used cu128
    r = run([find_stackup(), "apply", manifest, "--state-dir", t.state_dir], env=child_env(poison))
    check_rc(r, 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(len(server.requests("/cu128/")) == asked_before, "the caller's wrong index was asked", r)
    check(cache.is_dir() and any(cache.iterdir()), "the manifest's UV_CACHE_DIR did not reach uv", r)
    check(not (t.tmp / "callers-cache").exists(), "the caller's UV_CACHE_DIR reached uv", r)


harness.main(scenario)
