# The unit test cases tagged `* doctest::test_suite("conditional")` (tests/unit/skip.hpp): they need
# what a machine may lack (root, nvcc, python3, reflinks). The `unit` test leaves them out; each is
# a CTest test of its own, unit.<test case name>, whose exit 125 (it called skip()) CTest reports as
# skipped. The list is read from stackup_tests itself after each link, so a tagged case cannot be
# forgotten, and skip() fails a case that is not tagged.
set(stackup_conditional_list "${CMAKE_BINARY_DIR}/unit_conditional_tests.cmake")
add_custom_command(TARGET stackup_tests POST_BUILD
  COMMAND "${CMAKE_COMMAND}" -D "TEST_BINARY=$<TARGET_FILE:stackup_tests>" -D "OUT=${stackup_conditional_list}"
          -P "${CMAKE_CURRENT_LIST_DIR}/list_conditional_tests.cmake"
  VERBATIM)
# Before the first build there is no list: a test that says so rather than none.
file(WRITE "${CMAKE_BINARY_DIR}/unit_conditional_include.cmake"
  "if(EXISTS [==[${stackup_conditional_list}]==])\n"
  "  include([==[${stackup_conditional_list}]==])\n"
  "else()\n"
  "  add_test(unit.conditional_NOT_BUILT stackup_tests_NOT_BUILT)\n"
  "endif()\n")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${CMAKE_BINARY_DIR}/unit_conditional_include.cmake")

# skip() in a case not tagged conditional fails it (tests/unit/test_skip.cpp): the output must say so.
add_test(NAME unit.skip_guard COMMAND stackup_tests --no-intro "--test-suite=skip guard")
set_tests_properties(unit.skip_guard PROPERTIES
  PASS_REGULAR_EXPRESSION "skip\\(\\) in a test case not tagged \\* doctest::test_suite\\(\"conditional\"\\)")
