# Included at the end of project() by cmake/zig-toolchain.cmake: Debian's package
# configs name /usr/include as the include folder of CLI11, fmt, nlohmann/json,
# OpenSSL and liblzma; declaring it implicit keeps CMake from passing it (its copies
# are in $LP_WHEEL_DEPS/include), so glibc 2.36's headers never replace 2.28's.
list(APPEND CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES /usr/include /usr/include/x86_64-linux-gnu)
list(APPEND CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES /usr/include /usr/include/x86_64-linux-gnu)
list(APPEND CMAKE_ASM_IMPLICIT_INCLUDE_DIRECTORIES /usr/include /usr/include/x86_64-linux-gnu)
