#!/usr/bin/env bash
# Prints the failing tests' sections of a `cargo test` log (their captured output and panic
# message), each cut to its last lines, so the reason for a failure is at the end of the run.
# Usage: scripts/test-failures.sh LOG [LINES_PER_TEST]
set -euo pipefail
log=$1
keep=${2:-80}
printf '\n== the failing tests, again (from %s) ==\n' "$log"
# a section runs from "---- name stdout ----" to the next such header or the "failures:" list
awk -v keep="$keep" '
  function flush() {
    if (name == "") return
    printf "\n---- %s ----\n", name
    if (n > keep) printf "[... %d earlier lines cut ...]\n", n - keep
    for (i = (n > keep ? n - keep + 1 : 1); i <= n; i++) print buf[i]
    name = ""; n = 0
  }
  /^---- .* stdout ----$/ { flush(); name = $2; next }
  name != "" && /^failures:$/ { flush(); next }
  name != "" { buf[++n] = $0 }
  END { flush() }
' "$log"
grep -E '^test result: FAILED|^error: [0-9]+ targets? failed' "$log" || true
