# SPDX-License-Identifier: MIT
# Install the build tree into a scratch prefix, then build and run a separate
# project against it twice: with find_package(pmcheck) and with pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build
                -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                "-DCMAKE_C_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer with find_package(pmcheck) failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer (find_package) failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer_cxx RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the C++ consumer (find_package) failed: ${rc}")
endif()
# The harness from C++: every macro, C++17/20/23, with this compiler and
# with clang++ (when it is here), pedantic and -Werror; each program runs.
function(run_harness_cxx build_dir what)
  foreach(std 17 20 23)
    # cxx.macros expects a budget it has no hwdb for: UNBUDGETED, exit 5,
    # never a pass (outside CI; CI set would make it a failure).
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CI ${build_dir}/harness_cxx${std}
                    OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
    if(NOT rc EQUAL 5 OR NOT out MATCHES "UNBUDGETED +cxx[.]macros" OR NOT out MATCHES "PASS +cxx[.]no_options"
       OR NOT out MATCHES "PASS +cxx[.]core_api")
      message(FATAL_ERROR "the C++${std} harness consumer (${what}) failed (${rc}):\n${out}")
    endif()
    if(std GREATER 17 AND NOT out MATCHES "PASS +cxx20[.]designated")
      message(FATAL_ERROR "C++${std}: the designated-initializer case did not pass:\n${out}")
    endif()
  endforeach()
  message(STATUS "harness from C++17/20/23 (${what}): built with -Wpedantic -Werror, cases pass (cxx.macros: unbudgeted)")
endfunction()
run_harness_cxx(${WORK_DIR}/build "the default c++")
find_program(CLANGXX clang++)
if(CLANGXX AND CONSUMER_FLAGS MATCHES "sanitize")
  # A sanitized pmcheck carries gcc's AddressSanitizer runtime; a program
  # built by clang with -fsanitize brings clang's, and the two cannot share
  # a process.  The clang build runs in the plain presets.
  message(STATUS "clang++ consumers: not in a sanitized build (two ASan runtimes cannot share a process)")
elseif(CLANGXX)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build-clang
                  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_C_COMPILER=clang
                  -DCMAKE_CXX_COMPILER=${CLANGXX}
                  "-DCMAKE_C_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}"
                  RESULT_VARIABLE rc)
  if(NOT rc)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build-clang RESULT_VARIABLE rc)
  endif()
  if(rc)
    message(FATAL_ERROR "building the consumer with clang/clang++ failed")
  endif()
  run_harness_cxx(${WORK_DIR}/build-clang clang++)
endif()

# pkg-config route.
file(GLOB pcdir ${WORK_DIR}/prefix/lib*/pkgconfig ${WORK_DIR}/prefix/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
execute_process(COMMAND pkg-config --cflags --libs pmcheck OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(rc)
  message(FATAL_ERROR "pkg-config does not know pmcheck (PKG_CONFIG_PATH=${pcdir})")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
get_filename_component(libdir "${pcdir}" DIRECTORY)
execute_process(COMMAND cc ${CONSUMER_FLAGS} ${CONSUMER_DIR}/main.c -o ${WORK_DIR}/consumer-pc ${flags}
                -Wl,-rpath,${libdir} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer with pkg-config flags failed")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer-pc RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer (pkg-config) failed: ${rc}")
endif()
