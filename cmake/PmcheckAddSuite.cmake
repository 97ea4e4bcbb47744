# SPDX-License-Identifier: MIT
# pmcheck_add_suite() and pmcheck_add_guard(): register pmcheck test suites
# with CTest, one CTest test per case.  Shipped with the package
# (find_package(pmcheck) makes both available).
#
#   pmcheck_add_suite(TARGET <name> SOURCES <src>...
#                     [LABELS <label>...] [LINK_LIBRARIES <lib>...]
#                     [ARGS <runner arg>...] [RESULTS_DIR <dir>] [NO_MAIN] [SIM])
#
# Builds the executable <name> (linked to pmcheck::harness, and to
# pmcheck::harness_main unless NO_MAIN), then, after every build, asks it for
# its cases (`<name> --list=tsv`, as gtest_discover_tests does) and adds one
# CTest test per case, named suite.case, with:
#   SKIP_RETURN_CODE 77          a case that cannot run here is a skip
#   LABELS pmcheck;<suite>;perf;hardware|software;<LABELS>;<case labels>
#   RESOURCE_LOCK pmcheck_pmu    for hardware cases (they compete for counters)
#   TIMEOUT                      the case's timeout plus 31 s
#   --ctest                      an UNBUDGETED case (a budget expectation with
#                                no budget) exits 77: a skip, never Passed
#   ENVIRONMENT PMCHECK_RESULTS_DIR=<dir>  every case leaves a result file
#   FIXTURES_REQUIRED pmcheck_results      so pmcheck_add_guard() runs last
#
# Every listed case is registered: the runner lists by the events' kinds and
# looks calls: functions up only when the case runs (a library dlopen()ed
# later is not loaded at listing time).  A suite that lists no case gets one
# failing test, <name>.no_cases, that says so.
#
# With SIM, every case whose events all have a simulated equivalent is also
# registered as <suite.case>.sim, run with --backend=sim (valgrind
# callgrind): label "sim" instead of "perf", no PMU lock (runs in parallel),
# the runner's sim timeout (its --list=tsv sixth column: 20 times the case's,
# 600 s by default) plus 31 s.  The suite is compiled with PMCHECK_BUILD_FLAGS set to
# the build type, which becomes part of the sim budget key.
#
#   pmcheck_add_guard([NAME <test name>] [RESULTS_DIR <dir>])
#
# Adds <name>.clear (empties the results directory before the first case)
# and <name> (after the last case: merges the result files, prints the
# summary with grouped skip reasons, and fails only when no case measured
# anything, i.e. every measuring test was skipped, or no result file was
# written; a failed case is a failed test of its own and does not fail it).
include_guard(GLOBAL)

set(_PMCHECK_DISCOVER_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/PmcheckDiscover.cmake")

function(pmcheck_add_suite)
  cmake_parse_arguments(PARSE_ARGV 0 S "NO_MAIN;SIM" "TARGET;RESULTS_DIR"
                        "SOURCES;LABELS;LINK_LIBRARIES;ARGS")
  if(NOT S_TARGET OR NOT S_SOURCES)
    message(FATAL_ERROR "pmcheck_add_suite: TARGET and SOURCES are required")
  endif()
  if(S_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pmcheck_add_suite: unexpected arguments: ${S_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT S_RESULTS_DIR)
    set(S_RESULTS_DIR "${CMAKE_BINARY_DIR}/pmcheck-results")
  endif()
  add_executable(${S_TARGET} ${S_SOURCES})
  if(CMAKE_BUILD_TYPE)
    set(_pmc_build "${CMAKE_BUILD_TYPE}")
  else()
    set(_pmc_build "nobuildtype")
  endif()
  target_compile_definitions(${S_TARGET} PRIVATE "PMCHECK_BUILD_FLAGS=\"${_pmc_build}\"")
  target_link_libraries(${S_TARGET} PRIVATE pmcheck::harness ${S_LINK_LIBRARIES})
  # valgrind 3.19 cannot read the DWARF 5 clang 14 writes (forms strx1,
  # addrx: "unhandled dwarf2 abbrev form code 0x25", then it gives up), so
  # a sim suite built by clang carries DWARF 4.
  if(S_SIM)
    target_compile_options(${S_TARGET} PRIVATE
      $<$<OR:$<COMPILE_LANG_AND_ID:C,Clang>,$<COMPILE_LANG_AND_ID:CXX,Clang>>:-gdwarf-4>)
  endif()
  if(NOT S_NO_MAIN)
    target_link_libraries(${S_TARGET} PRIVATE pmcheck::harness_main)
  endif()

  # Lists cross the custom command as '|'-separated strings.
  string(REPLACE ";" "|" labels_arg "${S_LABELS}")
  string(REPLACE ";" "|" args_arg "${S_ARGS}")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${S_TARGET}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${S_TARGET}_include.cmake")
  if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
    # The runner cannot run on the build machine: one test for the whole suite.
    add_test(NAME ${S_TARGET} COMMAND ${S_TARGET} ${S_ARGS})
    set_tests_properties(${S_TARGET} PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "pmcheck;${S_LABELS}" RESOURCE_LOCK pmcheck_pmu)
    return()
  endif()
  add_custom_command(TARGET ${S_TARGET} POST_BUILD
    COMMAND "${CMAKE_COMMAND}"
            -D "EXE=$<TARGET_FILE:${S_TARGET}>"
            -D "EMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
            -D "OUT=${tests_file}"
            -D "TARGET=${S_TARGET}"
            -D "LABELS=${labels_arg}"
            -D "ARGS=${args_arg}"
            -D "RESULTS_DIR=${S_RESULTS_DIR}"
            -D "SIM=${S_SIM}"
            -P "${_PMCHECK_DISCOVER_SCRIPT}"
    BYPRODUCTS "${tests_file}"
    COMMENT "Discovering pmcheck cases of ${S_TARGET}"
    VERBATIM)
  file(WRITE "${include_file}"
"if(EXISTS \"${tests_file}\")
  include(\"${tests_file}\")
else()
  add_test(${S_TARGET}_NOT_BUILT ${S_TARGET}_NOT_BUILT)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

function(pmcheck_add_guard)
  cmake_parse_arguments(PARSE_ARGV 0 G "" "NAME;RESULTS_DIR" "")
  if(NOT G_NAME)
    set(G_NAME pmcheck.measured)
  endif()
  if(NOT G_RESULTS_DIR)
    set(G_RESULTS_DIR "${CMAKE_BINARY_DIR}/pmcheck-results")
  endif()
  add_test(NAME ${G_NAME}.clear COMMAND pmcheck::cli results --clear "${G_RESULTS_DIR}")
  set_tests_properties(${G_NAME}.clear PROPERTIES FIXTURES_SETUP pmcheck_results
                       LABELS "pmcheck;guard")
  add_test(NAME ${G_NAME} COMMAND pmcheck::cli results --require-measured
           "--json=${G_RESULTS_DIR}.json" "${G_RESULTS_DIR}")
  set_tests_properties(${G_NAME} PROPERTIES FIXTURES_CLEANUP pmcheck_results
                       LABELS "pmcheck;guard")
endfunction()
