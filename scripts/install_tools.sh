#!/usr/bin/env bash
# Installs the NVIDIA command-line tools that the static SASS inspection needs
# into the project-local folder .tools/ (or $LP_TOOLS_DIR), from PyPI wheels:
#
#   .tools/nvdisasm/nvdisasm          nvdisasm from nvidia-cuda-nvdisasm, used when
#                                     the CUDA toolkit has none (src/sass/nvdisasm.cpp)
#   .tools/ptxas/<version>/ptxas      ptxas from nvidia-cuda-nvcc(-cu12) at each
#                                     version of the matrix below (issue 5)
#   .tools/triton-ptxas/<triton>/     the ptxas (and ptxas-blackwell) bundled in the
#                                     Triton wheel of each embedded kernel set: what
#                                     `--compiler ptxas=triton` runs (not by default:
#                                     four wheels of about 200 MB; ask for triton-ptxas)
#
# Usage: scripts/install_tools.sh [nvdisasm] [ptxas] [ptxas=VERSION ...] [triton-ptxas] [triton-ptxas=VERSION ...]
#   no argument installs nvdisasm and every ptxas of the matrix.
# Idempotent: a tool that is already there and answers --version is left alone, so
# a second run downloads nothing. Nothing is installed outside the tools folder.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${LP_TOOLS_DIR:-$root/.tools}"
python="${PYTHON:-python3}"

# Pinned, so that two machines that ran this script disassemble and compile alike.
nvdisasm_version="13.5.37"
# The ptxas matrix: one 12.x besides Triton's bundled 12.8 (12.9), 13.0 (the
# toolkit's here), and the newest patch of every 13.x minor published so far.
# Upstream reports the hazard fixed in 13.3, so the matrix straddles it.
ptxas_versions=(12.8.93 12.9.86 13.0.88 13.1.115 13.2.86 13.3.73 13.4.92 13.5.37)

log() { printf 'install_tools: %s\n' "$*" >&2; }

# pip_into DIR SPEC: pip-installs one wheel, without its dependencies (we only
# want the binaries inside it), into DIR.
pip_into() {
  local dir="$1" spec="$2"
  PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --no-input \
    --no-deps --no-compile --target "$dir" "$spec"
}

# works BINARY: true when BINARY exists and prints its version.
works() { [[ -x "$1" ]] && "$1" --version >/dev/null 2>&1; }

install_nvdisasm() {
  local stable="$tools/nvdisasm/nvdisasm"
  if works "$stable"; then
    log "nvdisasm already installed: $stable"
    return
  fi
  local pydir="$tools/nvdisasm-py"
  rm -rf "$pydir"
  log "installing nvidia-cuda-nvdisasm==$nvdisasm_version into $pydir"
  pip_into "$pydir" "nvidia-cuda-nvdisasm==$nvdisasm_version"
  local found
  found="$(find "$pydir" -type f -name nvdisasm -path '*/bin/*' | head -n 1)"
  if [[ -z "$found" ]]; then
    log "no bin/nvdisasm inside nvidia-cuda-nvdisasm==$nvdisasm_version"
    exit 1
  fi
  mkdir -p "$tools/nvdisasm"
  # A relative symlink keeps the wheel's layout intact and survives moving the
  # checkout; the stable path is what the C++ side looks for.
  ln -sfn "../nvdisasm-py/${found#"$pydir"/}" "$stable"
  chmod +x "$found"
  works "$stable" || { log "$stable does not run"; exit 1; }
  log "nvdisasm: $("$stable" --version | tail -n 1)"
}

# The package that carries ptxas at VERSION: 12.x lives in nvidia-cuda-nvcc-cu12,
# 13.x in nvidia-cuda-nvcc.
nvcc_package() {
  case "$1" in
    12.*) echo "nvidia-cuda-nvcc-cu12" ;;
    *) echo "nvidia-cuda-nvcc" ;;
  esac
}

