# SPDX-License-Identifier: MIT
# Install pmcheck into a scratch prefix, then configure, build and test the
# downstream project in ci/downstream against it: find_package(pmcheck),
# pmcheck_add_suite() discovery (ctest -N lists every case), labels, the
# PMU lock, skips, and the all-skipped guard.
set(DOWNSTREAM_ARGS "-DCMAKE_C_FLAGS=${CONSUMER_FLAGS}")
include(${CMAKE_CURRENT_LIST_DIR}/downstream_build.cmake)

execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N WORKING_DIRECTORY ${WORK_DIR}/build
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
foreach(t parser.one_call_per_token parser.watched_result parser.buffer_first_touch
          parser.instructions_budget parser.one_call_per_token.sim parser.instructions_budget.sim
          parser.token_count pmcheck.measured.clear pmcheck.measured)
  if(NOT listing MATCHES "Test +#[0-9]+: ${t}\n")
    message(FATAL_ERROR "ctest -N does not list ${t}:\n${listing}")
  endif()
endforeach()
if(NOT listing MATCHES "Total Tests: 9")
  message(FATAL_ERROR "expected 9 tests:\n${listing}")
endif()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N -L hardware WORKING_DIRECTORY ${WORK_DIR}/build
                OUTPUT_VARIABLE hw)
# (ctest adds the guard's fixture tests to any selection by itself.)
if(NOT hw MATCHES "parser.instructions_budget" OR hw MATCHES "parser.one_call"
   OR hw MATCHES "parser.watched")
  message(FATAL_ERROR "the hardware label is on exactly the hardware case:\n${hw}")
endif()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --output-on-failure
                WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
message("${out}")
if(rc)
  message(FATAL_ERROR "the downstream project's tests failed")
endif()
if(NOT EXISTS ${WORK_DIR}/build/pmcheck-results.json)
  message(FATAL_ERROR "the guard wrote no merged results")
endif()

