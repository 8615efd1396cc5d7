#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuTile Rust exporter's tests (unit tests, and an export of the smoke suite checked against
# cuobjdump), run from the repository's test command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source ./env.sh
cargo test --release 2>&1
