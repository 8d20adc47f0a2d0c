# shellcheck shell=bash
# The counted checks of the packaging suites (sourced by run.sh and booted_tests.sh, which set
# START, PASS, FAIL, FINISHED, LOG and TALLY_NAME). Closes with `N passed, M failed`.

# check NAME CMD...: one counted check. Output goes to the log; a failure prints its tail.
check() {
  local name=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  printf '=== %s (rc=%s)\n%s\n' "$name" "$rc" "$out" >>"$LOG"
  if [ "$rc" -eq 0 ]; then
    PASS=$((PASS + 1))
    printf 'ok    %s\n' "$name"
  else
    FAIL=$((FAIL + 1))
    printf 'FAIL  %s\n' "$name"
    printf '%s\n' "$out" | tail -n 30 | sed 's/^/      | /'
  fi
}
# finish: the closing tally; exits 0 only when nothing failed.
finish() {
  # shellcheck disable=SC2034 # read by the sourcing script's EXIT trap
  FINISHED=1
  printf '%s took %ss\n' "$TALLY_NAME" "$(($(date +%s) - START))"
  printf '%s passed, %s failed\n' "$PASS" "$FAIL"
  [ "$FAIL" -eq 0 ] && exit 0
  exit 1
}
section() { printf '== %s (+%ss)\n' "$*" "$(($(date +%s) - START))"; }
# expect_eq WHAT GOT WANT
expect_eq() { if [ "$2" = "$3" ]; then return 0; fi; printf '%s: got [%s], want [%s]\n' "$1" "$2" "$3"; return 1; }