install_ptxas() {
  local version="$1"
  local dest="$tools/ptxas/$version/ptxas"
  if works "$dest"; then
    log "ptxas $version already installed: $dest"
    return
  fi
  local pkg staging
  pkg="$(nvcc_package "$version")"
  staging="$tools/ptxas-py/$version"
  rm -rf "$staging"
  log "installing $pkg==$version (for its ptxas)"
  pip_into "$staging" "$pkg==$version"
  local found
  found="$(find "$staging" -type f -name ptxas -path '*/bin/*' | head -n 1)"
  if [[ -z "$found" ]]; then
    log "no bin/ptxas inside $pkg==$version"
    exit 1
  fi
  mkdir -p "$(dirname "$dest")"
  # ptxas is self-contained; copy it and drop the rest of the wheel (nvcc, crt
  # headers, libnvvm: hundreds of MiB we never run).
  cp "$found" "$dest.tmp"
  chmod +x "$dest.tmp"
  mv "$dest.tmp" "$dest"
  rm -rf "$staging"
  rmdir "$tools/ptxas-py" 2>/dev/null || true
  works "$dest" || { log "$dest does not run"; exit 1; }
  log "ptxas $version: $("$dest" --version | tail -n 1)"
}

# install_triton_ptxas VERSION: the bin/ptxas* of the Triton VERSION wheel, taken
# from .tools/triton/VERSION when scripts/gen_kernels.py --triton installed it there,
# else from the wheel pip downloads (only those members are extracted).
install_triton_ptxas() {
  local version="$1" dest="$tools/triton-ptxas/$1"
  if works "$dest/ptxas"; then
    log "Triton $version's ptxas already installed: $dest"
    return
  fi
  mkdir -p "$dest"
  local bin="$tools/triton/$version/triton/backends/nvidia/bin"
  if [[ -x "$bin/ptxas" ]]; then
    local name
    for name in ptxas ptxas-blackwell; do
      if [[ -x "$bin/$name" ]]; then cp "$bin/$name" "$dest/$name.tmp" && mv "$dest/$name.tmp" "$dest/$name"; fi
    done
  else
    local staging="$tools/triton-ptxas/.download-$version"
    rm -rf "$staging"
    log "downloading triton==$version (for its bundled ptxas)"
    PIP_ROOT_USER_ACTION=ignore "$python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
      --dest "$staging" "triton==$version"
    "$python" - "$staging" "$dest" <<'PY'
import glob, os, sys, zipfile
staging, dest = sys.argv[1:]
wheel = glob.glob(os.path.join(staging, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for name in ("ptxas", "ptxas-blackwell"):
        member = f"triton/backends/nvidia/bin/{name}"
        if member in z.namelist():
            with z.open(member) as src, open(os.path.join(dest, name), "wb") as out:
                out.write(src.read())
            os.chmod(os.path.join(dest, name), 0o755)
PY
    rm -rf "$staging"
  fi
  works "$dest/ptxas" || { log "$dest/ptxas does not run"; exit 1; }
  log "Triton $version's ptxas: $("$dest/ptxas" --version | tail -n 1)$([[ -x "$dest/ptxas-blackwell" ]] && printf '; ptxas-blackwell: %s' "$("$dest/ptxas-blackwell" --version | tail -n 1)")"
}

# The Triton versions of the embedded kernel sets (kernels/sets/triton-<version>).
triton_versions() {
  local d
  for d in "$root"/kernels/sets/triton-*; do
    [[ -d "$d" ]] && basename "$d" | sed 's/^triton-//'
  done
}

main() {
  mkdir -p "$tools"
  if [[ $# -eq 0 ]]; then
    set -- nvdisasm ptxas
  fi
  local arg
  for arg in "$@"; do
    case "$arg" in
      nvdisasm) install_nvdisasm ;;
      ptxas)
        local v
        for v in "${ptxas_versions[@]}"; do install_ptxas "$v"; done
        ;;
      ptxas=*) install_ptxas "${arg#ptxas=}" ;;
      triton-ptxas)
        local t
        for t in $(triton_versions); do install_triton_ptxas "$t"; done
        ;;
      triton-ptxas=*) install_triton_ptxas "${arg#triton-ptxas=}" ;;
      *)
        log "unknown argument '$arg' (expected nvdisasm, ptxas, ptxas=VERSION, triton-ptxas or triton-ptxas=VERSION)"
        exit 2
        ;;
    esac
  done
}

main "$@"