# A machine whose breakpoints open but never fire (the fault switch makes
# one of any machine): the breakpoint case is SKIPPED with the check's
# words, never judged with zeros; the page-fault case still PASSes.
execute_process(COMMAND ${CMAKE_COMMAND} -E env PMCHECK_FAULT_CHECKS=breakpoint
                ${CMAKE_CTEST_COMMAND} -R "watched_result|buffer_first_touch" -V
                WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(rc OR NOT out MATCHES "parser.watched_result [.]+[*]+Skipped"
   OR NOT out MATCHES "write breakpoints open but never fire on this machine: a check of 64 stores counted 0 [(]fault injected"
   OR NOT out MATCHES "parser.buffer_first_touch [.]+ +Passed")
  message(FATAL_ERROR "with breakpoints that never fire (rc ${rc}):\n${out}")
endif()

# CDash: `ctest -T Test` keeps each case's figures as NamedMeasurement in
# Testing/<tag>/Test.xml (from the <CTestMeasurement> lines the discovered
# tests print), so a dashboard plots them without pmcheck on the server.
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -T Test -R one_call_per_token
                WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
file(GLOB test_xml ${WORK_DIR}/build/Testing/*/Test.xml)
if(rc OR NOT test_xml)
  message(FATAL_ERROR "ctest -T Test failed or wrote no Test.xml (rc ${rc}):\n${out}")
endif()
file(READ "${test_xml}" xml)
foreach(m "tokenize.calls:next_token" "tokenize.calls:malloc")
  if(NOT xml MATCHES "<NamedMeasurement type=\"numeric/double\" name=\"${m}\">[ \t\r\n]*<Value>[0-9]+</Value>")
    message(FATAL_ERROR "Test.xml holds no measurement ${m}:\n${xml}")
  endif()
endforeach()

# The guard fails when every measuring case is skipped: run only the
# skipping case (ctest adds the fixture's setup and cleanup by itself).
if(NOT HAS_HW_PMU)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -R "instructions_budget$" --output-on-failure
                  WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                  RESULT_VARIABLE rc)
  if(NOT rc OR NOT out MATCHES "nothing was measured")
    message(FATAL_ERROR "the guard did not fail an all-skipped run (rc ${rc}):\n${out}")
  endif()
endif()

# A label selection without measuring cases passes when its cases pass (the
# guard comes along as a fixture and has nothing to guard).
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -L behaviour --output-on-failure
                WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(rc OR NOT out MATCHES "pmcheck.measured" OR NOT out MATCHES "100% tests passed")
  message(FATAL_ERROR "ctest -L behaviour failed (rc ${rc}):\n${out}")
endif()

# Every installed program runs from the prefix (shared libraries found
# through their rpath, no LD_LIBRARY_PATH).
set(bin ${WORK_DIR}/prefix/bin)
foreach(cmd "pmcheck;help" "pmcheck;compare;--help" "pmcheck;version"
            "pmcheck-validate;--list" "pmcheck;hwdb;lookup" "pmcheck_overhead;--help")
  list(POP_FRONT cmd prog)
  execute_process(COMMAND ${bin}/${prog} ${cmd} OUTPUT_VARIABLE out ERROR_VARIABLE out
                  RESULT_VARIABLE rc)
  if(out MATCHES "error while loading shared libraries" OR NOT (rc EQUAL 0 OR rc EQUAL 64))
    message(FATAL_ERROR "installed ${prog} ${cmd} failed (rc ${rc}):\n${out}")
  endif()
endforeach()
# `pmcheck validate` runs the installed pmcheck-validate: a verdict (0), or
# nothing to validate on this machine (77), never a loader error.
execute_process(COMMAND ${bin}/pmcheck validate OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(out MATCHES "error while loading shared libraries" OR NOT (rc EQUAL 0 OR rc EQUAL 77 OR rc EQUAL 1))
  message(FATAL_ERROR "installed pmcheck validate failed (rc ${rc}):\n${out}")
endif()
if(NOT out MATCHES "pass|not validated")
  message(FATAL_ERROR "installed pmcheck validate printed no table:\n${out}")
endif()

# Calls gated on the simulator by an unprivileged user, through CTest: the
# project built afresh where `nobody` can read it, its .sim tests run as
# nobody (uprobes would need root or CAP_PERFMON; callgrind counts calls
# itself).  Root is needed to become nobody; sanitized builds do not run
# under valgrind.
find_program(SETPRIV setpriv)
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(uid STREQUAL "0" AND SETPRIV AND NOT CONSUMER_FLAGS)
  string(RANDOM LENGTH 8 tag)
  set(WORK_DIR /tmp/pmcheck-nobody-${tag})
  include(${CMAKE_CURRENT_LIST_DIR}/downstream_build.cmake)
  execute_process(COMMAND chmod -R a+rwX ${WORK_DIR})
  execute_process(COMMAND ${SETPRIV} --reuid=65534 --regid=65534 --clear-groups --reset-env
                          ${CMAKE_CTEST_COMMAND} -R "[.]sim$" --output-on-failure
                  WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                  RESULT_VARIABLE rc)
  message("as nobody:\n${out}")
  execute_process(COMMAND ${SETPRIV} --reuid=65534 --regid=65534 --clear-groups --reset-env
                          ${CMAKE_CTEST_COMMAND} -R "one_call_per_token$" -V
                  WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE perf_out ERROR_VARIABLE perf_out)
  file(REMOVE_RECURSE ${WORK_DIR})
  if(rc OR NOT out MATCHES "parser.one_call_per_token.sim [.]+ +Passed"
     OR NOT out MATCHES "parser.instructions_budget.sim [.]+ +Passed")
    message(FATAL_ERROR "the .sim tests as nobody (rc ${rc}):\n${out}")
  endif()
  # The same case on perf, as nobody: the uprobe is refused, and said so.
  if(NOT perf_out MATCHES "parser.one_call_per_token [.]+[*]+Skipped")
    message(FATAL_ERROR "calls: on perf as nobody should skip:\n${perf_out}")
  endif()
else()
  message("not run as nobody: needs root and setpriv (uid ${uid}), and no sanitizer")
endif()
