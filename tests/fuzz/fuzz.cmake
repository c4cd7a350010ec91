# Fuzz targets (tests/fuzz/fuzz_*.cpp), each built two ways:
#  - always: stackup_replay_<target>, the target behind a plain main that runs it over files; the
#    CTest `fuzz.replay` runs every target over its seeds and its regressions/ (any compiler);
#  - with -DSTACKUP_FUZZ=ON (clang): stackup_fuzz_<target>, linked with libFuzzer. The whole
#    build is then instrumented for coverage and ASan + UBSan (contrib/fuzz.sh sets this up).
file(GLOB stackup_fuzz_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/fuzz_*.cpp")
set(stackup_fuzz_libs stackup_pep stackup_binary stackup_manifest stackup_index stackup_installer stackup_txn
    stackup_snapshot stackup_plan)
set(stackup_replay_targets "")
foreach(source IN LISTS stackup_fuzz_sources)
  get_filename_component(target "${source}" NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" target "${target}")
  add_executable(stackup_replay_${target} "${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp" "${source}")
  target_link_libraries(stackup_replay_${target} PRIVATE ${stackup_fuzz_libs})
  list(APPEND stackup_replay_targets stackup_replay_${target})
  if(STACKUP_FUZZ)
    add_executable(stackup_fuzz_${target} "${source}")
    target_link_libraries(stackup_fuzz_${target} PRIVATE ${stackup_fuzz_libs})
    target_link_options(stackup_fuzz_${target} PRIVATE -fsanitize=fuzzer)
    list(APPEND stackup_fuzz_all stackup_fuzz_${target})
  endif()
endforeach()
if(STACKUP_FUZZ)
  add_custom_target(fuzz_all DEPENDS ${stackup_fuzz_all})
endif()

add_test(NAME fuzz.replay
         COMMAND "${STACKUP_TEST_PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/replay.py" "${CMAKE_BINARY_DIR}"
                 --fixtures "${STACKUP_FIXTURES_DIR}")
set_tests_properties(fuzz.replay PROPERTIES TIMEOUT 300)
