#!/usr/bin/env bash
# CPU side of the race-control experiment: writes the PTX (gen_race_ptx.py),
# compiles each file with every given ptxas (Triton's options for sm_90a), and
# checks the SASS of every cubin with `loraprobe inspect --json`.
#
#   experiments/race-control/build_cubins.sh OUT_DIR PTXAS... [-- gen_race_ptx.py options]
#
# OUT_DIR/<ptxas version>/race-q<D>-d<DIST>.cubin, and OUT_DIR/inspect.json.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:?usage: build_cubins.sh OUT_DIR PTXAS... [-- gen options]}"
shift
ptxas_list=()
versions=()
while (($#)) && [ "$1" != "--" ]; do ptxas_list+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
((${#ptxas_list[@]})) || { echo "build_cubins.sh: name at least one ptxas" >&2; exit 2; }
loraprobe="${LORAPROBE:-$repo/build/loraprobe}"

rm -rf "$out" && mkdir -p "$out/ptx"
python3 "$repo/kernels/race/gen_race_ptx.py" "$out/ptx" "$@"
for ptxas in "${ptxas_list[@]}"; do
  version="$("$ptxas" --version | sed -n 's/.*V\([0-9][0-9.]*\).*/\1/p' | tail -n 1)"
  [ -n "$version" ] || { echo "build_cubins.sh: $ptxas --version names no version" >&2; exit 3; }
  mkdir -p "$out/$version"
  for ptx in "$out"/ptx/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    # The options Triton 3.6 passes for sm_90a (kernels/README.md), warnings kept in a log.
    "$ptxas" -lineinfo -v --gpu-name=sm_90a "$ptx" -o "$out/$version/$name.cubin" >"$out/$version/$name.log" 2>&1
  done
  echo "build_cubins.sh: ptxas $version: $(ls "$out/$version"/*.cubin | wc -l) cubins," \
       "$(grep -l C7513 "$out/$version"/*.log | wc -l) serialised by ptxas (warning C7513)"
  versions+=("$out/$version")
done
# Exit 1 from inspect means "a hazard was found", which is the point of most of these kernels.
"$loraprobe" inspect --json "${versions[@]}" > "$out/inspect.json" || [ $? -eq 1 ]
python3 "$here/describe_cubins.py" "$out"
