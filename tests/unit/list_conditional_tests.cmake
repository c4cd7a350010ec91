# cmake -D TEST_BINARY=<stackup_tests> -D OUT=<file> -P list_conditional_tests.cmake
# Writes OUT: one add_test per test case of the doctest suite "conditional" (conditional_tests.cmake).
execute_process(COMMAND "${TEST_BINARY}" --test-suite=conditional --list-test-cases
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_BINARY} --list-test-cases failed (${rc}):\n${listing}")
endif()
string(REPLACE ";" "<semicolon>" listing "${listing}")  # names hold ';', a CMake list's separator
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(name IN LISTS lines)
  string(REPLACE "<semicolon>" ";" name "${name}")
  # doctest frames the names with [doctest] lines and a rule of '='.
  if(name STREQUAL "" OR name MATCHES "^\\[doctest\\] " OR name MATCHES "^=+$")
    continue()
  endif()
  if(name MATCHES "\\]==\\]")
    message(FATAL_ERROR "a conditional test case's name holds ']==]': ${name}")
  endif()
  string(REPLACE "," "\\," filter "${name}")  # doctest splits its filters at unescaped commas
  string(APPEND script
    "add_test([==[unit.${name}]==] [==[${TEST_BINARY}]==] [==[--test-case=${filter}]==] --no-intro)\n"
    "set_tests_properties([==[unit.${name}]==] PROPERTIES SKIP_RETURN_CODE 125 LABELS \"unit;conditional\")\n")
endforeach()
file(WRITE "${OUT}" "${script}")
