# SPDX-License-Identifier: MIT
# The one version: project(pmcheck VERSION ...) in the top CMakeLists.txt.
# pmcheck_write_version_header(DIR VERSION) writes DIR/pmcheck/version.h from
# it.  Scripts that compile sources without configuring the project (the fuzz
# build, the aarch64 compile check) run this file in script mode:
#   cmake -DOUT=DIR -P cmake/PmcheckVersion.cmake
# which reads the version from the project() line itself.
function(pmcheck_write_version_header dir version)
  if(NOT version MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "pmcheck's version '${version}' is not MAJOR.MINOR.PATCH")
  endif()
  set(PMCHECK_V_MAJOR ${CMAKE_MATCH_1})
  set(PMCHECK_V_MINOR ${CMAKE_MATCH_2})
  set(PMCHECK_V_PATCH ${CMAKE_MATCH_3})
  configure_file(${_pmcheck_version_dir}/version.h.in ${dir}/pmcheck/version.h @ONLY)
endfunction()
set(_pmcheck_version_dir ${CMAKE_CURRENT_LIST_DIR})

if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT OUT)
    message(FATAL_ERROR "usage: cmake -DOUT=DIR -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  file(READ ${CMAKE_CURRENT_LIST_DIR}/../CMakeLists.txt _top)
  if(NOT _top MATCHES "project\\(pmcheck VERSION ([0-9]+\\.[0-9]+\\.[0-9]+)")
    message(FATAL_ERROR "no 'project(pmcheck VERSION X.Y.Z' in ${CMAKE_CURRENT_LIST_DIR}/../CMakeLists.txt")
  endif()
  pmcheck_write_version_header(${OUT} ${CMAKE_MATCH_1})
endif()
