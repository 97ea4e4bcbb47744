# SPDX-License-Identifier: MIT
# Debian packages from this build (CPack's DEB generator).  ci/packages runs
#   cmake -S . -B build-pkg -DCMAKE_INSTALL_PREFIX=/usr -DPMCHECK_PACKAGE=ON ...
#   cmake --build build-pkg && (cd build-pkg && cpack -G DEB)
# and checks the result with lintian and in a clean Debian 12 root.
#
# One package per install component:
#   pmcheck                 the command (pmcheck, pmcheck-validate,
#                           pmcheck_overhead), the valgrind tool, hwdb's map
#                           and facts, the results schema
#   libpmcheck<SOVERSION>   libpmcheck.so.<SOVERSION>, the counting core
#   libpmcheck-harness<SOVERSION>  libpmcheck_harness.so.<SOVERSION>
#   libpmcheck-dev          headers, link names, harness_main, .pc, CMake files
# The libraries' package names carry the soname's version, so two releases
# whose ABI differs install side by side (docs/versions.md).

set(PMCHECK_DEB_MAINTAINER "pmcheck developers <pmcheck-devel@lists.pmcheck.dev>"
    CACHE STRING "Maintainer field of the Debian packages")
set(PMCHECK_DEB_REVISION 1 CACHE STRING "Debian revision of the packages")
set(pmcheck_lib_pkg libpmcheck${PMCHECK_SOVERSION})
set(pmcheck_harness_pkg libpmcheck-harness${PMCHECK_SOVERSION})
set(pmcheck_deb_version "${PROJECT_VERSION}-${PMCHECK_DEB_REVISION}")

set(CPACK_PACKAGE_NAME pmcheck)
set(CPACK_PACKAGE_VENDOR "the pmcheck authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${PMCHECK_DEB_MAINTAINER}")
# Each description below is its synopsis, then paragraphs (CPack indents
# them and marks the blank lines). Each starts with its own synopsis; CPack
# would put the project's description above it unless the summary is its
# own default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL command pmcheck pmcheck_harness dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${PMCHECK_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The harness and the command link libpmcheck from this very build.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    ${PROJECT_BINARY_DIR}/framework)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The libraries' packages tell ldconfig by a trigger (Debian policy 8.1.1),
# not from maintainer scripts: CPack writes scripts that call ldconfig
# unless the package brings its own.
set(deb_control ${PROJECT_BINARY_DIR}/deb-control)
file(WRITE ${deb_control}/triggers "activate-noawait ldconfig\n")
set(postinst_args "configure|abort-upgrade|abort-remove|abort-deconfigure|triggered")
set(postrm_args "remove|purge|upgrade|failed-upgrade|abort-install|abort-upgrade|disappear")
foreach(script postinst postrm)
  file(WRITE ${deb_control}/${script} "#!/bin/sh
# ldconfig runs from this package's trigger; the script only checks its call.
set -e
case \"$1\" in
${${script}_args}) ;;
*) echo \"${script} called with unknown argument '$1'\" >&2; exit 1 ;;
esac
")
  file(CHMOD ${deb_control}/${script} FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
       GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PMCHECK_PACKAGE_CONTROL_EXTRA
    ${deb_control}/triggers ${deb_control}/postinst ${deb_control}/postrm)
set(CPACK_DEBIAN_PMCHECK_HARNESS_PACKAGE_CONTROL_EXTRA ${CPACK_DEBIAN_PMCHECK_PACKAGE_CONTROL_EXTRA})

set(CPACK_DEBIAN_COMMAND_PACKAGE_NAME pmcheck)
set(CPACK_DEBIAN_COMMAND_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_COMMAND_PACKAGE_DEPENDS
    "${pmcheck_lib_pkg} (= ${pmcheck_deb_version}), ${pmcheck_harness_pkg} (= ${pmcheck_deb_version})")
