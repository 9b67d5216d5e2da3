#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs them.
#
#   scripts/fuzz.sh                    the gate that scripts/test.sh (and so CI) runs; deterministic:
#                                      1. replay: every input of the committed corpus (fuzz/corpus/<target>/)
#                                         is run once;
#                                      2. a fixed-seed, run-bounded pass (-seed, -runs) that mutates a copy
#                                         of that corpus. The same commit gives the same runs, the same
#                                         coverage and the same result on every machine and every run.
#   scripts/fuzz.sh --explore SECONDS  exploratory fuzzing: a random seed, SECONDS of wall clock per target.
#                                      What it finds is not gated on; fix it and commit the reproducer to
#                                      fuzz/corpus/<target>/ so the replay keeps it.
#
# Exit 1 when a fuzzer finds a crash, a leak, undefined behaviour or a timeout; the
# reproducer (crash-*/leak-*/timeout-*) is left in the build folder and named.
# The committed corpus is never modified by a run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The fuzz build compiles the checkout through one fixed path, a symbolic link to it:
# the sanitizers keep source paths in the binary's data, so two clones at different
# paths built different binaries, and the fixed-seed gate then took different paths
# (measured: a longer clone path gave 8075 features instead of 8177 in 30000 runs).
# One fuzz.sh at a time holds the link (flock).
stable="${LORAPROBE_FUZZ_SOURCE_LINK:-${TMPDIR:-/tmp}/loraprobe-fuzz-source}"
exec 9>"$stable.lock"
flock 9
ln -sfn "$repo" "$stable"
build="${LORAPROBE_FUZZ_BUILD_DIR:-$stable/build-fuzz}"

# The gate's pass: a fixed seed and a number of runs per target, sized so that all
# targets together run about 2 minutes of one core, about 60 s on an idle 2-core
# machine (the PTX target runs about 90 inputs/s, the SASS one 1300, the config one
# 15000, the journal one 10000, the tuned, manifest and protocol ones 7000 to 28000).
# The three slowest stop where their coverage has levelled off: measured at 3069741,
# the PTX target had 2141 of its 5000-run coverage of 2166 after 3000 runs, the SASS
# one 3295 of 3333 after 20000, the config one 3774 of 3793 after 200000.
gate_seed=48590
declare -A gate_runs=([config_fuzzer]=200000 [sass_fuzzer]=20000 [ptx_fuzzer]=3000 [journal_fuzzer]=20000 [report_fuzzer]=10000 [cubin_fuzzer]=30000 [cache_fuzzer]=100000 [tuned_fuzzer]=200000 [manifest_fuzzer]=100000 [protocol_fuzzer]=200000)
# The longest first, so that the two slots end together.
targets=(ptx_fuzzer sass_fuzzer config_fuzzer manifest_fuzzer protocol_fuzzer cubin_fuzzer tuned_fuzzer report_fuzzer cache_fuzzer journal_fuzzer)

mode=gate
explore_seconds=0
case "${1:-}" in
  "") ;;
  --explore)
    mode=explore
    explore_seconds="${2:-}"
    if ! [[ "$explore_seconds" =~ ^[1-9][0-9]*$ ]]; then
      echo "fuzz: --explore needs a number of seconds per target, got '${explore_seconds}'" >&2
      exit 2
    fi
    ;;
  *)
    echo "fuzz: usage: scripts/fuzz.sh [--explore SECONDS]" >&2
    exit 2
    ;;
esac

cxx="$(command -v clang++ || command -v clang++-14 || true)"
if [ -z "$cxx" ]; then
  echo "fuzz: clang++ is needed (Debian: clang, libclang-rt-14-dev); scripts/setup.sh installs it" >&2
  exit 3
fi
# A build folder configured through another path, of the source (an older fuzz.sh) or
# of the folder itself (a cmake run by hand in it records its real path, and the
# binaries then carry that path: measured, the report target's gate found 621 new
# inputs instead of 627): start again through the link.
if [ -f "$build/CMakeCache.txt" ] && ! { grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$stable" "$build/CMakeCache.txt" &&
                                         grep -qx "CMAKE_CACHEFILE_DIR:INTERNAL=$build" "$build/CMakeCache.txt"; }; then
  rm -rf "$build"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$stable" -B "$build" -G Ninja -DLORAPROBE_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# Address-space randomisation changes which paths the targets take (the iteration
