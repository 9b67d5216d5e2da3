#!/usr/bin/env bash
# The wheel's loraprobe on an older glibc than the build machine's, without a
# container: Debian 11's libc6 (glibc 2.31, the oldest on deb.debian.org; buster's
# 2.28 is gone from it) unpacked into a folder and loraprobe started through that
# glibc's own ld.so. Not part of CI (it downloads a .deb); run by hand:
#   tests/wheel/old_glibc.sh dist/loraprobe-*.whl
# Children (nvdisasm, ptxas) run with the system's glibc: only loraprobe's own process
# is on 2.31. Under an explicit ld.so /proc/self/exe names ld.so, so the environment is
# found through the python3 on PATH (the venv's, put first).
set -euo pipefail
wheel="$(realpath "$1")"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/lp-old-glibc-XXXXXX")"
trap 'rm -rf "$work"' EXIT
index=http://deb.debian.org/debian-security/dists/bullseye-security/main/binary-amd64/Packages.xz
curl -fsS -m 120 -o "$work/Packages.xz" "$index"
xz -d "$work/Packages.xz"
deb="$(awk '/^Package: libc6$/{p=1} p&&/^Filename:/{print $2; exit}' "$work/Packages")"
curl -fsS -m 300 -o "$work/libc6.deb" "http://deb.debian.org/debian-security/$deb"
dpkg-deb -x "$work/libc6.deb" "$work/root"
lib="$work/root/lib/x86_64-linux-gnu"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[ptxas]"
old() { env -u CUDA_HOME -u CUDA_PATH PATH="$work/venv/bin:/usr/bin:/bin" "$lib"/ld-linux-x86-64.so.2 --library-path "$lib" "$work/venv/bin/loraprobe" "$@"; }
echo "glibc of the loader: $("$lib"/ld-linux-x86-64.so.2 --library-path "$lib" "$lib"/libc.so.6 | sed -n 1p)"
LD_DEBUG=libs old version 2>&1 | grep -m1 "calling init: $lib/libc.so.6" || true
old version
old env | grep -E "toolkit|nvdisasm"
old sweep --dry-run | sed -n 1p
rc=0
old inspect --config seed-48590 --ptxas toolkit | tail -n 6 || rc=$?
echo "inspect exit $rc (1: hazards found, the CI-gate contract)"
