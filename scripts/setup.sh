#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command that sets up a fresh machine for portbench: Debian packages, the export virtual
# environment (.venv), the CUDA 13.0 header/library tree for the harness (.deps/cuda-13.0), the
# CUDA >= 13.2 header tree cuTile Rust builds against, the pinned upstream TileGym package (the
# tilegym front end's kernels, installed without its torch/transformers dependencies), and the
# Rust exporter's crates.
# Idempotent: each step is skipped when its stamp matches the pinned inputs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DEPS="$ROOT/.deps"
mkdir -p "$DEPS"

log() { printf '[setup] %s\n' "$*"; }
stamp_ok() { [[ -f "$DEPS/$1.stamp" ]] && [[ "$(cat "$DEPS/$1.stamp")" == "$2" ]]; }
stamp_set() { printf '%s' "$2" > "$DEPS/$1.stamp"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

APT_PACKAGES=(build-essential cmake ninja-build pkg-config git libeigen3-dev libhdf5-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
  libclang-dev clang
  slurm-wlm   # slurmctld + slurmd for the sharded sweep test (tests/python/test_slurm.py)
  chromium)   # headless browser for the HTML report's layout test (tests/python/test_report_browser.py)

apt_step() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then log "Debian packages: present"; return; fi
  log "Debian packages: installing ${missing[*]}"
  local SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

venv_step() {
  local key; key="$(hash_of scripts/requirements-export.txt)"
  if [[ -x .venv/bin/python ]] && stamp_ok venv "$key"; then log "venv: up to date"; return; fi
  log "venv: installing pinned export toolchain (cuda-tile, tileiras 13.4, triton 3.6.0)"
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -r scripts/requirements-export.txt
  stamp_set venv "$key"
}

cuda13_step() {
  local key; key="$(hash_of scripts/requirements-cuda13.0.txt)"
  if stamp_ok cuda-13.0 "$key"; then log "CUDA 13.0 tree: up to date"; return; fi
  log "CUDA 13.0 tree: installing headers, CUPTI and NVRTC wheels into .deps/cuda-13.0"
  rm -rf "$DEPS/cuda-13.0"
  .venv/bin/python -m pip install -q --no-deps --target "$DEPS/cuda-13.0" -r scripts/requirements-cuda13.0.txt
  stamp_set cuda-13.0 "$key"
}

# NVIDIA's TileGym kernels, imported (never copied) by kernels/export/portbench_export/tilegym.
# --no-deps: its requirements pull torch, transformers and CUDA wheels that exporting does not use
# (the exporter runs tilegym's host wrappers under stand-ins).
TILEGYM_PIN="tilegym==1.5.1"

tilegym_step() {
  local have
  have="$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("tilegym"))' 2>/dev/null || true)"
  if [[ "$have" == "${TILEGYM_PIN#*==}" ]] && stamp_ok tilegym "$TILEGYM_PIN"; then log "tilegym: up to date"; return; fi
  log "tilegym: installing $TILEGYM_PIN (no dependencies)"
  .venv/bin/python -m pip install -q --no-deps "$TILEGYM_PIN"
  stamp_set tilegym "$TILEGYM_PIN"
}

rust_step() {
  [[ -f kernels/cutile_rust/Cargo.toml ]] || return 0
  local script=kernels/cutile_rust/setup.sh
  if [[ -f "$script" ]]; then bash "$script"; fi
}

apt_step
venv_step
cuda13_step
tilegym_step
rust_step
log "done"
