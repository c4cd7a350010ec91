# The differential test of src/pep against pypa/packaging (Debian's python3-packaging 23.0):
# pep440_differential.py feeds thousands of versions and specifiers to stackup_pep_oracle
# and to packaging and fails on any disagreement not in its documented allow-list.
# It skips (exit 125) when that packaging is missing or another version (README.md here).
add_executable(stackup_pep_oracle "${CMAKE_CURRENT_LIST_DIR}/pep_oracle.cpp")
target_link_libraries(stackup_pep_oracle PRIVATE stackup_pep)

add_test(NAME differential.pep440
         COMMAND /usr/bin/python3 "${CMAKE_CURRENT_LIST_DIR}/pep440_differential.py")
set_tests_properties(differential.pep440 PROPERTIES
  ENVIRONMENT "STACKUP_PEP_ORACLE=$<TARGET_FILE:stackup_pep_oracle>;STACKUP_FIXTURES_DIR=${STACKUP_FIXTURES_DIR}"
  SKIP_RETURN_CODE 125
  TIMEOUT 120)
