# SPDX-License-Identifier: MIT
# Cross-build for arm64 Linux, statically linked, against a sysroot made of
# Debian's arm64 -dev packages (ci/qemu-lane extracts them with dpkg-deb).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
#         -DPMCHECK_SYSROOT=/path/to/sysroot ...
# Static: the emulated lane's initramfs has no shared libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# C++ only with the cross g++ (g++-aarch64-linux-gnu); the project's C++
# suites and consumers are then left out of this build.
find_program(PMCHECK_CROSS_CXX aarch64-linux-gnu-g++)
if(PMCHECK_CROSS_CXX)
  set(CMAKE_CXX_COMPILER "${PMCHECK_CROSS_CXX}")
endif()

if(NOT PMCHECK_SYSROOT)
  set(PMCHECK_SYSROOT "$ENV{PMCHECK_SYSROOT}")
endif()
if(NOT PMCHECK_SYSROOT OR NOT EXISTS "${PMCHECK_SYSROOT}/usr/include")
  message(FATAL_ERROR "toolchain-aarch64-linux-gnu: set PMCHECK_SYSROOT to the extracted arm64 packages (ci/qemu-lane makes one)")
endif()
set(PMCHECK_SYSROOT "${PMCHECK_SYSROOT}" CACHE PATH "arm64 packages extracted for the cross build")
# try_compile projects read this file again: hand them the sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PMCHECK_SYSROOT)

# Headers and libraries from the sysroot and the cross libc; programs
# (cmake, pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH "${PMCHECK_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Archives only: a static link cannot use a .so.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

set(ENV{PKG_CONFIG_LIBDIR} "${PMCHECK_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${PMCHECK_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${PMCHECK_SYSROOT}")
