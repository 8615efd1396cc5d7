#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints every test the last ctest run skipped, each with its own reason (the message the test
# gave GTEST_SKIP), from BUILD_DIR/Testing/Temporary/LastTest.log: ctest itself only says
# "Skipped". Exit 0; no output when nothing was skipped.
#
#   scripts/ctest_skips.sh build/ci-cpu
set -euo pipefail
LOG="${1:?usage: $0 BUILD_DIR}/Testing/Temporary/LastTest.log"
[[ -f "$LOG" ]] || { echo "ctest_skips: $LOG: no ctest log (run ctest first)" >&2; exit 2; }
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $3; reason = ""; next }
  /: Skipped$/ { getline reason; next }
  /^Skip regular expression found in output/ {
    printf "skipped: %s: %s\n", name, (reason == "" ? "(no reason given)" : reason)
  }
' "$LOG"
