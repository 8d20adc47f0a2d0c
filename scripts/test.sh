#!/usr/bin/env bash
# The project's test command: the fast tier first (scripts/fast.sh: unit and property tests, no
# C, no services, so a logic error fails in minutes), then provisions every real part (cached,
# idempotent), starts the services, and runs lint, the whole Rust suite and the packaging checks.
# Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$HOME/.cargo/bin:$PATH"
export MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
export CARGO_TERM_COLOR=never
# Build cache shared between runs and clones on this machine (dependencies compile once); a
# fresh machine builds from scratch. Override with CARGO_TARGET_DIR.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$MONKY_CACHE/target}"
t0=$(date +%s)
# the Ziti test networks the suites started are stopped however the run ends (state kept for
# the next run): a failed run must not leave a controller on the ports the next one needs
stop_ziti() {
  for d in target/ziti-net*; do
    if [ -d "$d" ]; then bash scripts/ziti-net.sh stop "$d" >/dev/null 2>&1 || true; fi
  done
}
STEP=start
T_STEP=$t0
# every exit names the step it ended in and how long each step took, so a failure is never silent
on_exit() {
  local rc=$?
  stop_ziti
  if [ "$rc" -ne 0 ]; then
    printf '\ntest.sh: FAILED in step "%s" (exit %s) after %ss; the lines above say why\n' \
      "$STEP" "$rc" "$(( $(date +%s) - t0 ))" >&2
  fi
}
trap on_exit EXIT
step() {
  local now; now=$(date +%s)
  [ "$STEP" = start ] || printf '== step "%s" took %ss\n' "$STEP" "$(( now - T_STEP ))"
  STEP="$*"; T_STEP=$now
  printf '\n== %s (+%ss)\n' "$*" "$(( now - t0 ))"
}

step "fast tier (scripts/fast.sh)"
bash scripts/fast.sh
step provision
bash scripts/provision.sh
step services
bash scripts/services.sh
step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "cargo test"
# docker-bound tests mostly wait on containers, so more threads than cores is fine
# the output is kept: a failure's panic message sits mid-log, far above the end a CI viewer shows,
# so the failing tests' own sections are printed again last
test_log=$(mktemp /tmp/monky-cargo-test.XXXXXX.log)
set +e
cargo test --workspace --no-fail-fast -- --test-threads "${MONKY_TEST_THREADS:-4}" 2>&1 | tee "$test_log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  bash scripts/test-failures.sh "$test_log" >&2 || true
  exit "$rc"
fi
rm -f "$test_log"
if [ "${MONKY_RELEASE_MATRIX:-0}" = 1 ]; then
  # the release matrix (scripts/release-matrix.sh): compose v1 and v2 of the scenarios the test
  # command runs on v5 only (tests/common/mod.rs, one_compose!); the soaks stay out
  step "release matrix: one_compose! scenarios on compose v1 and v2"
  cargo test --test real -- --ignored compose_v --test-threads "${MONKY_TEST_THREADS:-4}"
fi
# the binary those tests ran has its test hooks (the dev-dependency on this package turns them on;
# packaging/tests/run.sh checks that the release binary has none)
"$CARGO_TARGET_DIR/debug/monky-deployd" version | grep -q '; test-hooks)' \
  || { echo "the test build of monky-deployd has no test hooks (Cargo.toml dev-dependencies)" >&2; exit 1; }
step "ziti-sys build modes (prebuilt SDK, no SDK)"
bash scripts/check-sdk-modes.sh
step "vendored tlsuv: kept-alive connection follows a URL change (patch tlsuv-0001)"
bash scripts/check-tlsuv-keepalive.sh
step "packaging checks"
bash packaging/tests/run.sh
step "real systemd: the .deb in a booted Debian 12 (systemd-nspawn)"
bash packaging/tests/booted_tests.sh
step "done"
