# Integration tests: each tests/integration/test_*.py drives the real stackup binary, the real
# uv, real venvs and an index server on 127.0.0.1. Exit 125 (a missing prerequisite) is a skip.
set(STACKUP_TEST_UV "${CMAKE_SOURCE_DIR}/.tools/venv/bin/uv" CACHE FILEPATH
    "the uv the integration tests run (contrib/bootstrap.sh installs it here)")
find_program(STACKUP_TEST_PYTHON NAMES python3 REQUIRED)

file(GLOB stackup_integration_tests CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/test_*.py")
foreach(script IN LISTS stackup_integration_tests)
  get_filename_component(name "${script}" NAME_WE)
  string(REGEX REPLACE "^test_" "integration." name "${name}")
  add_test(NAME ${name} COMMAND "${STACKUP_TEST_PYTHON}" "${script}")
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "STACKUP_BIN=$<TARGET_FILE:stackup>;STACKUP_UV=${STACKUP_TEST_UV};PYTHONPATH=${CMAKE_SOURCE_DIR}/tests/support;STACKUP_TEST_TMPDIR=${CMAKE_BINARY_DIR}/integration-tmp"
    SKIP_RETURN_CODE 125
    TIMEOUT 600
    LABELS integration)
endforeach()
