#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up the cuTile Rust exporter; scripts/setup.sh calls it after the venv step.
#  1. A CUDA 13.4 header tree for cuda-bindings (cuda.h, curand.h and the crt headers they
#     include) from PyPI wheels into .deps/cuda-13.4, with the venv's pip.
#  2. cargo build --release --locked of portbench-cutile-rust-export (crates.io).
# Idempotent: each step is skipped when its stamp matches its inputs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEPS="$ROOT/.deps"
PY="$ROOT/.venv/bin/python"
TREE="$DEPS/cuda-13.4"
# One CUDA 13.4 release (cuda-toolkit 13.4.3 pins curand 10.4.4.72 with runtime/crt 13.4.92).
HEADER_WHEELS=(nvidia-cuda-runtime==13.4.92 nvidia-cuda-crt==13.4.92 nvidia-curand==10.4.4.72)

log() { printf '[setup:cutile_rust] %s\n' "$*"; }
stamp_ok() { [[ -f "$DEPS/$1.stamp" ]] && [[ "$(cat "$DEPS/$1.stamp")" == "$2" ]]; }
stamp_set() { printf '%s' "$2" > "$DEPS/$1.stamp"; }
mkdir -p "$DEPS"

headers_step() {
  local key; key="$(printf '%s\n' "${HEADER_WHEELS[@]}" | sha256sum | cut -c1-16)"
  if stamp_ok cutile-rust-headers "$key" && [[ -f "$TREE/nvidia/cu13/include/cuda.h" ]] \
      && [[ -f "$TREE/nvidia/cu13/include/curand.h" ]]; then
    log "CUDA 13.4 header tree: up to date"; return
  fi
  [[ -x "$PY" ]] || { log "error: $PY missing; run scripts/setup.sh (it creates the venv first)"; exit 1; }
  log "CUDA 13.4 header tree: installing ${HEADER_WHEELS[*]} into .deps/cuda-13.4"
  rm -rf "$TREE"
  "$PY" -m pip install -q --no-deps --target "$TREE" "${HEADER_WHEELS[@]}"
  grep -q '^#define CUDA_VERSION 13040' "$TREE/nvidia/cu13/include/cuda.h" \
    || { log "error: $TREE/nvidia/cu13/include/cuda.h is not CUDA 13.4"; exit 1; }
  stamp_set cutile-rust-headers "$key"
}

build_step() {
  command -v cargo >/dev/null || { log "error: cargo not found (Rust >= 1.89 is needed)"; exit 1; }
  # shellcheck source=env.sh
  source "$HERE/env.sh"
  local bin="$HERE/target/release/portbench-cutile-rust-export"
  local key
  key="$( (cd "$HERE" && cat Cargo.toml Cargo.lock env.sh && find src examples -type f -name '*.rs' | sort | xargs cat \
          && cargo --version && rustc --version && printf '%s' "$CUDA_TOOLKIT_PATH") | sha256sum | cut -c1-16)"
  if [[ -x "$bin" ]] && stamp_ok cutile-rust-build "$key"; then
    log "exporter: up to date"; return
  fi
  log "exporter: cargo build --release (CARGO_BUILD_JOBS=$CARGO_BUILD_JOBS; several minutes the first time)"
  (cd "$HERE" && cargo build --release --locked --bin portbench-cutile-rust-export)
  stamp_set cutile-rust-build "$key"
}

headers_step
build_step
