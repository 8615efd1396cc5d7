# SPDX-License-Identifier: Apache-2.0
# Source this file (bash) for the environment the cuTile Rust exporter is built and run with:
#   source kernels/cutile_rust/env.sh && (cd kernels/cutile_rust && cargo test)
# Builds must all see the same CUDA_TOOLKIT_PATH, or cuda-bindings' build script reruns.
_pb_cr_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
_pb_root="$(cd "$_pb_cr_here/../.." && pwd)"

# CUDA >= 13.2 headers (cuda.h, curand.h) for cuda-bindings' bindgen, from pip wheels
# (setup.sh installs them). Never the harness's CUDA 13.0 tree.
export CUDA_TOOLKIT_PATH="$_pb_root/.deps/cuda-13.4/nvidia/cu13"

# tileiras 13.4 from the project venv (scripts/requirements-export.txt).
if [[ -z "${CUTILE_TILEIRAS_PATH:-}" ]]; then
  for _pb_t in "$_pb_root"/.venv/lib/python3*/site-packages/nvidia/cu13/bin/tileiras; do
    [[ -x "$_pb_t" ]] && export CUTILE_TILEIRAS_PATH="$_pb_t"
  done
fi

# Two cores on the project's machines.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
unset _pb_cr_here _pb_root _pb_t
