#!/usr/bin/env bash
# Measures the agent's own cost per tick on the local stack (system transport): one apply tick
# and N heartbeat ticks of the release binary. Wall time is split into the agent's part and the
# part spent waiting on docker/compose (pull, up, health), as the agent itself logs it; CPU and
# max RSS are the agent process alone (getrusage RUSAGE_SELF), never its compose children.
# Writes docs/bench/tick.md. Usage: scripts/bench-tick.sh [N heartbeats, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-20}"
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
bash scripts/provision.sh >/dev/null
bash scripts/services.sh >/dev/null
cargo build -q --release --bin monky-deployd
cargo build -q -p monky-test-tenancy --bin monky-test-stack
T="${CARGO_TARGET_DIR:-target}"
BIN="$T/release/monky-deployd"
DIR=$(mktemp -d /tmp/monky-bench.XXXXXX)
cleanup() { kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true; docker compose -p monky-bench-01 down -v >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
sed 's#monky/data/demo-01/#monky/data/bench-01/#' docs/demo-bundle/secrets.manifest.json >/dev/null
mkdir -p "$DIR/bundle"; cp docs/demo-bundle/* "$DIR/bundle/"
sed -i 's#monky/data/demo-01/#monky/data/bench-01/#; ' "$DIR/bundle/secrets.manifest.json"
sed -i 's#127.0.0.1:18080:8080#127.0.0.1:18081:8080#' "$DIR/bundle/compose.yaml"
"$T/debug/monky-test-stack" --dir "$DIR" --bundle "$DIR/bundle" --env bench-01 >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/pid"
for _ in $(seq 1 100); do grep -q "monky-test-stack ready" "$DIR/stack.log" && break; sleep 0.2; done
tick() { MONKY_LOG=monky=debug "$BIN" --config "$DIR/config.yaml" run --once 2>&1 | tee -a "$DIR/ticks.log" | grep 'tick cost' | sed -E 's/.*wall ([0-9]+) ms, of which docker\/compose ([0-9]+) ms; agent cpu ([0-9]+) ms; max rss ([0-9]+) KiB/\1 \2 \3 \4/'; }
apply=$(tick)
# the engine guard's own cost in that apply: requests it judged and time spent deciding them
read -r greq gus <<<"$(grep -o 'engine guard: [0-9]* requests, [0-9]* refused, [0-9]* µs' "$DIR/ticks.log" \
  | awk '{r += $3; u += $7} END {printf "%d %d", r, u}')"
hb=()
for _ in $(seq 1 "$N"); do hb+=("$(tick)"); done
stats() { # column index → "median max"
  printf '%s\n' "${hb[@]}" | awk -v c="$1" '{print $c}' | sort -n | awk '{a[NR]=$1} END {printf "%s %s", a[int((NR+1)/2)], a[NR]}'
}
read -r aw ad ac ar <<<"$apply"
mkdir -p docs/bench
{
  echo "# Tick cost (scripts/bench-tick.sh, $(date -u +%Y-%m-%d), $(nproc) cores, release build)"
  echo
  echo "Local stack, system transport over plain HTTP, compose $(docker compose version --short 2>/dev/null || echo '?'), demo bundle (2 services, 1 secret)."
  echo
  echo "| tick | wall total | waiting on docker/compose | agent's own wall | agent CPU | agent max RSS |"
  echo "|---|---|---|---|---|---|"
  echo "| apply (first, from bootstrap grant) | ${aw} ms | ${ad} ms | $((aw - ad)) ms | ${ac} ms | ${ar} KiB |"
  read -r wm wx <<<"$(stats 1)"; read -r cm cx <<<"$(stats 3)"; read -r rm rx <<<"$(stats 4)"
  echo "| heartbeat, median of $N (max) | ${wm} ms (${wx}) | 0 ms | ${wm} ms | ${cm} ms (${cx}) | ${rm} KiB (${rx}) |"
  echo
  echo "Engine guard during the apply (every compose call goes through it): ${greq} requests judged,"
  echo "$((gus / 1000)) ms spent deciding them (policy checks and the ownership look-ups they need),"
  echo "inside the agent's own wall time above. The heartbeat starts no compose, so no guard."
} >docs/bench/tick.md
cat docs/bench/tick.md
