#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a bounded
# time on a copy of its committed seed corpus (fuzz/corpus/<target>/), so the
# committed corpus is never modified by a run. Exit 1 when a fuzzer finds a crash,
# a leak, undefined behaviour or a timeout; its reproducer is left in the build folder.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
build="${LORAPROBE_FUZZ_BUILD_DIR:-$repo/build-fuzz}"
cxx="$(command -v clang++ || command -v clang++-14 || true)"
if [ -z "$cxx" ]; then
  echo "fuzz: clang++ is needed (Debian: clang, libclang-rt-14-dev); scripts/setup.sh installs it" >&2
  exit 3
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DLORAPROBE_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target config_fuzzer sass_fuzzer
status=0
for target in config_fuzzer sass_fuzzer; do
  corpus="$build/corpus-${target%_fuzzer}"
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp "$repo/fuzz/corpus/${target%_fuzzer}/"* "$corpus/"
  log="$build/$target.log"
  echo "fuzz: $target for ${seconds}s"
  if (cd "$build" && "./fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 "$corpus" >"$log" 2>&1); then
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz: $target: ${runs:-?} runs, no finding"
  else
    status=1
    echo "fuzz: $target FOUND A BUG; the log is $log, the reproducer crash-*/leak-*/timeout-* in $build:" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 20 >&2
  fi
done
exit $status
