# The wheel's toolchain (scripts/build_wheel.sh passes it): clang from the `ziglang`
# PyPI package, compiling against glibc 2.28's headers and linking its symbol
# versions, with LLVM's libc++ linked statically. The result runs on any x86-64 Linux
# with glibc 2.28 or later (manylinux_2_28: Ubuntu 20.04+, RHEL 8+, Debian 11+), which
# the build machine's own gcc (glibc 2.36) could not give.
#
# build_wheel.sh writes the compiler wrappers into $LP_ZIG_WRAPPERS and copies the
# header-only and static third-party libraries (CLI11, fmt, nlohmann/json, OpenSSL,
# liblzma) into $LP_WHEEL_DEPS/include: Debian's /usr/include also holds glibc 2.36's
# headers, so it must never be on the include path (zig-after-project.cmake).
if(NOT DEFINED ENV{LP_ZIG_WRAPPERS} OR NOT DEFINED ENV{LP_WHEEL_DEPS})
  message(FATAL_ERROR "cmake/zig-toolchain.cmake: run scripts/build_wheel.sh, which sets LP_ZIG_WRAPPERS and LP_WHEEL_DEPS")
endif()
set(CMAKE_C_COMPILER $ENV{LP_ZIG_WRAPPERS}/zig-cc)
set(CMAKE_CXX_COMPILER $ENV{LP_ZIG_WRAPPERS}/zig-c++)
set(CMAKE_AR $ENV{LP_ZIG_WRAPPERS}/zig-ar CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB $ENV{LP_ZIG_WRAPPERS}/zig-ranlib CACHE FILEPATH "zig ranlib")
# Debian's multiarch folders, where find_package finds the configs and static libraries.
set(CMAKE_LIBRARY_ARCHITECTURE x86_64-linux-gnu)
set(CMAKE_C_FLAGS_INIT "-isystem $ENV{LP_WHEEL_DEPS}/include")
set(CMAKE_CXX_FLAGS_INIT "-isystem $ENV{LP_WHEEL_DEPS}/include")
set(CMAKE_PROJECT_INCLUDE ${CMAKE_CURRENT_LIST_DIR}/zig-after-project.cmake)
