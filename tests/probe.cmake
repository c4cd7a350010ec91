# The python probe as a file (src/venv/probe.py, embedded as venv::kProbeScript at build time):
#  - probe_compile: it compiles (py_compile), its .pyc going under the build dir, never into src/;
#  - probe_lint: pyflakes finds nothing (Debian's python3-pyflakes; a skip, exit 125, without it);
#  - probe_direct: tests/unit/test_probe_py.py runs it as stackup does in a real venv it makes.
find_program(STACKUP_TEST_PYTHON NAMES python3 REQUIRED)
add_test(NAME probe_compile COMMAND "${STACKUP_TEST_PYTHON}" -m py_compile "${CMAKE_SOURCE_DIR}/src/venv/probe.py")
set_tests_properties(probe_compile PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_BINARY_DIR}/probe-pycache")
add_test(NAME probe_lint COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/check_probe_lint.py")
set_tests_properties(probe_lint PROPERTIES SKIP_RETURN_CODE 125)
add_test(NAME probe_direct COMMAND "${STACKUP_TEST_PYTHON}" "${CMAKE_SOURCE_DIR}/tests/unit/test_probe_py.py")
set_tests_properties(probe_direct PROPERTIES
  ENVIRONMENT "STACKUP_TEST_TMPDIR=${CMAKE_BINARY_DIR}/probe-tmp"
  SKIP_RETURN_CODE 125
  TIMEOUT 300)
