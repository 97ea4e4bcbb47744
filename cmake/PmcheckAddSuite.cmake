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
set(_PMCHECK_GBENCH_ADAPTER "${CMAKE_CURRENT_LIST_DIR}/gbench_adapter.cpp")

# The build type as the sim budget key names it (PMCHECK_BUILD_FLAGS).
function(_pmcheck_build_type var)
  if(CMAKE_BUILD_TYPE)
    set(${var} "${CMAKE_BUILD_TYPE}" PARENT_SCOPE)
  else()
    set(${var} "nobuildtype" PARENT_SCOPE)
  endif()
endfunction()

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
  _pmcheck_build_type(_pmc_build)
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

  _pmcheck_discover("${S_TARGET}" "" "${S_LABELS}" "${S_ARGS}" "${S_RESULTS_DIR}" "${S_SIM}")
endfunction()

# After every build of TARGET, ask it for its cases (`TARGET MODE --list=tsv`)
# and register each with CTest (PmcheckDiscover.cmake).  MODE is "" for a
# suite, "--pmcheck" for a Google Benchmark program.
function(_pmcheck_discover target mode labels args results_dir sim)
  # Lists cross the custom command as '|'-separated strings.
  string(REPLACE ";" "|" labels_arg "${labels}")
  string(REPLACE ";" "|" args_arg "${args}")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
    # The runner cannot run on the build machine: one test for the whole suite.
    add_test(NAME ${target} COMMAND ${target} ${mode} ${args})
    set_tests_properties(${target} PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "pmcheck;${labels}" RESOURCE_LOCK pmcheck_pmu)
    return()
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}"
            -D "EXE=$<TARGET_FILE:${target}>"
            -D "MODE=${mode}"
            -D "EMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
            -D "OUT=${tests_file}"
            -D "TARGET=${target}"
            -D "LABELS=${labels_arg}"
            -D "ARGS=${args_arg}"
            -D "RESULTS_DIR=${results_dir}"
            -D "SIM=${sim}"
            -P "${_PMCHECK_DISCOVER_SCRIPT}"
    BYPRODUCTS "${tests_file}"
    COMMENT "Discovering pmcheck cases of ${target}"
    VERBATIM)
  file(WRITE "${include_file}"
"if(EXISTS \"${tests_file}\")
  include(\"${tests_file}\")
else()
  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# The Google Benchmark functions the adapter wraps (cmake/gbench_adapter.cpp:
# its PMC_GB_* names), and main.
set(_PMCHECK_GBENCH_WRAPPED
  main
  _ZN9benchmark5State16StartKeepRunningEv
  _ZN9benchmark5State17FinishKeepRunningEv
  _ZN9benchmark5State11PauseTimingEv
  _ZN9benchmark5State12ResumeTimingEv
  _ZN9benchmark5State13SkipWithErrorEPKc
  _ZN9benchmark5State13SkipWithErrorERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
  _ZN9benchmark5State15SkipWithMessageERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
  _ZN9benchmark8internal25RegisterBenchmarkInternalEPNS0_9BenchmarkE
  _ZN9benchmark8internal9Benchmark10IterationsEl
  _ZN9benchmark8internal9Benchmark7MinTimeEd
  _ZN9benchmark8internal9Benchmark13MinWarmUpTimeEd
  _ZN9benchmark8internal9Benchmark11RepetitionsEi
  _ZN9benchmark22RunSpecifiedBenchmarksEv
  _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterE
  _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterES1_
  _ZN9benchmark22RunSpecifiedBenchmarksENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
  _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
  _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterES1_NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE)

#   pmcheck_add_gbench(TARGET <benchmark executable> [EVENTS <event>...]
#                      [ITERATIONS <n>] [SUITE <name>] [TIMEOUT <seconds>]
#                      [LABELS <label>...] [ARGS <runner arg>...]
#                      [RESULTS_DIR <dir>] [SIM])
#
# Makes an existing Google Benchmark program (an executable target linked
# to benchmark::benchmark, and benchmark_main or a main of its own) a pmcheck
# suite, with its sources and its link to the library as they are: the
# adapter is compiled into it and the library's timing functions are
# wrapped at link time.  `<target> --pmcheck [runner options]` runs the
# runner; without --pmcheck the program is unchanged.  Each benchmark
# instance becomes a case SUITE.NAME (SUITE: the target's name; ':', blanks
# and "=;#[],*?" of the name become '_'), whose region "loop" is what the
# library times, per iteration over ITERATIONS (default 100) iterations,
# with a budget expectation for each of EVENTS (default instructions:u).
# The cases are discovered after every build and registered as
# pmcheck_add_suite() registers a suite's, SIM included (docs/gbench.md).
function(pmcheck_add_gbench)
  cmake_parse_arguments(PARSE_ARGV 0 G "SIM" "TARGET;RESULTS_DIR;SUITE;ITERATIONS;TIMEOUT"
                        "EVENTS;LABELS;ARGS")
  if(NOT G_TARGET)
    message(FATAL_ERROR "pmcheck_add_gbench: TARGET is required (the Google Benchmark executable's target)")
  endif()
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pmcheck_add_gbench: unexpected arguments: ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(G_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "pmcheck_add_gbench: ${G_KEYWORDS_MISSING_VALUES} given without a value")
  endif()
  if(NOT TARGET ${G_TARGET})
    message(FATAL_ERROR "pmcheck_add_gbench: ${G_TARGET} is not a target: define it (add_executable) before pmcheck_add_gbench(TARGET ${G_TARGET})")
  endif()
  get_target_property(type ${G_TARGET} TYPE)
  if(NOT type STREQUAL "EXECUTABLE")
    message(FATAL_ERROR "pmcheck_add_gbench: ${G_TARGET} is a ${type}, not an executable: name the benchmark program's target")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CXX" IN_LIST languages)
    message(FATAL_ERROR "pmcheck_add_gbench: C++ is not enabled in this project (project(... LANGUAGES CXX)): the adapter is compiled as C++ against the program's benchmark.h")
  endif()
  if(NOT G_SUITE)
    set(G_SUITE "${G_TARGET}")
  endif()
  if(NOT G_SUITE MATCHES "^[A-Za-z0-9_.+-]+$")
    message(FATAL_ERROR "pmcheck_add_gbench: SUITE ${G_SUITE}: a suite's name is letters, digits and _ . + - (it names the budget files); give SUITE")
  endif()
  if(NOT DEFINED G_ITERATIONS)
    set(G_ITERATIONS 100)
  endif()
  if(NOT G_ITERATIONS MATCHES "^[1-9][0-9]*$" OR G_ITERATIONS GREATER 1000000000)
    message(FATAL_ERROR "pmcheck_add_gbench: ITERATIONS ${G_ITERATIONS}: a whole number from 1 to 1000000000")
  endif()
  if(NOT DEFINED G_TIMEOUT)
    set(G_TIMEOUT 0)
  endif()
  if(NOT G_TIMEOUT MATCHES "^[0-9]+$")
    message(FATAL_ERROR "pmcheck_add_gbench: TIMEOUT ${G_TIMEOUT}: whole seconds per case (0: the runner's default)")
  endif()
  if(NOT G_EVENTS)
    set(G_EVENTS "instructions:u")
  endif()
  string(REPLACE ";" "," events "${G_EVENTS}")
  if(NOT G_RESULTS_DIR)
    set(G_RESULTS_DIR "${CMAKE_BINARY_DIR}/pmcheck-results")
  endif()
  _pmcheck_build_type(_pmc_build)
  # The adapter with this target's settings: a file of its own per target
  # (a source file's properties would be shared by every target using it).
  string(REPLACE "\"" "\\\"" events_c "${events}")
  set(adapter "${CMAKE_CURRENT_BINARY_DIR}/${G_TARGET}_pmcheck_gbench.cpp")
  file(CONFIGURE OUTPUT "${adapter}" CONTENT
"// Generated by pmcheck_add_gbench(TARGET ${G_TARGET}); do not edit.
#define PMCHECK_BUILD_FLAGS \"${_pmc_build}\"
#define PMCHECK_GBENCH_SUITE \"${G_SUITE}\"
#define PMCHECK_GBENCH_EVENTS \"${events_c}\"
#define PMCHECK_GBENCH_ITERATIONS ${G_ITERATIONS}
#define PMCHECK_GBENCH_TIMEOUT ${G_TIMEOUT}
#include \"${_PMCHECK_GBENCH_ADAPTER}\"
" @ONLY)
  target_sources(${G_TARGET} PRIVATE "${adapter}")
  target_link_libraries(${G_TARGET} PRIVATE pmcheck::harness)
  foreach(symbol IN LISTS _PMCHECK_GBENCH_WRAPPED)
    target_link_options(${G_TARGET} PRIVATE "LINKER:--wrap=${symbol}")
  endforeach()
  if(G_SIM)
    target_compile_options(${G_TARGET} PRIVATE
      $<$<OR:$<COMPILE_LANG_AND_ID:C,Clang>,$<COMPILE_LANG_AND_ID:CXX,Clang>>:-gdwarf-4>)
  endif()
  _pmcheck_discover("${G_TARGET}" "--pmcheck" "gbench;${G_LABELS}" "${G_ARGS}" "${G_RESULTS_DIR}" "${G_SIM}")
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
