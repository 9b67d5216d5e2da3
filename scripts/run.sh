#!/usr/bin/env bash
# Sets up and builds loraprobe, then runs the main job on the embedded default config:
# on a host with a Hopper GPU the sweep itself; elsewhere the most useful thing that
# needs no GPU, saying why.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo/scripts/setup.sh"
lp="${LORAPROBE_BUILD_DIR:-$repo/build}/loraprobe"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  exec "$lp" sweep
fi
echo "run: no NVIDIA GPU on this host: printing the default sweep plan instead of running it."
"$lp" sweep --dry-run
echo "run: executing this plan needs a Hopper (sm_90) GPU: run 'build/loraprobe sweep' there."
