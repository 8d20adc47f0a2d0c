#!/usr/bin/env bash
# The main job, locally: provision dockerd, a dev OpenBao and the test tenancy serving the
# two-service bundle in docs/demo-bundle, run ONE tick of the agent over the `system`
# transport, and show what converged. `scripts/demo.sh down` stops the stack and the backend.
set -euo pipefail
cd "$(dirname "$0")/.."
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
export ZITI_SDK_DIR="${ZITI_SDK_DIR:-$MONKY_CACHE/libziti}"
DIR="${MONKY_DEMO_DIR:-/tmp/monky-demo}"
stop() {
  if [ -f "$DIR/stack.pid" ]; then kill "$(cat "$DIR/stack.pid")" 2>/dev/null || true; rm -f "$DIR/stack.pid"; fi
  docker compose -p monky-demo-01 down -v --remove-orphans >/dev/null 2>&1 || true
}
if [ "${1:-}" = down ]; then stop; echo "demo stopped"; exit 0; fi

bash scripts/provision.sh
bash scripts/services.sh
cargo build -q --bin monky-deployd && cargo build -q -p monky-test-tenancy --bin monky-test-stack
stop; rm -rf "$DIR"; mkdir -p "$DIR"
target/debug/monky-test-stack --dir "$DIR" --bundle docs/demo-bundle --env demo-01 >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/stack.pid"
for _ in $(seq 1 100); do grep -q "monky-test-stack ready" "$DIR/stack.log" 2>/dev/null && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log"; exit 1; }

echo "== one tick: monky-deployd --config $DIR/config.yaml run --once"
rc=0; target/debug/monky-deployd --config "$DIR/config.yaml" run --once || rc=$?
echo "== exit code: $rc"
echo "== monky-deployd status"
target/debug/monky-deployd --config "$DIR/config.yaml" status
echo "== the app: curl http://127.0.0.1:18080/"
curl -fsS --max-time 5 http://127.0.0.1:18080/ && echo
echo "== what tenancy recorded (last report)"
# the stack flushes its records to disk a moment after it answers
for _ in $(seq 1 30); do [ -s "$DIR/reports.jsonl" ] && break; sleep 0.2; done
tail -n 1 "$DIR/reports.jsonl" 2>/dev/null || echo "(no report recorded)"
echo "(stack still running: tick again with the command above; stop it with: scripts/demo.sh down)"
exit "$rc"
