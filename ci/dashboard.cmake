# SPDX-License-Identifier: MIT
# A CTest dashboard script: configure, build and test a project that uses
# pmcheck, and submit the results to a CDash server, where each case's
# figures (its regions' events, from the <CTestMeasurement> lines of
# pmcheck_add_suite's tests) appear as NamedMeasurements and are plotted
# across builds without any pmcheck code on the server.
#
#   PMCHECK_DASHBOARD_URL=https://cdash.example.org/submit.php?project=MyLib \
#     ctest -S ci/dashboard.cmake -V
#
# Environment: PMCHECK_DASHBOARD_SOURCE (default: this checkout),
# PMCHECK_DASHBOARD_BUILD (default: build-dashboard), PMCHECK_DASHBOARD_URL
# (no URL: test without submitting), PMCHECK_DASHBOARD_MODEL (Experimental,
# Continuous or Nightly), PMCHECK_DASHBOARD_OPTIONS (configure options, e.g.
# -DCMAKE_PREFIX_PATH=$HOME/pmcheck for a project using an installed pmcheck).
cmake_minimum_required(VERSION 3.16)
get_filename_component(here "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(CTEST_SOURCE_DIRECTORY "$ENV{PMCHECK_DASHBOARD_SOURCE}")
if(NOT CTEST_SOURCE_DIRECTORY)
  set(CTEST_SOURCE_DIRECTORY "${here}")
endif()
set(CTEST_BINARY_DIRECTORY "$ENV{PMCHECK_DASHBOARD_BUILD}")
if(NOT CTEST_BINARY_DIRECTORY)
  set(CTEST_BINARY_DIRECTORY "${CTEST_SOURCE_DIRECTORY}/build-dashboard")
endif()
set(model "$ENV{PMCHECK_DASHBOARD_MODEL}")
if(NOT model)
  set(model Experimental)
endif()
cmake_host_system_information(RESULT host QUERY HOSTNAME)
set(CTEST_SITE "${host}")
set(CTEST_BUILD_NAME "${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CTEST_CMAKE_GENERATOR "Unix Makefiles")
set(CTEST_SUBMIT_URL "$ENV{PMCHECK_DASHBOARD_URL}")

ctest_start(${model})
ctest_configure(OPTIONS "$ENV{PMCHECK_DASHBOARD_OPTIONS}" RETURN_VALUE rc)
if(rc)
  message(FATAL_ERROR "configure failed")
endif()
ctest_build(RETURN_VALUE rc)
ctest_test(RETURN_VALUE test_rc)
if(CTEST_SUBMIT_URL)
  ctest_submit(RETURN_VALUE submit_rc)
  if(submit_rc)
    message(WARNING "submission to ${CTEST_SUBMIT_URL} failed")
  endif()
else()
  message(STATUS "no PMCHECK_DASHBOARD_URL: tested, not submitted; see ${CTEST_BINARY_DIRECTORY}/Testing/*/Test.xml")
endif()