# order of containers keyed by address, the allocator's layout), and so the coverage
# libFuzzer steers by: with the same seed, two runs found different inputs. The gate
# runs with it off (setarch -R, util-linux), which makes its runs repeat exactly.
# The environment's size moves the stack, and with it the pointer values the targets
# compare (a longer variable changed 9670 features into 9934), so the gate also runs
# in a fixed, minimal environment.
repeatable=(env -i PATH=/usr/bin:/bin LC_ALL=C)
if setarch "$(uname -m)" -R true 2>/dev/null; then
  repeatable+=(setarch "$(uname -m)" -R)
elif [ "$mode" = gate ]; then
  echo "fuzz: setarch -R is refused here: the gate's statistics may differ between runs" >&2
fi

# Options every run shares. -reload=0: never re-read the corpus folder on a timer (a
# wall-clock event that would make the gate's mutation order depend on machine speed).
common=(-timeout=60 -rss_limit_mb=2048 -max_len=65536 -reload=0 -print_final_stats=1)

# report TARGET LOG WHAT: prints the finding of a failed run and where its reproducer is.
report_finding() {
  echo "fuzz: $1 FOUND A BUG ($3); the log is $2, the reproducer crash-*/leak-*/timeout-* in $build:" >&2
  grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$2" | head -n 20 >&2
}

# stat LOG NAME: one libFuzzer final statistic.
stat() { grep -E "^stat::$2:" "$1" | awk '{print $2}' | tail -n 1; }

# run_target TARGET: one target's replay and fixed-seed pass (or its exploration); what
# it says goes to stdout and stderr, and it returns 1 on a finding.
run_target() {
  local target="$1" name committed corpus log runs inputs
  name="${target%_fuzzer}"
  committed="$repo/fuzz/corpus/$name"
  corpus="$build/corpus-$name"
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp "$committed/"* "$corpus/"
  if [ "$mode" = explore ]; then
    log="$build/$target.explore.log"
    echo "fuzz: $target: exploring for ${explore_seconds}s from a random seed"
    if (cd "$build" && "./fuzz/$target" "${common[@]}" -max_total_time="$explore_seconds" "$corpus" >"$log" 2>&1); then
      echo "fuzz: $target: $(stat "$log" number_of_executed_units) runs, $(stat "$log" new_units_added) new inputs" \
           "(in $corpus), no finding"
      return 0
    fi
    report_finding "$target" "$log" "exploring"
    return 1
  fi
  # 1. Replay: each committed input once, no mutation.
  log="$build/$target.replay.log"
  inputs=("$committed"/*)
  if (cd "$build" && "${repeatable[@]}" "./fuzz/$target" "${common[@]}" -runs=0 "${inputs[@]}" >"$log" 2>&1); then
    echo "fuzz: $target: replayed ${#inputs[@]} corpus inputs, no finding"
  else
    report_finding "$target" "$log" "replaying the committed corpus"
    return 1
  fi
  # 2. The fixed-seed, run-bounded pass.
  log="$build/$target.log"
  runs="${gate_runs[$target]}"
  if (cd "$build" && "${repeatable[@]}" "./fuzz/$target" "${common[@]}" -seed="$gate_seed" -runs="$runs" "$corpus" \
        >"$log" 2>&1); then
    echo "fuzz: $target: seed $gate_seed, $(stat "$log" number_of_executed_units) runs," \
         "$(stat "$log" new_units_added) new inputs, $(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1), no finding"
    return 0
  fi
  report_finding "$target" "$log" "seed $gate_seed"
  return 1
}

# Each target runs on one core: as many at once as there are cores, each into its own
# folder and log (the runs do not depend on each other, so the gate's result is the same
# however they overlap); what each said is printed in target order.
status=0
slots="$(nproc)"
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$slots" ]; do
    wait -n || true
  done
  rm -f "$build/$target.rc"
  { run_target "$target"; echo $? >"$build/$target.rc"; } >"$build/$target.said" 2>&1 &
done
wait
for target in "${targets[@]}"; do
  cat "$build/$target.said"
  if [ "$(cat "$build/$target.rc" 2>/dev/null)" != 0 ]; then
    status=1
  fi
done
exit $status
