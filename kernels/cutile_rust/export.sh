#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kernels/cutile_rust/export.sh SUITE OUTDIR [--target FILE] [--tuning FILE]
# Writes OUTDIR/<operator>/manifest.json (+ cubins, Tile IR text) for every configuration of
# SUITE whose operator the cuTile Rust front end has (plan::OPERATORS). OUTDIR is the
# front end's bundle folder, e.g. bundles/cutile_rust. No GPU needed. The target GPU comes from
# --target, else $PORTBENCH_TARGET, else configs/targets/h200.json; --tuning names a tuning
# record (configs/tuning/cutile_rust-<target>.json) whose variant choices replace the defaults.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 2 ]]; then
  echo "usage: $0 SUITE OUTDIR [--target FILE] [--tuning FILE]" >&2
  exit 2
fi
# Quick when everything is in place; builds the exporter otherwise.
bash "$HERE/setup.sh" >&2
# shellcheck source=env.sh
source "$HERE/env.sh"
[[ -n "${CUTILE_TILEIRAS_PATH:-}" ]] || { echo "tileiras not found: run scripts/setup.sh" >&2; exit 1; }
suite="$1" out="$2"
shift 2
exec "$HERE/target/release/portbench-cutile-rust-export" --suite "$suite" --out "$out" --tileiras "$CUTILE_TILEIRAS_PATH" "$@"
