# SPDX-License-Identifier: MIT
# Install pmcheck into a scratch prefix, build ci/downstream-layout against
# it (find_package), then run test_layout.py on its builds: layout-only
# rebuilds pass, real changes fail, a library replaced in place is named,
# a second program with the same suite name is refused.
include(${CMAKE_CURRENT_LIST_DIR}/downstream_build.cmake)
file(GLOB pads ${WORK_DIR}/build/layout_gate_pad*)
set(b ${WORK_DIR}/build)
execute_process(COMMAND ${PYTHON} ${TEST_SCRIPT} ${WORK_DIR}/prefix/bin/pmcheck
                        ${b}/layoutdep_v1/liblayoutdep.so.1 ${b}/layoutdep_v2/liblayoutdep.so.1
                        ${b}/layout_gate_base ${b}/layout_gate_more ${b}/layout_gate_tiny ${pads}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "test_layout.py failed: ${rc}")
endif()