# The sim backend runs programs under valgrind; without it pmcheck counts
# on the kernel's counters only, sim cases skip saying why, and `pmcheck
# probe` says sim is unavailable.  libpq is loaded only for a PostgreSQL
# history store (dlopen): SQLite needs nothing more.
set(CPACK_DEBIAN_COMMAND_PACKAGE_RECOMMENDS "valgrind (>= 1:3.19.0), libpq5")
set(CPACK_DEBIAN_COMMAND_DESCRIPTION "hardware-counter assertions and benchmarks: the command
pmcheck counts what the CPU did inside a code region with grouped
perf_event_open(2) counters and checks the counts against budgets per CPU
model. On machines without a PMU it counts under valgrind (the sim backend).

This package holds the pmcheck command (probe, stat, events, results,
history, hwdb, validate), pmcheck's valgrind tool, the CPU map and model
facts of its hardware database, and the results schema.
")

set(CPACK_DEBIAN_PMCHECK_PACKAGE_NAME ${pmcheck_lib_pkg})
set(CPACK_DEBIAN_PMCHECK_PACKAGE_SECTION libs)
# libpfm4 is opened with dlopen when an event name needs it, so
# dpkg-shlibdeps cannot see it (ci/packages checks it is named).
set(CPACK_DEBIAN_PMCHECK_PACKAGE_DEPENDS "libpfm4")
set(CPACK_DEBIAN_PMCHECK_DESCRIPTION "hardware-counter assertions and benchmarks: counting library
pmcheck counts what the CPU did inside a code region with grouped
perf_event_open(2) counters, read from user space where the hardware
allows, and checks the counts against budgets per CPU model.

This package holds the counting core, libpmcheck.
")

set(CPACK_DEBIAN_PMCHECK_HARNESS_PACKAGE_NAME ${pmcheck_harness_pkg})
set(CPACK_DEBIAN_PMCHECK_HARNESS_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PMCHECK_HARNESS_PACKAGE_DEPENDS "${pmcheck_lib_pkg} (= ${pmcheck_deb_version})")
set(CPACK_DEBIAN_PMCHECK_HARNESS_DESCRIPTION "hardware-counter assertions and benchmarks: test harness library
pmcheck counts what the CPU did inside a code region with grouped
perf_event_open(2) counters and checks the counts against budgets per CPU
model.

This package holds the test harness, libpmcheck_harness: cases, regions,
expectations, the runner and its reports.
")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libpmcheck-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${pmcheck_lib_pkg} (= ${pmcheck_deb_version}), ${pmcheck_harness_pkg} (= ${pmcheck_deb_version}), pmcheck (= ${pmcheck_deb_version}), libc6-dev | libc-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "hardware-counter assertions and benchmarks: development files
pmcheck counts what the CPU did inside a code region with grouped
perf_event_open(2) counters and checks the counts against budgets per CPU
model.

This package holds the C and C++ headers, the CMake package
(find_package(pmcheck), pmcheck_add_suite) and the pkg-config files.
")

# Each package's /usr/share/doc/<package>/: the copyright file (the MIT
# licence, and the GPL for the valgrind tool) and changelog.Debian.gz.
if(PMCHECK_PACKAGE)
  set(deb_doc ${PROJECT_BINARY_DIR}/deb-doc)
  file(READ ${PROJECT_SOURCE_DIR}/LICENSE mit)
  string(REGEX REPLACE "^MIT License\n\n" "" mit "${mit}")
  string(REGEX REPLACE "\n+$" "" mit "${mit}")
  string(REGEX REPLACE "\n\n" "\n.\n" mit "${mit}")
  string(REGEX REPLACE "\n" "\n " mit "${mit}")
  if(DEFINED ENV{SOURCE_DATE_EPOCH})
    set(when_epoch $ENV{SOURCE_DATE_EPOCH})
  else()
    execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
                    OUTPUT_VARIABLE when_epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(NOT when_epoch)
    string(TIMESTAMP when_epoch "%s" UTC)
  endif()
  execute_process(COMMAND date -u -R -d @${when_epoch} OUTPUT_VARIABLE when
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  foreach(comp command pmcheck pmcheck_harness dev)
    string(TOUPPER ${comp} COMP)
    set(pkg ${CPACK_DEBIAN_${COMP}_PACKAGE_NAME})
    set(d ${deb_doc}/${pkg})
    file(MAKE_DIRECTORY ${d})
    set(gpl "")
    if(comp STREQUAL "command")
      set(gpl "
Files: usr/libexec/pmcheck/*
Copyright: 2026 the pmcheck authors
License: GPL-2+
 pmcheck's valgrind tool links valgrind's core and is free software; you can
 redistribute it and/or modify it under the terms of the GNU General Public
 License as published by the Free Software Foundation; either version 2 of the
 License, or (at your option) any later version.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 2 can be found in /usr/share/common-licenses/GPL-2.
")
    endif()
    file(WRITE ${d}/copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pmcheck

Files: *
Copyright: 2026 the pmcheck authors
License: MIT
${gpl}
License: MIT
 ${mit}
")
    file(WRITE ${d}/changelog.Debian "pmcheck (${pmcheck_deb_version}) unstable; urgency=medium

  * pmcheck ${PROJECT_VERSION}, packaged by its own build (cpack -G DEB).
    What changed is in /usr/share/doc/pmcheck/changelog.gz.

 -- ${PMCHECK_DEB_MAINTAINER}  ${when}
")
    execute_process(COMMAND gzip -9nf ${d}/changelog.Debian)
    install(FILES ${d}/copyright ${d}/changelog.Debian.gz
            DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp})
  endforeach()
  # pmcheck's valgrind tool is static, as every valgrind tool is: it runs
  # without a libc, inside valgrind's core.
  file(WRITE ${deb_doc}/lintian/pmcheck
       "pmcheck: statically-linked-binary [usr/libexec/pmcheck/pmcheck-amd64-linux]\n")
  install(FILES ${deb_doc}/lintian/pmcheck DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
          COMPONENT command)
  # Manual pages of the three programs, from their own --help (help2man),
  # so a page cannot say other than the program does.
  find_program(PMCHECK_HELP2MAN help2man REQUIRED)
  file(WRITE ${deb_doc}/man/see-also.h2m "[SEE ALSO]
Each command's options: \\fBpmcheck COMMAND --help\\fR. The documentation, the
event syntax and the hwdb format: /usr/share/doc/pmcheck and
/usr/share/pmcheck/hwdb/README.md.
")
  set(pages)
  set(what_pmcheck "hardware-counter assertions and benchmarks")
  set(what_pmcheck-validate "judge this machine's counters on known-count kernels against hwdb")
  set(what_pmcheck_overhead "what one pmcheck region begin and end costs")
  foreach(prog pmcheck_cli:pmcheck pmcheck-validate:pmcheck-validate pmcheck_overhead:pmcheck_overhead)
    string(REPLACE ":" ";" pair ${prog})
    list(GET pair 0 target)
    list(GET pair 1 name)
    set(page ${deb_doc}/man/${name}.1)
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E env "PATH=$<TARGET_FILE_DIR:${target}>:$ENV{PATH}"
              ${PMCHECK_HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
              "--name=${what_${name}}" --include=${deb_doc}/man/see-also.h2m
              --output=${page} ${name}
      COMMAND gzip -9nf ${page}
      DEPENDS ${target}
      COMMENT "Manual page of ${name} (help2man)"
      VERBATIM)
    list(APPEND pages ${page}.gz)
  endforeach()
  add_custom_target(pmcheck_man ALL DEPENDS ${pages})
  install(FILES ${pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT command)
  configure_file(${PROJECT_SOURCE_DIR}/CHANGELOG.md ${deb_doc}/pmcheck-changelog/changelog COPYONLY)
  execute_process(COMMAND gzip -9nf ${deb_doc}/pmcheck-changelog/changelog)
  install(FILES ${deb_doc}/pmcheck-changelog/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pmcheck COMPONENT command)
endif()

include(CPack)
