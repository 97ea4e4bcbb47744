# SPDX-License-Identifier: MIT
# Run at build time by pmcheck_add_suite(): ask a suite executable for its
# cases and write the CTest file that registers each one.
# Inputs (-D): EXE, MODE ("--pmcheck" for a Google Benchmark program, else
# empty), EMULATOR, OUT, TARGET, LABELS, ARGS, RESULTS_DIR, SIM.
# A script run with -P starts with no policies set: today's, so that list
# operations keep and remove empty elements as the code expects.
cmake_policy(VERSION 3.25)
string(REPLACE "|" ";" LABELS "${LABELS}")
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${EMULATOR} "${EXE}" ${MODE} --list=tsv
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors
                RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0 AND MODE)
  # A Google Benchmark program that cannot be listed (two instances that
  # would be one case, a main that never runs the benchmarks) keeps its
  # build, and the program as Google Benchmark's: one failing test says why.
  string(STRIP "${errors}" why)
  string(REPLACE "]==]" "] ==]" why "${why}")
  message(WARNING "${TARGET} ${MODE} --list=tsv failed (${rc}); its test ${TARGET}.not_listed fails until it is fixed:\n${why}")
  set(script "# `${TARGET} ${MODE} --list=tsv` failed; do not edit.\n")
  string(APPEND script "add_test([==[${TARGET}.not_listed]==] [==[${CMAKE_COMMAND}]==] -E echo [==[${TARGET} ${MODE} --list=tsv failed (${rc}): ${why}]==])\n")
  string(APPEND script "set_tests_properties([==[${TARGET}.not_listed]==] PROPERTIES FAIL_REGULAR_EXPRESSION [==[--list=tsv failed]==] LABELS [==[pmcheck;gbench]==])\n")
  file(WRITE "${OUT}.tmp" "${script}")
  file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUT}.tmp")
  return()
endif()
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "${TARGET} ${MODE} --list=tsv failed (${rc}):\n${errors}")
endif()
set(script "# Generated from `${TARGET} --list=tsv`; do not edit.\n")
string(REPLACE "\n" ";" lines "${listing}")
set(count 0)
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE "\t" ";" fields "${line}")
  list(LENGTH fields nf)
  if(nf LESS 5)
    message(FATAL_ERROR "${TARGET} --list=tsv: malformed line: ${line}")
  endif()
  list(GET fields 0 name)
  list(GET fields 1 case_labels)
  list(GET fields 2 lock)
  list(GET fields 3 timeout)
  list(GET fields 4 backends)
  unset(sim_whole)
  # The timeout under sim, as the runner applies it (a runner from before
  # it listed one: its factor, 20).
  if(nf GREATER 5)
    list(GET fields 5 sim_seconds)
    string(REGEX REPLACE "\\..*" "" sim_whole "${sim_seconds}")
  endif()
  string(REPLACE "," ";" case_labels "${case_labels}")
  string(REGEX REPLACE "\\..*" "" whole "${timeout}")
  math(EXPR ctest_timeout "${whole} + 31" OUTPUT_FORMAT DECIMAL)
  set(labels "pmcheck;perf;${case_labels};${LABELS}")
  list(REMOVE_DUPLICATES labels)
  list(REMOVE_ITEM labels "")
  set(cmd "[==[${EXE}]==] ${MODE} [==[--filter=${name}]==] --ctest")
  foreach(a IN LISTS ARGS)
    string(APPEND cmd " [==[${a}]==]")
  endforeach()
  if(EMULATOR)
    set(cmd "[==[${EMULATOR}]==] ${cmd}")
  endif()
  # Every listed case becomes a test, whatever its events resolve to now
  # (the runner lists without looking symbols up; a case whose function
  # cannot be found says so when it runs, as an ERROR).  A case that runs
  # on the sim backend only gets no perf test (it would only ever skip).
  if(backends MATCHES "perf" OR NOT SIM OR NOT backends MATCHES "sim")
    string(APPEND script "add_test([==[${name}]==] ${cmd})\n")
    string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${ctest_timeout} LABELS [==[${labels}]==] ENVIRONMENT [==[PMCHECK_RESULTS_DIR=${RESULTS_DIR}]==] FIXTURES_REQUIRED pmcheck_results)\n")
    if(NOT lock STREQUAL "-")
      string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES RESOURCE_LOCK ${lock})\n")
    endif()
    math(EXPR count "${count} + 1")
  endif()
  # The sim variant: same case under valgrind callgrind, no PMU lock.
  if(SIM AND backends MATCHES "sim")
    set(sim_labels "pmcheck;sim;${case_labels};${LABELS}")
    list(REMOVE_ITEM sim_labels "hardware" "")
    list(REMOVE_DUPLICATES sim_labels)
    if(DEFINED sim_whole)
      math(EXPR sim_timeout "${sim_whole} + 31" OUTPUT_FORMAT DECIMAL)
    else()
      math(EXPR sim_timeout "${whole} * 20 + 31" OUTPUT_FORMAT DECIMAL)
    endif()
    string(APPEND script "add_test([==[${name}.sim]==] ${cmd} --backend=sim)\n")
    string(APPEND script "set_tests_properties([==[${name}.sim]==] PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${sim_timeout} LABELS [==[${sim_labels}]==] ENVIRONMENT [==[PMCHECK_RESULTS_DIR=${RESULTS_DIR}]==] FIXTURES_REQUIRED pmcheck_results)\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
# No case at all: one failing test that says so (rather than none, which
# would pass unnoticed).
if(count EQUAL 0)
  set(why "${TARGET} --list=tsv listed no case: the suite defines none (no PMC_TEST in its sources, or their objects were not linked in); add a case, or remove its pmcheck_add_suite()")
  string(APPEND script "add_test([==[${TARGET}.no_cases]==] [==[${CMAKE_COMMAND}]==] -E echo [==[${why}]==])\n")
  string(APPEND script "set_tests_properties([==[${TARGET}.no_cases]==] PROPERTIES FAIL_REGULAR_EXPRESSION [==[listed no case]==] LABELS [==[pmcheck]==])\n")
endif()
# Write only on change, so ctest does not re-read an identical file.
set(tmp "${OUT}.tmp")
file(WRITE "${tmp}" "${script}")
file(COPY_FILE "${tmp}" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${tmp}")
