#!/usr/bin/env bash
# The routine before resolving anything that touches provisioning: the README's test command from
# a fresh machine state — a fresh clone of HEAD, an empty provisioning cache, an empty cargo
# target dir and empty Go, pip and cargo-registry caches (apt packages may stay) — and its wall
# time.
#   scripts/fresh-check.sh [WORKDIR]   (default: a new /tmp/monky-fresh.XXXXXX; kept afterwards)
# A warm cache once hid a failing step (0.4: the tlsuv check needed a release build that only
# earlier runs had left behind); this is how such a step is found before CI finds it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/monky-fresh.XXXXXX)}
mkdir -p "$work"
[ -z "$(ls -A "$work")" ] || { echo "fresh-check: $work is not empty" >&2; exit 2; }
git clone -q "$repo" "$work/repo"
# shared/ sits beside the project, as on CI
[ -e "$work/shared" ] || ln -s "$(cd "$repo/../shared" && pwd)" "$work/shared"
t0=$(date +%s)
rc=0
# The machine-wide caches a new machine lacks start empty too: Go's build and module caches
# (the ziti CLI and compose v5 builds), pip's, and cargo's registry (CARGO_HOME; the toolchain
# stays in RUSTUP_HOME).
mkdir -p "$work/home/cargo"
(cd "$work/repo" && env -u CARGO_TARGET_DIR MONKY_CACHE="$work/cache" CI=true \
  GOCACHE="$work/home/go-build" GOMODCACHE="$work/home/go-mod" PIP_CACHE_DIR="$work/home/pip" \
  CARGO_HOME="$work/home/cargo" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" PATH="$HOME/.cargo/bin:$PATH" \
  bash .ci/run) >"$work/run.log" 2>&1 || rc=$?
t=$(( $(date +%s) - t0 ))
tail -n 5 "$work/run.log"
grep -E '^== step ' "$work/run.log" || true
printf 'fresh-check: %s at %s: exit %s after %d min %02d s (log: %s)\n' \
  "$(git -C "$work/repo" rev-parse --short HEAD)" "$work" "$rc" $((t / 60)) $((t % 60)) "$work/run.log"
exit "$rc"
