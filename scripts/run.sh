#!/usr/bin/env bash
# Sets up and builds loraprobe, then runs the main job on the embedded default config:
# on a host with a Hopper GPU the sweep itself; elsewhere the most useful thing that
# needs no GPU, saying why: the static SASS inspection of the embedded kernel set.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo/scripts/setup.sh"
lp="${LORAPROBE_BUILD_DIR:-$repo/build}/loraprobe"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  exec "$lp" sweep
fi
echo "run: no NVIDIA GPU on this host, so the sweep cannot run; its plan is:"
plan="$("$lp" sweep --dry-run)"  # captured whole: a pipe into head would SIGPIPE it under pipefail
echo "${plan%%$'\n'*}"
echo "run: executing that plan needs a Hopper (sm_90) GPU: run 'build/loraprobe sweep' there."
echo "run: what needs no GPU is the static check of the SASS the sweep would load. The race never"
echo "run: shows at run time on a full-rate Hopper part, but the cubins prove it: inspecting every"
echo "run: prebuilt cubin of the embedded set (the ones Triton 3.6's bundled ptxas built, which the"
echo "run: sweep loads by default) for HGMMA A registers reused while the HGMMA is in flight."
echo "run: Only the prebuilt compiler: 'loraprobe inspect' also recompiles every variant with the"
echo "run: toolkit's ptxas (nearly twice the time), '--ptxas-matrix' compares ptxas versions. A first"
echo "run: run takes minutes (3 to 7 on 2 cores); reports are cached (\$XDG_CACHE_HOME or"
echo "run: ~/.cache/loraprobe), so the next one takes seconds."
status=0
"$lp" inspect --compilers prebuilt --hazards-only || status=$?
if [ "$status" -eq 1 ]; then
  # The embedded set reproduces the bug on purpose: finding the hazard is the expected outcome
  # of this demonstration, not a failure of run.sh. Gates call 'loraprobe inspect' directly.
  echo "run: the listed cubins have the wgmma register hazard: LATENT on a GPU that does not show it"
  echo "run: at run time ('loraprobe inspect' itself exits 1 for them, the CI-gate contract)."
  status=0
fi
exit "$status"
