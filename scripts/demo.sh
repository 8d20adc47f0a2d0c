#!/usr/bin/env bash
# The main job, locally: provision dockerd, a dev OpenBao and the test tenancy serving the
# two-service bundle in docs/demo-bundle, run ONE tick of the agent, and show what converged.
#   scripts/demo.sh          the tick over the `system` transport (plain TCP to 127.0.0.1)
#   scripts/demo.sh --mesh   a quickstart OpenZiti network too (controller + edge router); tenancy
#                            and OpenBao become Ziti services, and the tick dials them by name
#                            through the embedded SDK (the default `sdk` transport)
#   scripts/demo.sh down     stop the stack, the app and the demo's Ziti network
set -euo pipefail
cd "$(dirname "$0")/.."
export MONKY_CACHE="${MONKY_CACHE:-/var/cache/monky-deployd-dev}"
export PATH="$MONKY_CACHE/bin:$PATH" MONKY_BAO_BIN="$MONKY_CACHE/bin/bao"
DIR="${MONKY_DEMO_DIR:-/tmp/monky-demo}"
T="${CARGO_TARGET_DIR:-target}"
# the demo's own network, on ports of its own (the test suites use 1280/3022)
ZNET="${MONKY_DEMO_ZITI_DIR:-/tmp/monky-demo-ziti}"
export ZITI_CTRL_PORT="${ZITI_CTRL_PORT:-1380}" ZITI_ROUTER_PORT="${ZITI_ROUTER_PORT:-3122}"
stop() {
  if [ -f "$DIR/stack.pid" ]; then kill "$(cat "$DIR/stack.pid")" 2>/dev/null || true; rm -f "$DIR/stack.pid"; fi
  docker compose -p monky-demo-01 down -v --remove-orphans >/dev/null 2>&1 || true
}
MESH=0
case "${1:-}" in
  down) stop; [ -d "$ZNET" ] && bash scripts/ziti-net.sh stop "$ZNET" >/dev/null 2>&1; echo "demo stopped"; exit 0 ;;
  --mesh) MESH=1 ;;
  "") ;;
  *) echo "usage: $0 [--mesh|down]" >&2; exit 2 ;;
esac

T0=$(date +%s)
phase() { echo "== [$(( $(date +%s) - T0 ))s] $*"; }
ZITI_PIN=v1.6.0 # scripts/provision.sh's ZITI_VERSION
if [ "$MESH" = 1 ]; then
  if "$MONKY_CACHE/bin/ziti" version 2>/dev/null | grep -qx "$ZITI_PIN"; then
    phase "--mesh: the ziti CLI $ZITI_PIN is already built; the agent is built with the vendored OpenZiti C SDK (about 30 CPU seconds more than the plain demo's first build)"
  else
    phase "--mesh: the ziti CLI $ZITI_PIN is built from source with Go first: about 8 min on 2 cores (7 m 56 s measured, docs/ZITI.md), once; then the agent with the vendored OpenZiti C SDK. Without --mesh the demo needs neither."
  fi
  bash scripts/provision.sh mesh
else
  bash scripts/provision.sh demo
fi
bash scripts/services.sh
# The plain demo speaks the `system` transport: it builds without the vendored OpenZiti C SDK.
# One cargo run for both binaries in the `demo` profile (no debug info, dependencies
# unoptimised: Cargo.toml), its progress shown: a first build is most of the demo's time.
FEATURES=(--no-default-features)
[ "$MESH" = 1 ] && FEATURES=()
phase "building monky-deployd$([ "$MESH" = 1 ] || echo ' (no Ziti SDK)') and the test stack: a first build is about 90 CPU seconds (1 min on 2 idle cores, docs/bench/demo.md), later ones seconds"
cargo build --profile demo "${FEATURES[@]}" -p monky-deployd -p monky-test-tenancy --bin monky-deployd --bin monky-test-stack
phase "built"
stop; rm -rf "$DIR"; mkdir -p "$DIR"
"$T/demo/monky-test-stack" --dir "$DIR" --bundle docs/demo-bundle --env demo-01 >"$DIR/stack.log" 2>&1 &
echo $! >"$DIR/stack.pid"
for _ in $(seq 1 100); do grep -q "monky-test-stack ready" "$DIR/stack.log" 2>/dev/null && break; sleep 0.2; done
grep -q "monky-test-stack ready" "$DIR/stack.log" || { cat "$DIR/stack.log"; exit 1; }

CFG="$DIR/config.yaml"
if [ "$MESH" = 1 ]; then
  echo "== a quickstart Ziti network in $ZNET (controller :$ZITI_CTRL_PORT, edge router :$ZITI_ROUTER_PORT)"
  bash scripts/ziti-net.sh start "$ZNET" >/dev/null
  read -r TPORT BPORT < <(python3 - "$CFG" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
print(re.search(r"^tenancy:\n  host: .*\n  port: (\d+)", t, re.M).group(1),
      re.search(r"^bao:\n  host: .*\n  port: (\d+)", t, re.M).group(1))
PY
)
  # tenancy and OpenBao as Ziti services hosted by the router; the box gets an identity that may
  # dial exactly those two
  bash scripts/ziti-net.sh service "$ZNET" monky.tenancy.deploy 127.0.0.1 "$TPORT" >/dev/null
  bash scripts/ziti-net.sh service "$ZNET" openbao 127.0.0.1 "$BPORT" >/dev/null
  bash scripts/ziti-net.sh identity "$ZNET" "demo-box-$$" "$DIR/identity.json" monky.tenancy.deploy openbao >/dev/null
  python3 - "$CFG" "$DIR/identity.json" <<'PY'
import sys
cfg, ident = sys.argv[1:]
s = open(cfg).read()
s = s.replace("transport: system\n", f"transport: sdk\nidentity: {ident}\n")
s = s.replace("tenancy:\n", "tenancy:\n  service: monky.tenancy.deploy\n", 1)
s = s.replace("bao:\n", "bao:\n  service: openbao\n", 1)
open(cfg, "w").write(s)
PY
fi
phase "one tick: $T/demo/monky-deployd --config $CFG run --once"
rc=0; "$T/demo/monky-deployd" --config "$CFG" run --once || rc=$?
echo "== exit code: $rc"
echo "== transport that carried it: $("$T/demo/monky-deployd" --config "$CFG" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["transport_detail"])')"
echo "== monky-deployd status"
"$T/demo/monky-deployd" --config "$CFG" status
echo "== the app: curl http://127.0.0.1:18080/"
curl -fsS --max-time 5 http://127.0.0.1:18080/ && echo
echo "== what tenancy recorded (last report)"
# the stack flushes its records to disk a moment after it answers
for _ in $(seq 1 30); do [ -s "$DIR/reports.jsonl" ] && break; sleep 0.2; done
tail -n 1 "$DIR/reports.jsonl" 2>/dev/null || echo "(no report recorded)"
phase "done"
echo "(stack still running: tick again with the command above; stop it with: scripts/demo.sh down)"
exit "$rc"
