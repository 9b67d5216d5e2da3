# Precompiled headers: nlohmann/json, fmt and CLI11 cost most of a translation unit's
# compile time (a 20-line file that includes json took 7.7 s). Each flag set gets one
# precompiled header, built once by an object library and reused by every target with
# those flags (REUSE_FROM needs the same compile options and definitions that reach the
# header): lp_pch for the libraries and the tool, lp_test_pch (tests/CMakeLists.txt) for
# the tests' -O1. The fuzz build (clang, sanitizers) makes its own lp_pch the same way.

set(LP_PCH_HEADERS
  <algorithm> <cstdint> <functional> <map> <memory> <optional> <set> <string> <string_view> <vector>
  <nlohmann/json.hpp> <fmt/format.h> <fmt/ranges.h>)

# lp_make_pch(<name> [OPTIONS ...] [LIBS ...] [HEADERS ...]): an object library whose only
# job is to compile the precompiled header with a flag set.
function(lp_make_pch name)
  cmake_parse_arguments(P "" "" "OPTIONS;LIBS;HEADERS" ${ARGN})
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  target_link_libraries(${name} PRIVATE lp_options ${P_LIBS})
  if(P_OPTIONS)
    target_compile_options(${name} PRIVATE ${P_OPTIONS})
  endif()
  target_precompile_headers(${name} PRIVATE ${LP_PCH_HEADERS} ${P_HEADERS})
endfunction()

# lp_use_pch(<pch> <target>...): the targets' C++ files include <pch>'s header first.
# CUDA files keep theirs (nvcc does not read a g++ precompiled header).
function(lp_use_pch pch)
  foreach(target ${ARGN})
    target_precompile_headers(${target} REUSE_FROM ${pch})
    get_target_property(sources ${target} SOURCES)
    foreach(source ${sources})
      if(source MATCHES "\\.cu$")
        if(NOT IS_ABSOLUTE "${source}")
          get_target_property(dir ${target} SOURCE_DIR)
          set(source "${dir}/${source}")
        endif()
        set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endforeach()
endfunction()
