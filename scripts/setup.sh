#!/usr/bin/env bash
# Installs what loraprobe needs, only what is missing, then configures and builds.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   Debian packages: compilers, CMake, Ninja, CLI11, fmt, nlohmann-json, GoogleTest, OpenSSL, liblzma.
#   Python packages: jsonschema (report/config schema tests), junitparser and xunitparser
#   (the JUnit test), PyYAML (the docs/scale.md test).
#   --with-browser: also Debian's chromium (the headless-browser test of the HTML report)
#   and shellcheck (the test of docs/scale.md's scripts); scripts/test.sh asks for them,
#   the main job does not need them.
# The CUDA toolkit (nvcc, ptxas, cuBLAS) is expected at $CUDA_HOME or /usr/local/cuda.
set -euo pipefail
#   --tool-only: build the loraprobe executable alone (scripts/run.sh), not the tests.
#   --packages-only: install the Debian packages and stop (scripts/build_wheel.sh).
with_browser=0
packages_only=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=1 ;;
    --tool-only) targets=(--target loraprobe) ;;
    --packages-only) packages_only=1 ;;
    *) echo "setup: unknown option $arg (known: --with-browser, --tool-only, --packages-only)" >&2; exit 2 ;;
  esac
done
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LORAPROBE_BUILD_DIR:-$repo/build}"

apt_packages=(g++ cmake ninja-build python3 python3-pip libcli11-dev libfmt-dev nlohmann-json3-dev
              libgtest-dev libssl-dev liblzma-dev clang libclang-rt-14-dev python3-venv)
((with_browser)) && apt_packages+=(chromium fonts-dejavu-core shellcheck)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
((packages_only)) && exit 0

python_missing=()
python3 -c 'import jsonschema' 2>/dev/null || python_missing+=("jsonschema>=4.18")
# JUnit consumers' parsers, for the test of `loraprobe report --format junit`.
python3 -c 'import junitparser' 2>/dev/null || python_missing+=("junitparser==5.0.3")
python3 -c 'import xunitparser' 2>/dev/null || python_missing+=("xunitparser==1.3.4")
# docs/scale.md's Kubernetes manifests, parsed by tests/docs.
python3 -c 'import yaml' 2>/dev/null || python_missing+=("PyYAML==6.0.3")
if ((${#python_missing[@]})); then
  echo "setup: installing Python packages: ${python_missing[*]}"
  python3 -m pip install --quiet --disable-pip-version-check "${python_missing[@]}"
fi

if [ -x "$repo/scripts/install_tools.sh" ]; then
  "$repo/scripts/install_tools.sh"
fi

cuda_root="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda_root/bin/nvcc" ]; then
  echo "setup: no CUDA toolkit at $cuda_root (set CUDA_HOME): nvcc is needed to build loraprobe" >&2
  exit 3
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
