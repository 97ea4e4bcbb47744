# Install pmcheck into a scratch prefix, then configure, build and test the
# downstream project in ci/downstream against it: find_package(pmcheck),
# pmcheck_add_suite() discovery (ctest -N lists every case), labels, the
# PMU lock, skips, and the all-skipped guard.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build
                -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix "-DCMAKE_C_FLAGS=${CONSUMER_FLAGS}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the downstream project failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the downstream project failed")
endif()

execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N WORKING_DIRECTORY ${WORK_DIR}/build
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
foreach(t parser.one_call_per_token parser.watched_result parser.instructions_budget
          pmcheck.measured.clear pmcheck.measured)
  if(NOT listing MATCHES "Test +#[0-9]+: ${t}\n")
    message(FATAL_ERROR "ctest -N does not list ${t}:\n${listing}")
  endif()
endforeach()
if(NOT listing MATCHES "Total Tests: 5")
  message(FATAL_ERROR "expected 5 tests:\n${listing}")
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

# The guard fails when every measuring case is skipped: run only the
# skipping case (ctest adds the fixture's setup and cleanup by itself).
if(NOT HAS_HW_PMU)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -R instructions_budget --output-on-failure
                  WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out
                  RESULT_VARIABLE rc)
  if(NOT rc OR NOT out MATCHES "nothing was measured")
    message(FATAL_ERROR "the guard did not fail an all-skipped run (rc ${rc}):\n${out}")
  endif()
endif()
