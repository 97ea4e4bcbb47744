# SPDX-License-Identifier: MIT
# Included by the downstream tests: install pmcheck into ${WORK_DIR}/prefix,
# then configure and build ${PROJECT_DIR} in ${WORK_DIR}/build against it
# (extra configure arguments in DOWNSTREAM_ARGS).  Fails the test on error.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build
                -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${DOWNSTREAM_ARGS} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the downstream project failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2 RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the downstream project failed")
endif()
