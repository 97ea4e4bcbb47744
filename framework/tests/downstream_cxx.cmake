# SPDX-License-Identifier: MIT
# The README's C++ quick start, exactly as written (ci/downstream-cxx): install
# pmcheck, build the project, calibrate on both backends into a copy of the
# project, gate with ctest, then grow the work on purpose and read the failure.
# (A copy beside the work directory: calibration writes the project's hwdb/.)
set(PROJECT_DIR ${WORK_DIR}-project)
file(REMOVE_RECURSE ${PROJECT_DIR})
file(COPY ${SOURCE_PROJECT}/ DESTINATION ${PROJECT_DIR})
set(DOWNSTREAM_ARGS "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_CXX_COMPILER=${CXX}")
include(${CMAKE_CURRENT_LIST_DIR}/downstream_build.cmake)
foreach(args "--backend=sim" "")
  execute_process(COMMAND ${WORK_DIR}/build/gate ${args} --calibrate --hwdb=${PROJECT_DIR}/hwdb
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "calibrating (${args}) failed (${rc}):\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --output-on-failure WORKING_DIRECTORY ${WORK_DIR}/build
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc OR NOT out MATCHES "xml.parse.sim [.]+ +Passed" OR NOT out MATCHES "xml.parse_calls [.]+ +Passed")
  message(FATAL_ERROR "the calibrated C++ gate did not pass (${rc}):\n${out}")
endif()
# Broken on purpose: twice the items.  Both backends fail and say by how much.
execute_process(COMMAND ${CMAKE_COMMAND} -E env MYXMLGATE_ITEMS=2000 PMCHECK_SIM_ENV=MYXMLGATE_ITEMS
                ${CMAKE_CTEST_COMMAND} --output-on-failure -R "xml[.]parse"
                WORKING_DIRECTORY ${WORK_DIR}/build OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc OR NOT out MATCHES "region \"parse\", instructions:u: measured [0-9]+ .*over by"
   OR NOT out MATCHES "region \"parse\", calls:malloc: measured")
  message(FATAL_ERROR "a document twice as large was not caught on both backends (${rc}):\n${out}")
endif()
message(STATUS "C++ quick start (${CXX}): calibrated, gated, twice the work caught on sim and perf")
