#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Verdict literals are defined once, in harness/base/include/portbench/verdicts.hpp. This fails
# (exit 1, naming file:line) when harness/, reference/ or agent/ defines an upper-case string constant
# elsewhere, or spells one of the header's literals as a bare string instead of naming it.
# Prints the count of definitions per file. ctest runs it as unit.lint.verdict_literals.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
HEADER=harness/base/include/portbench/verdicts.hpp
[[ -f "$HEADER" ]] || { echo "check_verdict_literals: $HEADER missing" >&2; exit 2; }

# Definitions: a constexpr whose value is an upper-case literal such as "PASS" or "INVALID_X".
DEF='constexpr[^;=]*=[[:space:]]*"[A-Z][A-Z0-9_]*"'
echo "verdict literal definitions per file:"
grep -rcE "$DEF" harness reference agent --include='*.hpp' --include='*.cpp' | grep -v ':0$' | sed 's/^/  /'
status=0
if elsewhere=$(grep -rnE "$DEF" harness reference agent --include='*.hpp' --include='*.cpp' | grep -v "^$HEADER:"); then
  echo "verdict literals defined outside $HEADER:" >&2
  echo "$elsewhere" >&2
  status=1
fi

# Bare uses: any of the header's literals written as a string in code (comments excepted).
words=$(grep -oE "$DEF" "$HEADER" | grep -oE '"[A-Z0-9_]+"' | sort -u | paste -sd'|')
# The code part of each line only: what follows "//" is a comment.
if bare=$(grep -rnE "($words)" harness reference agent --include='*.hpp' --include='*.cpp' \
            | grep -v "^$HEADER:" \
            | awk -v re="($words)" '{ line = $0; sub(/^[^:]+:[0-9]+:/, "", line); sub(/\/\/.*/, "", line);
                                      if (line ~ re) print }'); [[ -n "$bare" ]]; then
  echo "verdict literals spelled out instead of named (portbench/verdicts.hpp):" >&2
  echo "$bare" >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "ok: every verdict literal is defined once, in $HEADER"
exit $status
